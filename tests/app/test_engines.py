"""One engine factory for the window, the command line and the file queue: each caller's own
settings or options give the engine it names, and the file queue's engine decodes files whole."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import numpy as np
import pytest

from voxdesk.app.engines import build_engine, file_engine_choice, model_name
from voxdesk.app.files.job import FileTranscription, WholeFileEngine
from voxdesk.app.settings import EngineSettings
from voxdesk.cli.main import _create_engine, build_parser
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine
from voxdesk.engine.remote.realtime import VllmRealtimeEngine
from voxdesk.engine.remote.wyoming import WyomingEngine
from voxdesk.engine.session import SAMPLE_RATE, StreamingEngine
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.vllm.engine import DESKTOP_MAX_NUM_SEQS, VllmEngine
from voxdesk.engine.whisper.builtin import BuiltinEngine

ONE_SECOND = np.zeros(SAMPLE_RATE, np.float32)


def whisper_of(engine: StreamingEngine) -> tuple[str, str, str, str]:
    assert isinstance(engine, BuiltinEngine)
    decoder = engine.settings.decoder
    return decoder.model, decoder.device, decoder.language, decoder.task


def test_the_windows_settings_give_each_kind_of_engine() -> None:
    builtin = build_engine(EngineSettings(whisper_model="base.en", device="cpu", language="de"))
    assert whisper_of(builtin) == ("base.en", "cpu", "de", "transcribe")
    assert whisper_of(build_engine(EngineSettings(whisper_model=""))) == ("tiny.en", "auto", "auto", "transcribe")
    vllm = build_engine(EngineSettings(EngineKind.VLLM, vllm_model="org/voxtral"))
    assert isinstance(vllm, VllmEngine)
    assert (vllm.settings.model, vllm.settings.max_num_seqs) == ("org/voxtral", DESKTOP_MAX_NUM_SEQS)
    assert isinstance(build_engine(EngineSettings(EngineKind.REMOTE)), VllmRealtimeEngine)


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown engine"):
        build_engine(EngineSettings(kind=cast("EngineKind", "nope")))


@pytest.mark.parametrize("kind", list(EngineKind))
def test_the_file_queue_decodes_whole_files_on_the_builtin_engine_whatever_listens(kind: EngineKind) -> None:
    listening = EngineSettings(kind, whisper_model="base.en", device="cpu", language="de")
    choice = file_engine_choice(listening)
    engine = build_engine(choice)
    assert whisper_of(engine)[:2] == ("base.en", "cpu")
    assert isinstance(engine, WholeFileEngine) and FileTranscription(engine, ONE_SECOND).batched
    assert model_name(choice) == "whisper-base.en"


def test_engines_that_only_stream_get_files_streamed() -> None:
    remote = build_engine(EngineSettings(EngineKind.REMOTE))
    for engine in (remote, FakeTickEngine()):
        assert not isinstance(engine, WholeFileEngine)
        assert not FileTranscription(engine, ONE_SECOND).batched
    assert not FileTranscription(build_engine(EngineSettings()), ONE_SECOND, realtime=True).batched


def cli_engine(*argv: str) -> StreamingEngine:
    return _create_engine(build_parser().parse_args(list(argv)))


def test_the_command_lines_options_give_each_kind_of_engine(tmp_path: Path) -> None:
    audio = str(tmp_path / "a.wav")
    assert whisper_of(cli_engine("transcribe", audio)) == ("tiny.en", "auto", "auto", "transcribe")
    options = ("--whisper-model", "small", "--device", "cpu", "--language", "fr", "--task", "translate")
    assert whisper_of(cli_engine("transcribe", *options, audio)) == ("small", "cpu", "fr", "translate")
    assert whisper_of(cli_engine("serve", *options)) == ("small", "cpu", "fr", "translate")
    remote = cli_engine("transcribe", "--server", "ws://h:8000", "--model", "m", "--api-key", "k", audio)
    assert isinstance(remote, VllmRealtimeEngine) and (remote.settings.model, remote.settings.api_key) == ("m", "k")
    openai = cli_engine("transcribe", "--server", "ws://h:8000/v1", "--dialect", "openai", "--language", "de", audio)
    assert isinstance(openai, OpenAIRealtimeEngine) and openai.settings.language == "de"
    wyoming = cli_engine("transcribe", "--server", "tcp://h:10300,tcp://i:10300", "--engine", "builtin", audio)
    assert isinstance(wyoming, WyomingEngine) and wyoming.servers.urls == ["tcp://h:10300", "tcp://i:10300"]
    assert whisper_of(cli_engine("--server", "ws://h:8000", "serve")) == ("tiny.en", "auto", "auto", "transcribe")
