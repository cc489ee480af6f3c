"""A ``tcp://`` server URL in the settings chooses the Wyoming engine."""

from __future__ import annotations

from voxdesk.app.engines import build_engine, describe_engine
from voxdesk.app.settings import EngineSettings
from voxdesk.engine import EngineKind
from voxdesk.engine.remote.realtime import VllmRealtimeEngine
from voxdesk.engine.remote.wyoming import WyomingEngine


def test_a_tcp_url_builds_the_wyoming_engine_with_the_model_and_language() -> None:
    choice = EngineSettings(
        kind=EngineKind.REMOTE, server_url="tcp://ha.local:10300", server_model="tiny", language="de"
    )
    engine = build_engine(choice)
    assert isinstance(engine, WyomingEngine)
    assert (engine.host, engine.port, engine.settings.model, engine.settings.language) == (
        "ha.local",
        10300,
        "tiny",
        "de",
    )
    assert describe_engine(choice) == "Wyoming server tcp://ha.local:10300"


def test_auto_language_leaves_it_to_the_server_and_ws_urls_stay_realtime() -> None:
    wyoming = build_engine(EngineSettings(kind=EngineKind.REMOTE, server_url="tcp://127.0.0.1:10300"))
    assert isinstance(wyoming, WyomingEngine) and wyoming.settings.language is None
    assert isinstance(
        build_engine(EngineSettings(kind=EngineKind.REMOTE, server_url="ws://h:8000")), VllmRealtimeEngine
    )
