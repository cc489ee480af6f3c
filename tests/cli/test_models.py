"""``voxdesk models``: a real download from a loopback hub, cut mid-file, then offline use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hub_server import serve_model
from tests.random_whisper import random_whisper

pytestmark = pytest.mark.integration  # runs voxdesk models as a process

REPO = "Systran/faster-whisper-base.en"


def _voxdesk(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "voxdesk.cli.main", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=240, check=False)


def test_download_survives_a_cut_then_lists_loads_offline_and_removes(tmp_path: Path) -> None:
    folder = random_whisper("base.en")
    env = {**os.environ, "HF_HOME": str(tmp_path), "HF_HUB_DISABLE_XET": "1"}
    env.pop("HF_HUB_OFFLINE", None)
    with serve_model(REPO, folder, cut_after=100_000) as (url, record):
        env["HF_ENDPOINT"] = url
        done = _voxdesk(env, "models", "download", "base.en")
        assert done.returncode == 0, done.stderr
        assert record.cut_done
        unknown = _voxdesk(env, "models", "download", "someone/not-there")
        assert unknown.returncode == 1 and len(unknown.stderr.strip().splitlines()) == 1
    snapshot = Path(done.stdout.split(": ", 1)[1].strip())
    assert (snapshot / "model.bin").read_bytes() == (folder / "model.bin").read_bytes()
    again = _voxdesk(env, "models", "download", "base.en")  # server gone: from the cache only
    assert again.returncode == 0, again.stderr
    listed = _voxdesk(env, "models", "list")
    assert "base.en" in listed.stdout and "English-only" in listed.stdout
    removed = _voxdesk(env, "models", "remove", "base.en")
    assert removed.returncode == 0 and not snapshot.exists()
