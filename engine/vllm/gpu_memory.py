"""How much GPU memory the desktop's vLLM engine asks for.

A desktop shares its GPU with the display and other programs, so vLLM's usual fixed share of
the total (0.9) fails at start as soon as they hold more than a tenth of it ("Free memory on
device ... is less than desired GPU memory utilization"). The desktop asks instead for what the
driver reports free, less some headroom for what the display and those programs still grow by.
"""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from voxdesk.engine.errors import EngineUnavailable

__all__ = [
    "GPU_SHARING",
    "HEADROOM_BYTES",
    "MAX_UTILIZATION",
    "GpuSharing",
    "GpuTenant",
    "choose_gpu_memory_utilization",
    "free_gpu_memory",
    "model_need_bytes",
    "split_gpu_memory",
]

logger = logging.getLogger(__name__)

HEADROOM_BYTES = 1 << 30
"""GPU memory left free for the display and other programs: 1 GiB, or 5 % of a larger GPU."""

MAX_UTILIZATION = 0.9
"""vLLM's usual share; a desktop never asks for more, however much is free."""


RESERVE_BYTES = 1 << 30
"""Beyond its weights, the least a model starts with: activations, CUDA graphs, a little KV cache."""


def model_need_bytes(weight_bytes: int) -> int:
    """The GPU memory a model with ``weight_bytes`` of weights needs at the least (an estimate:
    the weights, a quarter more for the runtime's buffers, and :data:`RESERVE_BYTES`)."""
    return weight_bytes + weight_bytes // 4 + RESERVE_BYTES


def choose_gpu_memory_utilization(free_bytes: int, total_bytes: int) -> float:
    """vLLM's ``gpu_memory_utilization`` (a share of the total) for a GPU with ``free_bytes`` free.

    Rounded down to a hundredth, so vLLM's own start check (free >= share * total) holds;
    0.0 when the headroom takes everything that is free.

    Raises:
        ValueError: ``total_bytes`` is not positive.
    """
    return _share(_usable(free_bytes, total_bytes), total_bytes)


@dataclass(frozen=True)
class GpuTenant:
    """A model that shares the GPU: ``label`` names it for people (``the LLM Qwen/...``);
    ``need_bytes`` is :func:`model_need_bytes` of its weights, 0 when not known."""

    label: str
    need_bytes: int


def split_gpu_memory(free_bytes: int, total_bytes: int, starting: GpuTenant, waiting: Sequence[GpuTenant]) -> float:
    """The ``gpu_memory_utilization`` of ``starting`` when ``waiting`` start after it on the same GPU.

    Alone it gets what :func:`choose_gpu_memory_utilization` gives (its need, an estimate, is not
    checked: vLLM's own check says whether it fits); beside others, its need and the usable rest
    in proportion to the needs (a tenant of unknown need is kept no room).

    Raises:
        EngineUnavailable: with others waiting, the needs add up to more than is free less the headroom.
        ValueError: ``total_bytes`` is not positive.
    """
    usable = _usable(free_bytes, total_bytes)
    if not waiting:
        return _share(usable, total_bytes)
    tenants = [starting, *waiting]
    needed = sum(tenant.need_bytes for tenant in tenants)
    if needed > usable:
        raise EngineUnavailable(_too_little(tenants, free_bytes, total_bytes))
    if needed == 0:
        return _share(usable, total_bytes)
    mine = starting.need_bytes + (usable - needed) * starting.need_bytes // needed
    return _share(mine, total_bytes)


class GpuSharing:
    """The vLLM engines this process will start on its GPU, and those that started."""

    def __init__(self) -> None:
        self._expected: dict[str, tuple[str, Callable[[], int | None]]] = {}
        self._started: set[str] = set()

    def expect(self, tenants: dict[str, tuple[str, Callable[[], int | None]]]) -> None:
        """From now on the engines to start are ``tenants``: by model, a label and a function
        giving its weights' size in bytes (``None`` when it cannot be told)."""
        self._expected = dict(tenants)

    def claim(self, model: str, label: str, own_weight_bytes: int | None, free_bytes: int, total_bytes: int) -> float:
        """The share for ``model``, starting now with ``free_bytes`` of ``total_bytes`` free;
        expected engines not yet started are left their part. Raises as :func:`split_gpu_memory`."""
        waiting = [
            GpuTenant(name_label, self._need(model_name, size))
            for model_name, (name_label, size) in self._expected.items()
            if model_name != model and model_name not in self._started
        ]
        starting = GpuTenant(label, model_need_bytes(own_weight_bytes) if own_weight_bytes else 0)
        share = split_gpu_memory(free_bytes, total_bytes, starting, waiting)
        self._started.add(model)
        return share

    def claim_free(
        self, model: str, label: str, weights: Callable[[], int | None], advice: str
    ) -> tuple[float, int, int] | None:
        """:meth:`claim` with what the driver reports free: the share, and the free and total
        bytes; ``None`` without a CUDA device (vLLM keeps its default).

        Raises:
            EngineUnavailable: as :func:`split_gpu_memory`, or the headroom takes all that is free
                (the message ends with ``advice``: what to do instead).
        """
        measured = free_gpu_memory()
        if measured is None:
            return None
        share = self.claim(model, label, weights(), *measured)
        if share <= 0:
            self.release(model)
            free, total = (round(value / 2**30, 1) for value in measured)
            raise EngineUnavailable(
                f"only {free} of the GPU's {total} GiB is free, too little for {label}: close programs that use "
                f"the GPU, or {advice}"
            )
        return share, *measured

    def release(self, model: str) -> None:
        """``model``'s engine stopped: its memory is free again."""
        self._started.discard(model)

    @staticmethod
    def _need(model: str, size: Callable[[], int | None]) -> int:
        weights = size()
        if weights is None:
            logger.warning("the size of %s is not known: no GPU memory is kept for it", model)
            return 0
        return model_need_bytes(weights)


GPU_SHARING = GpuSharing()
"""This process's: the app says which engines to expect, each vLLM engine claims its share."""


def _usable(free_bytes: int, total_bytes: int) -> int:
    if total_bytes <= 0:
        raise ValueError(f"a GPU with {total_bytes} bytes of memory")
    headroom = max(HEADROOM_BYTES, total_bytes // 20)
    return max(0, min(free_bytes, total_bytes) - headroom)


def _share(usable: int, total_bytes: int) -> float:
    return min(MAX_UTILIZATION, math.floor(100 * usable / total_bytes) / 100)


def _too_little(tenants: Sequence[GpuTenant], free_bytes: int, total_bytes: int) -> str:
    needs = " and ".join(
        f"{tenant.label} about {_gib(tenant.need_bytes)} GiB" if tenant.need_bytes else f"{tenant.label} (size unknown)"
        for tenant in tenants
    )
    return (
        f"the GPU has {_gib(free_bytes)} of its {_gib(total_bytes)} GiB free, less than {needs} need "
        'with room for the display: choose a smaller model, an LLM server (llm_runtime = "server") '
        "or the built-in speech engine, or close programs that use the GPU"
    )


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f}"


def free_gpu_memory() -> tuple[int, int] | None:
    """``(free, total)`` bytes of the current CUDA device as its driver reports them, or ``None``
    without torch or a CUDA device (vLLM then keeps its own default)."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    free, total = torch.cuda.mem_get_info()
    return int(free), int(total)
