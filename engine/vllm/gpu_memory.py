"""How much GPU memory the desktop's vLLM engine asks for.

A desktop shares its GPU with the display and other programs, so vLLM's usual fixed share of
the total (0.9) fails at start as soon as they hold more than a tenth of it ("Free memory on
device ... is less than desired GPU memory utilization"). The desktop asks instead for what the
driver reports free, less some headroom for what the display and those programs still grow by.
"""

from __future__ import annotations

import importlib
import math

__all__ = ["HEADROOM_BYTES", "MAX_UTILIZATION", "choose_gpu_memory_utilization", "free_gpu_memory"]

HEADROOM_BYTES = 1 << 30
"""GPU memory left free for the display and other programs: 1 GiB, or 5 % of a larger GPU."""

MAX_UTILIZATION = 0.9
"""vLLM's usual share; a desktop never asks for more, however much is free."""


def choose_gpu_memory_utilization(free_bytes: int, total_bytes: int) -> float:
    """vLLM's ``gpu_memory_utilization`` (a share of the total) for a GPU with ``free_bytes`` free.

    Rounded down to a hundredth, so vLLM's own start check (free >= share * total) holds;
    0.0 when the headroom takes everything that is free.

    Raises:
        ValueError: ``total_bytes`` is not positive.
    """
    if total_bytes <= 0:
        raise ValueError(f"a GPU with {total_bytes} bytes of memory")
    headroom = max(HEADROOM_BYTES, total_bytes // 20)
    usable = max(0, min(free_bytes, total_bytes) - headroom)
    return min(MAX_UTILIZATION, math.floor(100 * usable / total_bytes) / 100)


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
