"""Several server URLs in settings: each client engine fails over between them in that order."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxdesk.app.engines import build_engine
from voxdesk.app.settings import EngineSettings, Settings, load_settings, save_settings
from voxdesk.engine import EngineKind
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine
from voxdesk.engine.remote.realtime import VllmRealtimeEngine
from voxdesk.engine.remote.wyoming import WyomingEngine


def test_comma_separated_server_urls_survive_a_save_and_become_the_failover_list(tmp_path: Path) -> None:
    settings = Settings()
    settings.engine = EngineSettings(kind=EngineKind.REMOTE, server_url="ws://a:8000, wss://b:8443/v1/realtime,")
    path = save_settings(settings, tmp_path / "settings.toml")
    loaded, warnings = load_settings(path)
    assert warnings == []
    engine = build_engine(loaded.engine)
    assert isinstance(engine, VllmRealtimeEngine)
    servers = engine.servers
    assert servers.urls == ["ws://a:8000/v1/realtime", "wss://b:8443/v1/realtime"]
    assert engine.url == servers.urls[0]
    assert servers.move_on() == servers.urls[1] and servers.move_on() == servers.urls[0]


def test_every_server_kind_takes_the_list_in_its_order() -> None:
    openai = build_engine(
        EngineSettings(kind=EngineKind.REMOTE, server_dialect="openai", server_url="ws://a:8000/v1, ws://b:8000/v1")
    )
    assert isinstance(openai, OpenAIRealtimeEngine)
    assert openai.servers.urls == [f"ws://{host}:8000/v1/realtime?intent=transcription" for host in "ab"]
    wyoming = build_engine(EngineSettings(kind=EngineKind.REMOTE, server_url="tcp://a:10300,tcp://b:10301"))
    assert isinstance(wyoming, WyomingEngine)
    assert wyoming.servers.urls == ["tcp://a:10300", "tcp://b:10301"] and (wyoming.host, wyoming.port) == ("a", 10300)
    wyoming.servers.move_on()
    assert (wyoming.host, wyoming.port) == ("b", 10301)


def test_a_list_mixing_wyoming_and_websocket_servers_is_a_clear_error() -> None:
    mixed = EngineSettings(kind=EngineKind.REMOTE, server_url="tcp://a:10300, ws://b:8000")
    with pytest.raises(EngineUnavailable, match=r"mix Wyoming servers \(tcp://a:10300\) with WebSocket ones \(ws://b"):
        build_engine(mixed)
