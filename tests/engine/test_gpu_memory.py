"""The GPU memory share the desktop's vLLM engine asks for, from what the driver reports free."""

from __future__ import annotations

import pytest

from voxdesk.engine.vllm.gpu_memory import choose_gpu_memory_utilization

GIB = 2**30


@pytest.mark.parametrize(
    ("free_gib", "total_gib", "share"),
    [
        (7.0, 8, 0.75),  # the display holds 1 GiB: ask for the rest less 1 GiB of headroom
        (23.5, 24, 0.9),  # an idle large GPU: never more than vLLM's usual 0.9
        (20.0, 24, 0.78),  # 5 % of a large GPU is the headroom: (20 - 1.2) / 24 rounded down
        (2.5, 8, 0.18),
        (0.9, 8, 0.0),  # the headroom takes everything
        (0.0, 8, 0.0),
    ],
)
def test_the_share_is_what_is_free_less_headroom(free_gib: float, total_gib: int, share: float) -> None:
    assert choose_gpu_memory_utilization(int(free_gib * GIB), total_gib * GIB) == share


@pytest.mark.parametrize("free", [0, 1, GIB + 1, 3 * GIB + 12345, 5 * GIB, 7 * GIB - 1, 8 * GIB])
def test_vllms_start_check_always_passes_with_the_chosen_share(free: int) -> None:
    total = 8 * GIB
    # vLLM refuses to start when free < share x total ("... is less than desired GPU memory utilization").
    assert free >= choose_gpu_memory_utilization(free, total) * total


def test_a_gpu_without_memory_is_a_bug() -> None:
    with pytest.raises(ValueError, match="0 bytes"):
        choose_gpu_memory_utilization(0, 0)
