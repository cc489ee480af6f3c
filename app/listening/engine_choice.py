"""The engine a user chose in settings, built and described."""

from __future__ import annotations

from voxdesk.app.settings import EngineSettings
from voxdesk.engine import EngineKind, StreamingEngine, create_engine
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.failover import split_urls
from voxdesk.engine.remote.openai import OpenAIRealtimeEngine, OpenAISettings
from voxdesk.engine.remote.realtime import RemoteEngine, RemoteSettings
from voxdesk.engine.remote.wyoming import WyomingEngine, WyomingSettings

__all__ = ["build_engine", "describe_engine", "is_wyoming", "server_engine"]


def _is_tcp(url: str) -> bool:
    return url.lower().startswith("tcp://")


def is_wyoming(urls: str) -> bool:
    """Whether server URLs (one, or several comma-separated) name Wyoming servers (``tcp://``)
    rather than ``/v1/realtime`` ones; a list that mixes both goes by its first URL."""
    return _is_tcp((split_urls(urls) or [""])[0])


def server_engine(
    urls: str, dialect: str, model: str = "", api_key: str | None = None, language: str | None = None
) -> StreamingEngine:
    """A new, not yet loaded client engine for the servers ``urls`` lists (comma-separated,
    failed over in that order): Wyoming for ``tcp://`` URLs, else the ``dialect``'s
    (``openai`` or ``vllm``).

    Raises:
        EngineUnavailable: the list mixes ``tcp://`` (Wyoming) and WebSocket URLs.
    """
    listed = split_urls(urls)
    wyoming = [url for url in listed if _is_tcp(url)]
    if wyoming and len(wyoming) < len(listed):
        others = ", ".join(url for url in listed if not _is_tcp(url))
        raise EngineUnavailable(
            f"the server URLs mix Wyoming servers ({', '.join(wyoming)}) with WebSocket ones ({others}); "
            "one engine fails over between servers of one kind only"
        )
    joined = ",".join(listed) or urls
    if wyoming:
        return WyomingEngine(WyomingSettings(url=joined, model=model, language=language))
    if dialect == "openai":
        return OpenAIRealtimeEngine(OpenAISettings(joined, model, api_key, language))
    return RemoteEngine(RemoteSettings(url=joined, model=model, api_key=api_key))


def build_engine(choice: EngineSettings) -> StreamingEngine:
    """A new, not yet loaded engine for ``choice``.

    Raises:
        EngineUnavailable: a remote choice whose server URLs mix Wyoming and WebSocket servers.
    """
    language = None if choice.language == "auto" else choice.language
    if choice.kind == EngineKind.REMOTE:
        return server_engine(
            choice.server_url, choice.server_dialect, choice.server_model, choice.api_key or None, language
        )
    if choice.kind == EngineKind.VLLM:
        return create_engine(EngineKind.VLLM, model=choice.vllm_model)
    model = choice.whisper_model or "tiny.en"
    return create_engine(EngineKind.BUILTIN, model=model, device=choice.device, language=choice.language)


def describe_engine(choice: EngineSettings) -> str:
    """The engine in a few words, for the window's status line."""
    if choice.kind == EngineKind.REMOTE:
        if is_wyoming(choice.server_url):
            kind = "Wyoming server"
        else:
            kind = "OpenAI Realtime server" if choice.server_dialect == "openai" else "remote server"
        return f"{kind} {choice.server_url}"
    if choice.kind == EngineKind.VLLM:
        return f"local GPU (vLLM, {choice.vllm_model})"
    return f"built-in engine (Whisper {choice.whisper_model or 'tiny.en'}, device {choice.device})"
