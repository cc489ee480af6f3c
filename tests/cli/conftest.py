"""Fixtures of the command-line tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A private data and config directory, for this process and for ``voxdesk`` subprocesses."""
    env = {"VOXDESK_DATA_DIR": str(tmp_path / "data"), "VOXDESK_CONFIG_DIR": str(tmp_path / "config")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env
