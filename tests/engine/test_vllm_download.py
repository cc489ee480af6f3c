"""The vLLM engine's hub models downloaded with the real huggingface_hub client from a loopback hub
(no vLLM needed: the download comes before vLLM is handed the snapshot)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from tqdm import tqdm

from tests.hub_server import empty_hub_cache, serve_model, use_hub
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.vllm.download import model_files, resolve_vllm_model

REPO = "voxdesk-tests/tiny-voxtral"
CUT = 15_000_000
"""Past huggingface_hub's first 10 MiB chunk: bytes of a chunk cut part-way are not kept."""


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return empty_hub_cache(monkeypatch, tmp_path / "hub")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository with weights in both formats, as some Mistral repositories have (random bytes:
    the download does not read them)."""
    folder = tmp_path / "repository"
    folder.mkdir()
    (folder / "params.json").write_text('{"dim": 64}')
    (folder / "tekken.json").write_text('{"vocab": []}')
    (folder / "consolidated.safetensors").write_bytes(os.urandom(24_000_000))
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(os.urandom(1_000_000))
    return folder


def test_a_hub_model_downloads_with_progress_resumes_a_cut_and_then_comes_from_the_cache(
    hub_cache: Path, repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports: list[tuple[str, float]] = []
    with serve_model(REPO, repository, cut_after=CUT) as (url, record):
        use_hub(monkeypatch, url)
        snapshot = Path(resolve_vllm_model(REPO, "mistral", lambda line, done: reports.append((line, done))))
    assert snapshot.is_relative_to(hub_cache)
    assert sorted(path.name for path in snapshot.iterdir()) == [
        "config.json", "consolidated.safetensors", "params.json", "tekken.json",
    ]  # fmt: skip
    assert (snapshot / "consolidated.safetensors").read_bytes() == (
        repository / "consolidated.safetensors"
    ).read_bytes()
    resumed_at = [int(value[6:].split("-")[0]) for _, value in record.gets if value.startswith("bytes=")]
    assert record.cut_done and len(resumed_at) == 1 and 0 < resumed_at[0] <= CUT
    fractions = [done for _, done in reports]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0) and len(fractions) > 3
    size = tqdm.format_sizeof(sum(path.stat().st_size for path in snapshot.iterdir()), "B", 1024)
    assert reports[-1][0] == f"downloading {REPO}: 100% of {size}"
    use_hub(monkeypatch, f"http://127.0.0.1:{_closed_port()}")  # the cached model needs no hub
    assert resolve_vllm_model(REPO, "mistral", lambda line, done: reports.append((line, done))) == str(snapshot)
    assert fractions == [done for _, done in reports]


@pytest.mark.parametrize(
    ("load_format", "cached", "fetched"),
    [
        ("mistral", ["params.json"], ["consolidated.safetensors", "tekken.json", "config.json"]),
        (
            "auto",
            ["config.json", "model-00001-of-00002.safetensors"],
            ["model-00002-of-00002.safetensors", "params.json", "tekken.json"],
        ),
    ],
)
def test_a_model_partly_in_the_cache_fetches_the_rest(
    hub_cache: Path,
    repository: Path,
    monkeypatch: pytest.MonkeyPatch,
    load_format: str,
    cached: list[str],
    fetched: list[str],
) -> None:
    """As when vLLM's own download was stopped: the config (and a first shard) cached, the rest not."""
    from huggingface_hub import hf_hub_download

    (repository / "model.safetensors").unlink()
    for shard in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        (repository / shard).write_bytes(os.urandom(100_000))
    with serve_model(REPO, repository) as (url, record):
        use_hub(monkeypatch, url)
        for name in cached:
            hf_hub_download(REPO, name)
        before = len(record.gets)
        snapshot = Path(resolve_vllm_model(REPO, load_format))
    assert sorted(name for name, _ in record.gets[before:]) == sorted(fetched)
    for name in cached + fetched:
        assert (snapshot / name).read_bytes() == (repository / name).read_bytes()


def test_without_a_network_a_model_not_in_the_cache_is_one_line(
    hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_hub(monkeypatch, f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(EngineUnavailable) as failed:
        resolve_vllm_model(REPO, "mistral")
    assert str(failed.value) == (f"model {REPO!r} is not downloaded and the model hub cannot be reached (no network?)")


def test_a_repository_without_weights_for_the_load_format_is_one_line(
    hub_cache: Path, repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repository / "consolidated.safetensors").unlink()
    with serve_model(REPO, repository) as (url, record):
        use_hub(monkeypatch, url)
        with pytest.raises(
            EngineUnavailable, match=f"^model '{REPO}': no weights vLLM loads with load_format 'mistral'$"
        ):
            resolve_vllm_model(REPO, "mistral")
    assert not record.gets


def test_a_folder_is_handed_to_vllm_as_it_is(repository: Path) -> None:
    assert resolve_vllm_model(str(repository), "mistral") == str(repository)


def test_the_files_vllm_reads_for_each_load_format() -> None:
    names = [
        "README.md", "params.json", "tekken.json", "consolidated.safetensors", "config.json",
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "original/consolidated.pth",
    ]  # fmt: skip
    common = ["README.md", "params.json", "tekken.json", "config.json"]
    assert model_files(names, "mistral") == [*common, "consolidated.safetensors"]
    assert model_files(names, "auto") == [
        *common,
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    ]
    assert model_files(["config.json", "pytorch_model.bin"], "auto") == ["config.json", "pytorch_model.bin"]
    assert model_files(["config.json", "model.safetensors"], "mistral") == []


def _closed_port() -> int:
    """A loopback port nothing listens on: connections to it are refused, as with no network."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
