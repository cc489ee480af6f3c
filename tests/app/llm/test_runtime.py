"""Which runtime the settings choose, how the in-process one fails where vLLM cannot run (the
vLLM tier runs both runtimes on a real model: test_llm_vllm.py), and how it shares the GPU with
the speech model."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.actions.fakes import (
    RecordingKeyboard,
    RecordingLauncher,
    RecordingOpener,
    StaticProbe,
    recording_services,
)
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.services import Services
from voxdesk.app.assistant import Assistant
from voxdesk.app.llm.client import LlmError, OpenAiCompatibleLlm
from voxdesk.app.llm.in_process import InProcessLlm
from voxdesk.app.llm.runtime import llm_for, share_gpu
from voxdesk.app.settings import ActionSettings, EngineSettings, Settings, WritingSettings, load_settings
from voxdesk.cli.writing import transcript_llm
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.vllm import gpu_memory
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings
from voxdesk.engine.vllm.gpu_memory import choose_gpu_memory_utilization, model_need_bytes
from voxdesk.engine.vllm.text import TextModelSettings, VllmTextModel

no_vllm = pytest.mark.skipif(
    importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here: the in-process runtime loads"
)


def test_the_server_runtime_is_the_default_and_vllm_loads_the_named_model_in_this_process() -> None:
    server = llm_for(ActionSettings(llm_url="http://127.0.0.1:9/v1"))
    assert isinstance(server, OpenAiCompatibleLlm) and server.where == "the LLM at http://127.0.0.1:9/v1"
    local = llm_for(ActionSettings(llm_runtime="vllm", llm_model="Qwen/Qwen2.5-1.5B-Instruct", llm_tool_parser="x"))
    assert isinstance(local, InProcessLlm)
    assert (local.settings.model, local.settings.tool_parser) == ("Qwen/Qwen2.5-1.5B-Instruct", "x")


def test_an_unknown_runtime_in_settings_is_one_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_CONFIG_DIR", str(tmp_path))
    (tmp_path / "settings.toml").write_text('[actions]\nllm_runtime = "cloud"\n', encoding="utf-8")
    settings, warnings = load_settings()
    assert settings.actions.llm_runtime == "server"
    assert warnings == ["ignored actions.llm_runtime: 'cloud' is not one of server, vllm"]


def test_the_command_line_options_choose_the_runtime_over_the_settings() -> None:
    options = argparse.Namespace(llm_runtime="vllm", llm_url=None, llm_model="/models/qwen", llm_api_key=None)
    llm, _ = transcript_llm(options)
    assert isinstance(llm, InProcessLlm) and llm.settings.model == "/models/qwen"


@no_vllm
def test_without_vllm_the_in_process_llm_is_one_line_and_dictation_is_typed_as_heard(tmp_path: Path) -> None:
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_runtime="vllm", llm_model="Qwen/Qwen2.5-1.5B-Instruct")
    center = ActionCenter(
        settings, services, commands=CommandSource(user_path=tmp_path / "c.toml"), writing=WritingSettings(mode="clean")
    )
    log: list[str] = []
    center.add_log_listener(log.append)

    async def scenario() -> None:
        await center.prepare_llm()
        record = await center.handle_utterance("um so meet at three thirty pm", utterance_id=1)
        assert record is not None and record.status is ActionStatus.DONE, record
        assert "not cleaned up: the LLM Qwen/Qwen2.5-1.5B-Instruct in this process could not start" in record.message

    asyncio.run(scenario())
    assert keyboard.text == "um so meet at 3:30 PM "
    [warning] = [line for line in log if "warning:" in line]
    assert "could not start: vLLM is not installed" in warning and "\n" not in warning


@no_vllm
def test_a_model_that_could_not_start_is_not_loaded_again_by_every_request() -> None:
    llm = InProcessLlm(TextModelSettings(model="m"))
    model = llm._model
    loads: list[None] = []
    real_load = model.load

    async def counted_load() -> None:
        loads.append(None)
        await real_load()

    model.load = counted_load  # type: ignore[method-assign]  # the real load, counted

    async def twice() -> list[str]:
        failures = []
        for _ in range(2):
            with pytest.raises(LlmError) as failure:
                await llm.chat([{"role": "user", "content": "hi"}], 30)
            failures.append(str(failure.value))
        return failures

    first, second = asyncio.run(twice())
    assert len(loads) == 1 and first == second
    assert first.startswith("the LLM m in this process could not start: vLLM is not installed")


GIB = 2**30


def _model_folder(folder: Path, weights_gib: int) -> str:
    """A model folder whose weights vLLM would read are ``weights_gib`` GiB (sparse: no disk used)."""
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with (folder / "model.safetensors").open("wb") as weights:
        weights.truncate(weights_gib * GIB)
    return str(folder)


@pytest.fixture
def gpu_reading(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, int]]]:
    """What a GPU driver reports free (there is no GPU here): the list's last ``(free, total)``;
    the sharing expects nothing afterwards (each test closes the engines it started)."""
    readings: list[tuple[int, int]] = []
    monkeypatch.setattr(gpu_memory, "free_gpu_memory", lambda: readings[-1])
    yield readings
    share_gpu(Settings())


def _both_on_the_gpu(tmp_path: Path, speech_gib: int, text_gib: int) -> Settings:
    speech = _model_folder(tmp_path / "speech", speech_gib)
    text = _model_folder(tmp_path / "text", text_gib)
    return Settings(
        engine=EngineSettings(kind=EngineKind.VLLM, vllm_model=speech),
        actions=ActionSettings(llm_runtime="vllm", llm_model=text),
    )


def test_in_local_gpu_mode_the_speech_model_leaves_the_in_process_llm_its_part_of_the_gpu(
    tmp_path: Path, gpu_reading: list[tuple[int, int]]
) -> None:
    settings = _both_on_the_gpu(tmp_path, 9, 3)
    assistant = Assistant(settings, recording_services())  # the window's and the CLI's: it tells the sharing
    total = 80 * GIB
    gpu_reading.append((78 * GIB, total))
    speech = VllmEngine(VllmSettings(model=settings.engine.vllm_model, load_format="auto"))
    note = speech._choose_memory_share()
    assert speech._memory_share is not None and speech._memory_share < choose_gpu_memory_utilization(78 * GIB, total)
    assert note == f" (78.0 of 80.0 GiB GPU memory free; asking for {speech._memory_share:.0%})"
    left = 78 * GIB - int(speech._memory_share * total)
    gpu_reading.append((left, total))
    text = VllmTextModel(TextModelSettings(model=settings.actions.llm_model))
    text_share = text._memory_share(settings.actions.llm_model)
    assert text_share == choose_gpu_memory_utilization(left, total) and text_share * total >= model_need_bytes(3 * GIB)
    asyncio.run(text.aclose())
    asyncio.run(speech.aclose())
    # Both stopped: the next to start leaves the other its part again.
    gpu_reading.append((78 * GIB, total))
    again = text._memory_share(settings.actions.llm_model)
    assert again is not None and again < choose_gpu_memory_utilization(78 * GIB, total)
    asyncio.run(text.aclose())
    asyncio.run(assistant.aclose())


def test_a_speech_model_and_an_llm_that_do_not_both_fit_are_one_sentence_at_the_first_start(
    tmp_path: Path, gpu_reading: list[tuple[int, int]]
) -> None:
    settings = _both_on_the_gpu(tmp_path, 9, 7)
    share_gpu(settings)
    gpu_reading.append((23 * GIB, 24 * GIB))
    speech = VllmEngine(VllmSettings(model=settings.engine.vllm_model, load_format="auto"))
    with pytest.raises(EngineUnavailable) as failure:
        speech._choose_memory_share()
    message = str(failure.value)
    assert message.startswith("the GPU has 23.0 of its 24.0 GiB free, less than the speech model ")
    assert f"the LLM {settings.actions.llm_model} about 9.8 GiB need" in message and "\n" not in message
    # Alone (the LLM served elsewhere) the speech model takes what is free.
    share_gpu(Settings(engine=settings.engine))
    speech._choose_memory_share()
    assert speech._memory_share == choose_gpu_memory_utilization(23 * GIB, 24 * GIB)
    asyncio.run(speech.aclose())
