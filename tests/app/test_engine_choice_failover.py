"""Several server URLs in settings: the remote engine fails over between them in that order."""

from __future__ import annotations

from pathlib import Path

from voxdesk.app.listening.engine_choice import build_engine
from voxdesk.app.settings import EngineSettings, Settings, load_settings, save_settings
from voxdesk.engine import EngineKind
from voxdesk.engine.realtime.client import RemoteEngine


def test_comma_separated_server_urls_survive_a_save_and_become_the_failover_list(tmp_path: Path) -> None:
    settings = Settings()
    settings.engine = EngineSettings(kind=EngineKind.REMOTE, server_url="ws://a:8000, wss://b:8443/v1/realtime,")
    path = save_settings(settings, tmp_path / "settings.toml")
    loaded, warnings = load_settings(path)
    assert warnings == []
    engine = build_engine(loaded.engine)
    assert isinstance(engine, RemoteEngine)
    assert engine.urls == ["ws://a:8000/v1/realtime", "wss://b:8443/v1/realtime"]
    assert engine.url == engine.urls[0]
    assert engine.move_on() == engine.urls[1] and engine.move_on() == engine.urls[0]
