"""Realtime chunks built by ChunkRenderer equal vLLM's own rendering, on the real engine."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from tests.vllm_support import EngineLoop, as_float, chirp_pcm16, requires_vllm
from voxdesk.engine.vllm.engine import VllmEngine
from voxdesk.engine.vllm.render import ChunkRenderer, same_engine_input

pytestmark = [pytest.mark.vllm, requires_vllm]


async def buffer_prompts(engine: VllmEngine, audio: np.ndarray) -> list[Any]:
    """What Voxtral's realtime buffer yields for ``audio``, tokens fed back as a server would."""

    async def chunks() -> AsyncIterator[np.ndarray]:
        for start in range(0, len(audio), 1600):
            yield audio[start : start + 1600]

    feedback: asyncio.Queue[list[int]] = asyncio.Queue()
    for step in range(200):
        feedback.put_nowait([128 + step % 200])
    llm = engine._llm
    model_cls = engine._model_cls
    return [prompt async for prompt in model_cls.buffer_realtime_audio(chunks(), feedback, llm.model_config)]


def test_every_chunk_equals_vllms_rendering_and_the_steady_ones_are_built(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    vllm_engine, runner = vllm
    llm, parse = vllm_engine._llm, vllm_engine._api["parse_model_prompt"]
    prompts = runner.run(buffer_prompts(vllm_engine, as_float(chirp_pcm16(3.0))))
    renderer = ChunkRenderer(llm, parse)
    for prompt in prompts:
        [theirs] = llm.renderer.render_cmpl([parse(llm.model_config, prompt)])
        assert same_engine_input(renderer.render(prompt), theirs)
    assert renderer.enabled
    assert renderer.fast_shapes == [(1, 2160)]  # one token and 135 ms of audio per 80 ms step


def test_a_chunk_of_another_form_goes_through_vllms_renderer(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    vllm_engine, _ = vllm
    llm, parse = vllm_engine._llm, vllm_engine._api["parse_model_prompt"]
    renderer = ChunkRenderer(llm, parse)
    frame = as_float(chirp_pcm16(1.0))[:2160].astype(np.float64)  # not float32: not built here
    prompt = {"prompt_token_ids": [200], "multi_modal_data": {"audio": (frame, None)}}
    for _ in range(3):
        [theirs] = llm.renderer.render_cmpl([parse(llm.model_config, prompt)])
        assert same_engine_input(renderer.render(prompt), theirs)
    assert renderer.fast_shapes == []
