"""The GPU memory share the desktop's vLLM engines ask for, from what the driver reports free
(numbers as a driver reports them: there is no GPU here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.vllm.download import weight_bytes
from voxdesk.engine.vllm.gpu_memory import (
    HEADROOM_BYTES,
    GpuSharing,
    GpuTenant,
    choose_gpu_memory_utilization,
    model_need_bytes,
    split_gpu_memory,
)

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


SPEECH = GpuTenant("the speech model V", model_need_bytes(9 * GIB))  # about 12.2 GiB
TEXT = GpuTenant("the LLM Q", model_need_bytes(3 * GIB))  # about 4.8 GiB


def test_the_first_of_two_models_leaves_the_other_its_need_and_its_part_of_the_rest() -> None:
    free, total = 78 * GIB, 80 * GIB
    speech = split_gpu_memory(free, total, SPEECH, [TEXT])
    # The LLM starts in what the speech model left: the driver then reports that much less free.
    text = split_gpu_memory(free - int(speech * total), total, TEXT, [])
    assert speech * total >= SPEECH.need_bytes and text * total >= TEXT.need_bytes
    assert speech + text <= (free - HEADROOM_BYTES * 4) / total  # 5 % of 80 GiB is the headroom
    assert speech / text == pytest.approx(SPEECH.need_bytes / TEXT.need_bytes, rel=0.05)


def test_two_models_that_do_not_fit_are_one_sentence_naming_both_and_what_to_do() -> None:
    with pytest.raises(EngineUnavailable) as failure:
        split_gpu_memory(15 * GIB, 16 * GIB, SPEECH, [TEXT])
    message = str(failure.value)
    assert message.startswith("the GPU has 15.0 of its 16.0 GiB free, less than the speech model V about 12.2")
    assert "the LLM Q about 4.8 GiB need" in message and 'llm_runtime = "server"' in message
    assert "\n" not in message


def test_alone_a_model_takes_what_is_free_as_before() -> None:
    assert split_gpu_memory(7 * GIB, 8 * GIB, SPEECH, []) == choose_gpu_memory_utilization(7 * GIB, 8 * GIB)


def test_the_sharing_leaves_room_for_an_expected_model_until_it_started_and_again_once_it_stopped() -> None:
    sharing = GpuSharing()
    sizes = {"v": 9 * GIB, "q": 3 * GIB}
    sharing.expect({name: (f"model {name}", lambda name=name: sizes[name]) for name in sizes})  # type: ignore[misc]
    free, total = 78 * GIB, 80 * GIB
    first = sharing.claim("v", "model v", sizes["v"], free, total)
    assert first < choose_gpu_memory_utilization(free, total)  # room kept for q
    after = free - int(first * total)
    assert sharing.claim("q", "model q", sizes["q"], after, total) == choose_gpu_memory_utilization(after, total)
    sharing.release("q")
    sharing.release("v")
    assert sharing.claim("q", "model q", sizes["q"], free, total) < choose_gpu_memory_utilization(free, total)


def test_a_model_of_unknown_size_is_kept_no_room_and_said_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    sharing = GpuSharing()
    sharing.expect({"v": ("model v", lambda: 9 * GIB), "q": ("model q", lambda: None)})
    alone = choose_gpu_memory_utilization(20 * GIB, 80 * GIB)
    assert sharing.claim("v", "model v", 9 * GIB, 20 * GIB, 80 * GIB) == alone
    assert "the size of q is not known: no GPU memory is kept for it" in caplog.text


def test_the_weights_of_a_folder_are_the_files_vllm_loads(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    for name, size in [("model-00001-of-00002.safetensors", 1000), ("model-00002-of-00002.safetensors", 24)]:
        (tmp_path / name).write_bytes(b"\0" * size)
    (tmp_path / "consolidated.safetensors").write_bytes(b"\0" * 5000)  # Mistral's format: not read with "auto"
    assert weight_bytes(str(tmp_path), "auto") == 1024
    assert weight_bytes(str(tmp_path), "mistral") == 5000
    assert weight_bytes(str(tmp_path / "absent"), "auto") is None
