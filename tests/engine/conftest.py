"""Fixtures of the engine tests: one in-process vLLM engine on the tiny model for the whole run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.hub_server import empty_hub_cache, serve_model, use_hub
from tests.vllm_support import ENGINE_OPTIONS, HUB_REPO, SERVED_NAME, EngineLoop, LoadedVllm, build_tiny_model
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings


@pytest.fixture(scope="session")
def loaded_vllm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoadedVllm]:
    """The tiny model by its hub id, from a loopback hub into an empty hub cache, loaded once for
    every test that can share an engine (a start takes a minute or more on a CPU). Use it through
    ``vllm``, which checks it is still fit to share."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    engine = VllmEngine(VllmSettings(model=HUB_REPO, served_model_name=SERVED_NAME, **ENGINE_OPTIONS))
    runner, steps = EngineLoop(), []
    with pytest.MonkeyPatch.context() as patch, serve_model(HUB_REPO, build_tiny_model()) as (url, _):
        cache = empty_hub_cache(patch, tmp_path_factory.mktemp("hub"))
        use_hub(patch, url)
        runner.run(engine.load(lambda step, done: steps.append((step, done))))
    [snapshot] = (cache / "models--voxdesk-tests--tiny-voxtral" / "snapshots").iterdir()
    yield LoadedVllm(engine, runner, steps, snapshot)
    runner.run(engine.aclose())
    runner.loop.close()


@pytest.fixture
def vllm(loaded_vllm: LoadedVllm) -> tuple[VllmEngine, EngineLoop]:
    """The shared engine and its loop, once it is known alive and idle: a test that left a request
    open or killed the engine core fails the next test here, naming the cause, not in its checks."""
    engine, runner = loaded_vllm.engine, loaded_vllm.runner
    if not engine.loaded:
        pytest.fail("the shared vLLM engine was closed by an earlier test")
    if engine._llm.errored:
        pytest.fail("the shared vLLM engine's core died during an earlier test")
    if left := engine.unfinished_requests():
        pytest.fail(f"the shared vLLM engine is not idle: {left} request(s) left open by an earlier test")
    return engine, runner
