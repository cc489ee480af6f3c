"""Choosing the Whisper model and device: folders, cached names, errors, placement."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import ctranslate2
import huggingface_hub.constants
import pytest

from tests.random_whisper import random_whisper
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.whisper.models import Placement, check_model_folder, model_directory, place, resolve_model


def test_tiny_en_is_the_bundled_model() -> None:
    assert resolve_model("tiny.en") == model_directory()
    assert resolve_model("") == model_directory()


def test_a_random_model_folder_is_accepted() -> None:
    folder = random_whisper("base.en")
    assert resolve_model(str(folder)) == folder


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "is not a CTranslate2 Whisper model folder (no model.bin, config.json)"),
        ({"model.bin": b"x", "config.json": b"{}"}, "(no vocabulary or tokenizer.json)"),
        (
            {"model.bin": b"\x06\x00\x00\x00\x10\x00TransformerSpec\x00", "config.json": b"{}", "vocabulary.txt": b""},
            "holds a CTranslate2 model that is not Whisper",
        ),
    ],
)
def test_a_folder_that_is_not_a_whisper_model_is_one_clear_error(
    tmp_path: Path, files: dict[str, bytes], message: str
) -> None:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    with pytest.raises(EngineUnavailable, match="^" + re.escape(str(tmp_path))) as error:
        resolve_model(str(tmp_path))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable, match="does not exist"):
        resolve_model(str(tmp_path / "nowhere"))


def test_a_name_not_in_the_cache_without_a_hub_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(EngineUnavailable, match=r"'base\.en' is not downloaded and the model hub cannot be reached"):
        resolve_model("base.en")


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(EngineUnavailable, match=r"unknown Whisper model 'huge\.en'.*large-v3"):
        resolve_model("huge.en")


def test_a_name_in_the_hub_cache_is_used_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model in the standard hub cache layout is found with local_files_only (no network)."""
    repo = tmp_path / "models--Systran--faster-whisper-base.en"
    snapshot = repo / "snapshots" / ("0" * 40)
    shutil.copytree(random_whisper("base.en"), snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_model("base.en") == snapshot
    check_model_folder(snapshot)


def test_auto_uses_cuda_with_float16_when_ctranslate2_sees_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 1)
    assert place("auto") == Placement("cuda", "float16")
    assert place("cuda") == Placement("cuda", "float16")
    assert place("cpu") == Placement("cpu", "int8")


def test_without_a_gpu_auto_is_int8_on_the_cpu_and_cuda_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ctranslate2, "get_cuda_device_count", lambda: 0)
    assert place("auto") == Placement("cpu", "int8")
    with pytest.raises(EngineUnavailable, match="CTranslate2 sees no CUDA GPU"):
        place("cuda")
    with pytest.raises(EngineUnavailable, match="unknown device 'gpu'"):
        place("gpu")
