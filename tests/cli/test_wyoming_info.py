"""What ``voxdesk serve --wyoming`` tells clients in ``info``: the engine's real model and
languages, read back with the official ``wyoming`` package's ``Info``."""

from __future__ import annotations

import pytest
from wyoming.event import Event as LibraryEvent
from wyoming.info import Info

from voxdesk.cli.main import build_parser
from voxdesk.cli.wyoming import service_info, wyoming_config
from voxdesk.engine.whisper.catalog import whisper_languages
from voxdesk.engine.wire.wyoming.address import WyomingAddressError
from voxdesk.engine.wire.wyoming.info import parse_asr_programs
from voxdesk.server.listener import InsecureBindError


def info_for(*argv: str) -> Info:
    event = service_info(build_parser().parse_args(["serve", *argv]), "0.1.0").to_event()
    return Info.from_event(LibraryEvent(event.type, event.data))


@pytest.mark.parametrize(
    ("model", "language", "expected"),
    [("tiny.en", "auto", ("en",)), ("distil-large-v3", "auto", ("en",)), ("small", "de", ("de",))],
)
def test_whisper_languages_are_those_the_model_takes(model: str, language: str, expected: tuple[str, ...]) -> None:
    assert whisper_languages(model, language) == expected


def test_a_multilingual_model_on_auto_lists_every_whisper_language() -> None:
    languages = whisper_languages("small", "auto")
    assert {"en", "de", "fr", "ja"} <= set(languages) and len(languages) > 90


def test_the_builtin_engine_is_described_by_its_whisper_model() -> None:
    (program,) = info_for("--whisper-model", "base.en").asr
    assert (program.name, program.installed, program.version) == ("voxdesk", True, "0.1.0")
    assert [(m.name, m.languages, m.installed) for m in program.models] == [("base.en", ["en"], True)]


def test_the_vllm_engine_is_described_by_its_model_and_the_given_languages() -> None:
    argv = (
        "--engine",
        "vllm",
        "--served-model-name",
        "voxtral",
        "--wyoming-language",
        "en",
        "--wyoming-language",
        "fr",
    )
    (model,) = info_for(*argv).asr[0].models
    assert (model.name, model.languages) == ("voxtral", ["en", "fr"])


def test_our_client_reads_our_info() -> None:
    event = service_info(build_parser().parse_args(["serve"]), "0.1.0").to_event()
    (program,) = parse_asr_programs(event)
    assert program.supports_transcript_streaming and program.models[0].languages == ("en",)


def test_addresses_are_checked_before_anything_loads() -> None:
    def config(*argv: str) -> object:
        return wyoming_config(build_parser().parse_args(["serve", *argv]))

    assert config() is None
    with pytest.raises(WyomingAddressError):
        config("--wyoming", "127.0.0.1:10300")
    with pytest.raises(InsecureBindError):
        config("--wyoming", "tcp://192.168.1.5:10300")
    assert config("--wyoming", "tcp://192.168.1.5", "--allow-insecure-no-api-key") is not None
