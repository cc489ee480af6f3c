"""Downloading a Whisper model with the real huggingface_hub client from a loopback hub."""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import pytest
from tqdm import tqdm

from tests.hub_server import empty_hub_cache, serve_model, use_hub
from tests.random_whisper import random_whisper
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.whisper.catalog import model_choices
from voxdesk.engine.whisper.download import download_model

REPO = "Systran/faster-whisper-base.en"
CUT = 25_000_000
"""Past huggingface_hub's first 10 MiB chunks: bytes of a chunk cut part-way are not kept."""


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return empty_hub_cache(monkeypatch, tmp_path / "hub")


def _resumed_at(gets: list[tuple[str, str]]) -> list[int]:
    """The first byte each ranged GET asked for."""
    return [int(value[6:].split("-")[0]) for _, value in gets if value.startswith("bytes=")]


def test_progress_is_reported_and_a_cut_connection_resumes_where_it_stopped(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = random_whisper("base.en")
    reports: list[tuple[str, float]] = []
    with serve_model(REPO, folder, cut_after=CUT) as (url, record):
        use_hub(monkeypatch, url)
        snapshot = download_model("base.en", lambda line, done: reports.append((line, done)))
    assert record.cut_done
    resumed_at = _resumed_at(record.gets)
    assert len(resumed_at) == 1 and 0 < resumed_at[0] <= CUT  # the retry asked for the rest only
    assert (snapshot / "model.bin").read_bytes() == (folder / "model.bin").read_bytes()
    fractions = [done for _, done in reports]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)
    assert len(fractions) > 3
    size = tqdm.format_sizeof(sum(path.stat().st_size for path in folder.iterdir()), "B", 1024)
    assert reports[-1][0] == f"downloading Whisper base.en: 100% of {size}"


def test_a_network_gone_for_good_is_one_line_and_the_next_download_fetches_only_unfinished_files(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """huggingface_hub (2.x) retries a cut file from where it stopped while the network comes back
    within its retries; once it gives up, the unfinished file's bytes are dropped, not kept."""
    folder = random_whisper("base.en")
    with serve_model(REPO, folder, cut_after=CUT, down_after_cut=True) as (url, record):
        use_hub(monkeypatch, url)
        with pytest.raises(EngineUnavailable) as failed:
            download_model("base.en")
        assert len(str(failed.value).splitlines()) == 1
        assert str(failed.value).startswith("Whisper model 'base.en': download failed: ")
        assert not list(hub_cache.rglob("*.incomplete"))
        finished = set(record.sent)
        record.down, first_gets = False, len(record.gets)
        snapshot = download_model("base.en")
    fetched_again = {name for name, _ in record.gets[first_gets:]}
    assert "model.bin" in fetched_again and not fetched_again & finished
    for path in folder.iterdir():
        assert (snapshot / path.name).read_bytes() == path.read_bytes()


def test_a_full_disk_is_one_line(hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model file's temporary download file is a link to /dev/full, so the kernel answers ENOSPC.

    huggingface_hub names that file with a random uuid; the test fixes the uuid to know the name."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system to make a write fail with ENOSPC")
    folder = random_whisper("base.en")
    monkeypatch.setattr("huggingface_hub.file_download.uuid.uuid4", lambda: uuid.UUID(int=0))
    digest = hashlib.sha256((folder / "model.bin").read_bytes()).hexdigest()
    blobs = hub_cache / f"models--{REPO.replace('/', '--')}" / "blobs"
    blobs.mkdir(parents=True)
    (blobs / f"{digest}.00000000.incomplete").symlink_to("/dev/full")
    with serve_model(REPO, folder) as (url, _):
        use_hub(monkeypatch, url)
        with pytest.raises(EngineUnavailable) as failed:
            download_model("base.en")
    assert str(failed.value).startswith("Whisper model 'base.en': the disk is full")
    assert len(str(failed.value).splitlines()) == 1


def test_the_model_choices_say_what_is_on_disk(hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {choice.name: choice for choice in model_choices()}
    assert before["tiny.en"].downloaded and before["tiny.en"].label.endswith("bundled")
    assert not before["base.en"].downloaded and before["base.en"].label.endswith("download on first use")
    assert before["large-v3"].label == "large-v3 — 3.1 GB, multilingual, download on first use"
    assert not before["distil-large-v3"].multilingual and before["small"].multilingual
    folder = random_whisper("base.en")
    with serve_model(REPO, folder) as (url, _):
        use_hub(monkeypatch, url)
        download_model("base.en")
    after = {choice.name: choice for choice in model_choices()}
    assert after["base.en"].downloaded and after["base.en"].size >= (folder / "model.bin").stat().st_size
