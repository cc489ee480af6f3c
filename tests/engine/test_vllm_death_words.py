"""What a dead vLLM engine is told as: the engine core process that ended and how, in one sentence."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from multiprocessing.process import BaseProcess
from types import SimpleNamespace
from typing import Any

import pytest

from voxdesk.engine.vllm.failures import explain_engine_death

pytestmark = pytest.mark.integration  # starts processes


def fake_async_llm(processes: list[BaseProcess]) -> SimpleNamespace:
    """FAKE stand-in for vLLM's ``AsyncLLM`` (not installed here): only the path to where its
    process manager keeps the engine core processes, which are real."""
    manager = SimpleNamespace(processes=processes)
    return SimpleNamespace(engine_core=SimpleNamespace(resources=SimpleNamespace(engine_manager=manager)))


def ended(target: Any, *args: Any, kill: bool = False) -> BaseProcess:
    process = multiprocessing.get_context("fork").Process(target=target, args=args, name="EngineCore")
    process.start()
    if kill:
        assert process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
    process.join(timeout=10)
    return process


def test_a_killed_core_is_named_with_its_pid_and_signal() -> None:
    core = ended(time.sleep, 60, kill=True)
    told = explain_engine_death(fake_async_llm([core]))
    assert told.startswith(f"vLLM's engine core process (EngineCore, pid {core.pid}) was killed by SIGKILL")
    assert told.endswith(": every session on it ended, and the engine must be restarted")
    assert "\n" not in told


def test_a_core_that_exited_says_its_status_and_one_without_a_process_says_so() -> None:
    core = ended(sys.exit, 3)
    assert f"(EngineCore, pid {core.pid}) exited with status 3: " in explain_engine_death(fake_async_llm([core]))
    assert explain_engine_death(fake_async_llm([])).startswith("vLLM's engine core stopped (EngineDeadError): ")
