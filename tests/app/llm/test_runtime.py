"""Which runtime the settings choose, and how the in-process one fails where vLLM cannot run
(the vLLM tier runs both runtimes on a real model: test_llm_vllm.py)."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.services import Services
from voxdesk.app.llm.client import LlmError, OpenAiCompatibleLlm
from voxdesk.app.llm.in_process import InProcessLlm
from voxdesk.app.llm.runtime import llm_for
from voxdesk.app.settings import ActionSettings, WritingSettings, load_settings
from voxdesk.cli.writing import transcript_llm
from voxdesk.engine.vllm.text import TextModelSettings

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
