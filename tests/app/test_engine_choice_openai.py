"""The server dialect in the settings chooses the OpenAI Realtime engine."""

from __future__ import annotations

from voxdesk.app.engines import build_engine, describe_engine
from voxdesk.app.settings import EngineSettings, settings_from_dict
from voxdesk.engine import EngineKind
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import VllmRealtimeEngine
from voxdesk.engine.remote.wyoming import WyomingEngine


def test_the_openai_dialect_builds_the_openai_engine_with_url_model_key_and_language() -> None:
    choice = EngineSettings(
        kind=EngineKind.REMOTE,
        server_dialect="openai",
        server_url="wss://api.openai.com/v1/realtime?intent=transcription",
        server_model="gpt-4o-transcribe",
        api_key="sk-123",
        language="de",
    )
    engine = build_engine(choice)
    assert isinstance(engine, OpenAIRealtimeEngine)
    assert engine.settings == OpenAISettings(choice.server_url, "gpt-4o-transcribe", "sk-123", "de")
    assert engine.url == choice.server_url
    assert describe_engine(choice) == f"OpenAI Realtime server {choice.server_url}"


def test_vllm_is_the_default_dialect_and_tcp_urls_stay_wyoming() -> None:
    assert isinstance(build_engine(EngineSettings(kind=EngineKind.REMOTE)), VllmRealtimeEngine)
    wyoming = EngineSettings(kind=EngineKind.REMOTE, server_dialect="openai", server_url="tcp://127.0.0.1:10300")
    assert isinstance(build_engine(wyoming), WyomingEngine)


def test_an_unknown_dialect_in_the_file_falls_back_with_a_warning() -> None:
    settings, warnings = settings_from_dict({"engine": {"server_dialect": "grpc"}})
    assert settings.engine.server_dialect == "vllm"
    assert warnings == ["ignored engine.server_dialect: 'grpc' is not one of vllm, openai"]
