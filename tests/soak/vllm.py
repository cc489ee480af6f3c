"""Soak of ``voxdesk serve --engine vllm`` on the tiny random-weight Voxtral: the serve soak's rolling
sessions (vLLM ``/v1/realtime`` and OpenAI Realtime, continuously) against a real server process.
The server's engine core is a child process; its memory, descriptors and threads are counted in."""

from __future__ import annotations

import os
from collections.abc import Callable

from tests.soak.sampling import SoakResult
from tests.soak.serve import CONCURRENT, client_engines, soak_server
from tests.vllm_support import build_tiny_model, launch_voxdesk_vllm_server, stop

__all__ = ["soak_vllm"]


async def soak_vllm(
    minutes: float,
    on_sample: Callable[[str], None] = lambda line: None,
    concurrent: int = CONCURRENT,
    distinct: int | None = None,
) -> SoakResult:
    """``voxdesk serve --engine vllm`` (tiny model) under continuous sessions for ``minutes``."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    launch = launch_voxdesk_vllm_server(build_tiny_model())
    process, port = launch.healthy(), launch.port
    try:
        engines = client_engines(port, None)
        return await soak_server("vllm", process, engines, port, minutes, on_sample, concurrent, distinct)
    finally:
        stop(process)
