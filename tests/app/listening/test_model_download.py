"""The window's engine status while a chosen Whisper model downloads: real controller, real
huggingface_hub client, a loopback hub serving the random-weight base.en."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.hub_server import empty_hub_cache, serve_model, use_hub
from tests.random_whisper import random_whisper
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, EngineState, EngineStatus
from voxdesk.app.settings import Settings

pytestmark = pytest.mark.integration  # loads a downloaded Whisper model


def test_the_engine_status_shows_the_download_then_the_model_runs_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = random_whisper("base.en")
    empty_hub_cache(monkeypatch, tmp_path / "hub")
    settings = Settings()
    settings.engine.whisper_model = "base.en"
    statuses: list[EngineStatus] = []

    def seen(event: ControllerEvent) -> None:
        if isinstance(event, EngineStatus):
            statuses.append(event)

    async def load() -> bool:
        controller = Controller(settings)
        controller.subscribe(seen)
        try:
            return await controller.load_engine()
        finally:
            await controller.aclose()

    with serve_model("Systran/faster-whisper-base.en", folder) as (url, _):
        use_hub(monkeypatch, url)
        assert asyncio.run(load())
    downloading = [s for s in statuses if s.state == EngineState.LOADING and "downloading" in s.detail]
    assert downloading and downloading[-1].detail.startswith("downloading Whisper base.en: 100% of ")
    progress = [s.progress or 0.0 for s in downloading]
    assert progress == sorted(progress) and progress[-1] == pytest.approx(1.0)
    assert statuses[-1].state == EngineState.READY and "Whisper base.en" in statuses[-1].detail

    statuses.clear()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)  # the hub is gone as well
    assert asyncio.run(load())
    assert not [s for s in statuses if "downloading" in s.detail]
