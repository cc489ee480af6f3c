"""The vLLM engine in-process on the CPU with the tiny Voxtral Realtime model: real vLLM mechanics."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

import numpy as np
import pytest

from tests.vllm_support import (
    ENGINE_OPTIONS,
    HUB_REPO,
    OUTPUTS_FOR_4S,
    PROMPT_TOKENS,
    SERVED_NAME,
    EngineLoop,
    LoadedVllm,
    as_float,
    audio_frames,
    build_tiny_model,
    chirp_pcm16,
    realtime_frames,
    requires_vllm,
)
from voxdesk.engine import EngineUnavailable, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings

pytestmark = [pytest.mark.vllm, requires_vllm]


def test_a_hub_model_is_downloaded_with_progress_and_vllm_loads_the_snapshot(loaded_vllm: LoadedVllm) -> None:
    """The one engine start the vLLM tests share (tests/engine/conftest.py) is also this check:
    the download comes before vLLM loads."""
    downloads = [(step, done) for step, done in loaded_vllm.steps if step.startswith(f"downloading {HUB_REPO}: ")]
    assert downloads and downloads[-1][0].startswith(f"downloading {HUB_REPO}: 100% of ")
    fractions = [done for _, done in loaded_vllm.steps]
    assert fractions == sorted(fractions) and downloads[-1][1] == pytest.approx(0.5)
    for path in build_tiny_model().iterdir():
        assert (loaded_vllm.snapshot / path.name).read_bytes() == path.read_bytes()
    model_config = loaded_vllm.engine._llm.model_config
    assert model_config.model == str(loaded_vllm.snapshot)
    assert model_config.served_model_name == "tinyvox"


async def chunks(audio: np.ndarray, size: int = 1600) -> AsyncIterator[np.ndarray]:
    for start in range(0, len(audio), size):
        await asyncio.sleep(0)
        yield audio[start : start + size]


async def collect(engine: VllmEngine, audio: np.ndarray) -> list[EngineEvent]:
    return [event async for event in engine.stream(chunks(audio))]


def test_one_delta_per_80_ms_slot_and_a_final_text_of_all_deltas(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    engine, runner = vllm
    events = runner.run(collect(engine, as_float(chirp_pcm16(4.0))))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert len(deltas) == OUTPUTS_FOR_4S
    assert done.text == "".join(d.text for d in deltas)
    assert done.text.strip(), "the tiny model's greedy output should be visible text"
    assert done.stats.prompt_tokens == PROMPT_TOKENS
    assert done.stats.completion_tokens == OUTPUTS_FOR_4S
    times = [e.audio_time for e in events]
    assert times == sorted(times) and times[-1] == pytest.approx(4.0)
    assert not [e for e in events if isinstance(e, StreamError)]


def test_the_same_audio_gives_the_same_deltas_and_other_audio_others(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    engine, runner = vllm
    first = runner.run(collect(engine, as_float(chirp_pcm16(4.0))))
    again = runner.run(collect(engine, as_float(chirp_pcm16(4.0))))
    other = runner.run(collect(engine, as_float(chirp_pcm16(4.0, seed=1)[::-1].copy())))
    text = [e.text for e in first if isinstance(e, TextDelta)]
    assert text == [e.text for e in again if isinstance(e, TextDelta)]
    assert text != [e.text for e in other if isinstance(e, TextDelta)]


def test_two_sessions_run_concurrently(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    engine, runner = vllm

    async def both() -> list[list[EngineEvent]]:
        return list(
            await asyncio.gather(
                collect(engine, as_float(chirp_pcm16(4.0))), collect(engine, as_float(chirp_pcm16(4.0, seed=2)))
            )
        )

    for events in runner.run(both()):
        deltas = [e for e in events if isinstance(e, TextDelta)]
        [done] = [e for e in events if isinstance(e, UtteranceDone)]
        assert len(deltas) == OUTPUTS_FOR_4S and done.text == "".join(d.text for d in deltas)


def test_leaving_a_session_aborts_its_request(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    engine, runner = vllm

    async def endless() -> AsyncIterator[np.ndarray]:
        audio = as_float(chirp_pcm16(4.0))
        while True:
            async for chunk in chunks(audio):
                yield chunk

    async def leave_early() -> int:
        seen = 0
        async for event in engine.stream(endless()):
            seen += isinstance(event, TextDelta)
            if seen == 10:
                break
        await asyncio.sleep(0.5)
        return engine.unfinished_requests()

    assert runner.run(leave_early()) == 0
    events = runner.run(collect(engine, as_float(chirp_pcm16(4.0))))
    assert sum(isinstance(e, TextDelta) for e in events) == OUTPUTS_FOR_4S


def test_bad_audio_raises_after_the_text_already_produced(vllm: tuple[VllmEngine, EngineLoop]) -> None:
    engine, runner = vllm
    from voxdesk.engine import AudioFormatError

    async def then_stereo() -> AsyncIterator[np.ndarray]:
        async for chunk in chunks(as_float(chirp_pcm16(2.0))):
            yield chunk
        yield np.zeros((1600, 2), np.float32)

    async def run() -> int:
        deltas = 0
        with pytest.raises(AudioFormatError, match="mono"):  # noqa: PT012 - the loop is what raises
            async for event in engine.stream(then_stereo()):
                deltas += isinstance(event, TextDelta)
        return deltas

    assert runner.run(run()) > 0
    assert runner.run(asyncio.sleep(0.2, result=engine.unfinished_requests())) == 0


def test_a_model_folder_that_is_not_there_is_a_clear_error() -> None:
    engine = VllmEngine(VllmSettings(model="/nonexistent/voxtral", **ENGINE_OPTIONS))
    with pytest.raises(EngineUnavailable, match="could not"):
        asyncio.run(engine.load())


def test_parity_with_vllms_own_realtime_server(vllm: tuple[VllmEngine, EngineLoop], vllm_server: int) -> None:
    engine, runner = vllm
    pcm = chirp_pcm16(4.0)
    in_process = [e.text for e in runner.run(collect(engine, as_float(pcm))) if isinstance(e, TextDelta)]
    script = [
        json.dumps({"type": "session.update", "model": SERVED_NAME}),
        json.dumps({"type": "input_audio_buffer.commit"}),
        *audio_frames(pcm),
        json.dumps({"type": "input_audio_buffer.commit", "final": True}),
    ]
    frames = [json.loads(f) for f in asyncio.run(realtime_frames(vllm_server, script, "transcription.done"))]
    over_wire = [f["delta"] for f in frames if f["type"] == "transcription.delta"]
    assert len(in_process) == OUTPUTS_FOR_4S
    assert in_process == over_wire
    assert frames[-1]["text"] == "".join(in_process)


def _two_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))[:2]


@pytest.mark.skipif(len(_two_cpus()) < 2, reason="tensor parallelism over 2 CPU workers needs 2 CPUs")
def test_tensor_parallel_over_two_workers_gives_the_same_deltas(
    vllm: tuple[VllmEngine, EngineLoop], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, runner = vllm
    audio = as_float(chirp_pcm16(4.0))
    one_worker = [e.text for e in runner.run(collect(engine, audio)) if isinstance(e, TextDelta)]
    # vLLM's CPU workers bind one NUMA node each by default ("Not enough allowed NUMA nodes to bind
    # threads of 2 local CPUWorkers" on a one-node machine); one CPU each instead. Unbound, each
    # worker's OpenMP threads spin on both CPUs: 4 s of audio took 105 s instead of 6 s here.
    monkeypatch.setenv("VLLM_CPU_OMP_THREADS_BIND", "|".join(str(cpu) for cpu in _two_cpus()))
    settings = VllmSettings(model=str(build_tiny_model()), engine_args={"tensor_parallel_size": 2}, **ENGINE_OPTIONS)
    sharded = VllmEngine(settings)

    async def transcribe() -> tuple[int, list[EngineEvent]]:
        await sharded.load()
        try:
            return sharded._llm.vllm_config.parallel_config.tensor_parallel_size, await collect(sharded, audio)
        finally:
            await sharded.aclose()

    workers, events = asyncio.run(transcribe())
    assert workers == 2
    two_workers = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(two_workers) == OUTPUTS_FOR_4S
    assert two_workers == one_worker
