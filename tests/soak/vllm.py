"""Soak of ``voxdesk serve --engine vllm`` on the tiny random-weight Voxtral: the serve soak's rolling
sessions (vLLM ``/v1/realtime`` and OpenAI Realtime, continuously) against a real server process.
The server's engine core is a child process; its memory, descriptors and threads are counted in."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable

from tests.soak.sampling import SoakResult, process_tree
from tests.soak.serve import CONCURRENT, client_engines, soak_server
from tests.vllm_support import build_tiny_model, launch_voxdesk_vllm_server, stop, wait_for_health

__all__ = ["soak_vllm"]

START_TIMEOUT = 900.0  # a vLLM start is minutes of single-threaded imports: longer on a loaded machine


async def soak_vllm(
    minutes: float,
    on_sample: Callable[[str], None] = lambda line: None,
    concurrent: int = CONCURRENT,
    distinct: int | None = None,
) -> SoakResult:
    """``voxdesk serve --engine vllm`` (tiny model) under continuous sessions for ``minutes``."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    launch = launch_voxdesk_vllm_server(build_tiny_model())
    try:
        wait_for_health(launch.port, launch.process, timeout=START_TIMEOUT)
    except (RuntimeError, TimeoutError):
        stop_tree(launch.process)
    process, port = launch.healthy(), launch.port  # raises, with the server's last lines, if it failed
    try:
        engines = client_engines(port, None)
        return await soak_server("vllm", process, engines, port, minutes, on_sample, concurrent, distinct)
    finally:
        stop_tree(process)


def stop_tree(process: subprocess.Popen[bytes]) -> None:
    """Stop the server, then whatever it left running: a server stopped while it loads leaves
    vLLM's engine core process behind."""
    left = process_tree(process.pid)[1:]
    stop(process)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
