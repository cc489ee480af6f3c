"""An engine started for a server gets vLLM's own ``vllm serve`` defaults, on the real engine."""

from __future__ import annotations

import asyncio
import importlib
import os

import pytest

from tests.vllm_support import build_tiny_model, requires_vllm
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings

pytestmark = [pytest.mark.vllm, requires_vllm]


def test_a_server_engine_without_max_num_seqs_takes_vllms_server_default() -> None:
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    settings = VllmSettings(
        model=str(build_tiny_model()), max_num_seqs=None, api_server=True,
        dtype="float32", enforce_eager=True, max_model_len=1024,
    )  # fmt: skip
    engine = VllmEngine(settings)

    async def started_with() -> int:
        await engine.load()
        try:
            return int(engine._llm.vllm_config.scheduler_config.max_num_seqs)
        finally:
            await engine.aclose()

    engine_args = importlib.import_module("vllm.engine.arg_utils").EngineArgs
    usage = importlib.import_module("vllm.usage.usage_lib").UsageContext
    _, max_num_seqs = engine_args.get_batch_defaults(world_size=1)
    assert asyncio.run(started_with()) == max_num_seqs[usage.OPENAI_API_SERVER]
