"""Real-socket harness for the ``/v1/realtime`` conformance tests: a server around the built-in
engine, a ``websockets`` client, and helpers to stream audio and read replies."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import inspect
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.recognition import phrase_problem
from tests.speech_fixtures import Fixture
from voxdesk.engine.events import EngineEvent, StreamError, StreamErrorCode
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.server.realtime.server import RealtimeServer

Event = dict[str, Any]

MODEL = "voxdesk-builtin"
REPLY = 5.0  # seconds allowed for an immediate reply
TRANSCRIPTION = 30.0  # seconds allowed for a real transcription
QUIET = 0.5  # seconds of silence that prove "no reply"
SCENARIO_LIMIT = 60.0

PARIS = "command01-slt"  # "search for weather in paris"
VOLUME = "command02-slt"  # "turn up the volume"
BROWSER = "command00-slt"  # "open the browser"

VLLM_SERVER_EVENTS = {"session.created", "transcription.delta", "transcription.done", "error"}
MODEL_NOT_VALIDATED = "Model not validated. Make sure to validate the model by sending a session.update event."
EMPTY_DONE = (
    '{"type":"transcription.done","text":"","usage":{"prompt_tokens":0,"total_tokens":0,"completion_tokens":0,'
    '"prompt_tokens_details":null,"completion_tokens_details":null}}'
)
USAGE_KEYS = [
    "prompt_tokens",
    "total_tokens",
    "completion_tokens",
    "prompt_tokens_details",
    "completion_tokens_details",
]
SESSION_CREATED = re.compile(r'\{"type":"session\.created","id":"sess-[0-9a-f]{16}","created":(\d+)\}')


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    """Run one async scenario in a fresh event loop, with an overall time limit."""

    async def limited() -> None:
        await asyncio.wait_for(scenario(), SCENARIO_LIMIT)

    asyncio.run(limited())


def ws_url(server: RealtimeServer, path: str = "/v1/realtime") -> str:
    return f"ws://127.0.0.1:{server.port}{path}"


def http_url(server: RealtimeServer, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"


def compact(event: Event) -> str:
    """``event`` as pydantic's ``model_dump_json()`` writes it: compact, keys in order."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


async def send(ws: ClientConnection, event: Event | str) -> None:
    await ws.send(event if isinstance(event, str) else json.dumps(event))


async def update(ws: ClientConnection, model: Any = MODEL, **extra: Any) -> None:
    await send(ws, {"type": "session.update", "model": model, **extra})


async def commit(ws: ClientConnection, final: bool = False) -> None:
    await send(ws, {"type": "input_audio_buffer.commit", **({"final": True} if final else {})})


async def append(ws: ClientConnection, samples: np.ndarray, chunk_seconds: float = 0.25, pace: float = 0.0) -> None:
    """Stream ``samples`` as appends of ``chunk_seconds``, sleeping ``pace`` seconds after each."""
    step = max(1, int(chunk_seconds * SAMPLE_RATE))
    for start in range(0, len(samples), step):
        await send(ws, {"type": "input_audio_buffer.append", "audio": encode_audio(samples[start : start + step])})
        if pace:
            await asyncio.sleep(pace)


async def append_one(ws: ClientConnection, samples: np.ndarray) -> None:
    """Send ``samples`` as a single append, whatever their length."""
    await send(ws, {"type": "input_audio_buffer.append", "audio": encode_audio(samples)})


async def recv_text(ws: ClientConnection, timeout: float = REPLY) -> str:
    frame = await asyncio.wait_for(ws.recv(), timeout)
    assert isinstance(frame, str), f"the server sent a binary frame: {frame!r}"
    return frame


async def recv(ws: ClientConnection, timeout: float = REPLY) -> Event:
    event = json.loads(await recv_text(ws, timeout))
    assert isinstance(event, dict)
    return event


async def assert_quiet(ws: ClientConnection, seconds: float = QUIET) -> None:
    """Nothing arrives for ``seconds``."""
    try:
        frame = await asyncio.wait_for(ws.recv(), seconds)
    except TimeoutError:
        return
    raise AssertionError(f"expected no reply, got {frame!r}")


async def expect_error(ws: ClientConnection, code: str, message: str | None = None) -> Event:
    """The next frame is an ``error`` with ``code`` (and ``message``), in vLLM's exact shape."""
    raw = await recv_text(ws)
    event: Event = json.loads(raw)
    assert event.get("type") == "error", raw
    assert event.get("code") == code, raw
    assert list(event) == ["type", "error", "code"], raw
    assert raw == compact(event), raw
    assert isinstance(event["error"], str) and event["error"], raw
    if message is not None:
        assert event["error"] == message, raw
    return event


async def expect_closed(ws: ClientConnection, timeout: float = REPLY) -> ConnectionClosed:
    """Wait for the server to close the connection (frames still in flight are skipped)."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    except ConnectionClosed as closed:
        return closed


@dataclass
class Generation:
    """The frames of one generation, up to and including ``transcription.done``."""

    frames: list[str]

    @property
    def events(self) -> list[Event]:
        return [json.loads(frame) for frame in self.frames]

    @property
    def deltas(self) -> list[str]:
        return [event["delta"] for event in self.events if event["type"] == "transcription.delta"]

    @property
    def done(self) -> Event:
        return self.events[-1]

    @property
    def text(self) -> str:
        return str(self.done["text"])


async def until_done(
    ws: ClientConnection, timeout: float = TRANSCRIPTION, expect_error: str | None = None
) -> Generation:
    """Read frames until ``transcription.done``; an ``error`` fails the test unless it is the
    one ``expect_error`` names, which must then arrive (once)."""
    frames: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        raw = await recv_text(ws, max(0.01, deadline - time.monotonic()))
        event = json.loads(raw)
        if event["type"] == "error" and expect_error is not None and event["code"] == expect_error:
            expect_error = None
            continue
        assert event["type"] != "error", f"unexpected error: {raw}"
        if event["type"] == "transcription.done":
            assert expect_error is None, f"no {expect_error} error before done"
        frames.append(raw)
        if event["type"] == "transcription.done":
            return Generation(frames)


async def transcribe(ws: ClientConnection, samples: np.ndarray, chunk_seconds: float = 0.25) -> Generation:
    """One utterance the way vLLM's clients do it: commit, appends, final, wait for done."""
    await commit(ws)
    await append(ws, samples, chunk_seconds)
    await commit(ws, final=True)
    return await until_done(ws)


async def assert_still_serving(ws: ClientConnection) -> None:
    """A valid ``session.update`` and an empty utterance still get their ``transcription.done``."""
    await update(ws)
    await commit(ws)
    await commit(ws, final=True)
    assert (await until_done(ws)).text == ""


@contextlib.asynccontextmanager
async def session(
    server: RealtimeServer, model: Any = MODEL, headers: dict[str, str] | None = None, **extra: Any
) -> AsyncIterator[ClientConnection]:
    """A connection past ``session.created`` and, unless ``model`` is None, ``session.update``."""
    async with connect(ws_url(server), additional_headers=headers, open_timeout=REPLY) as ws:
        created = await recv(ws)
        assert created["type"] == "session.created", created
        if model is not None:
            await update(ws, model, **extra)
        yield ws


def says(text: str, fixture: Fixture) -> bool:
    """``text`` is ``fixture``'s phrase within the margin of :mod:`tests.recognition`."""
    return phrase_problem(fixture, text) is None


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET, error statuses included."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=REPLY) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


async def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    return await asyncio.to_thread(http_get, url, headers)


def metric(exposition: str, name: str) -> float:
    """The value of an unlabelled Prometheus sample."""
    match = re.search(rf"^{re.escape(name)} (\S+)$", exposition, re.MULTILINE)
    assert match, f"{name} not in metrics:\n{exposition}"
    return float(match.group(1))


async def metrics(server: RealtimeServer) -> str:
    status, _, body = await get(http_url(server, "/metrics"))
    assert status == 200
    return body.decode()


async def eventually(check: Callable[[], bool | Awaitable[bool]], timeout: float = 3.0) -> bool:
    """Poll ``check`` (plain or async) until it holds or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while not await _holds(check()):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def handshake_status(url: str, headers: dict[str, str] | None = None) -> int | None:
    """The HTTP status a refused handshake got; None if it was accepted."""
    try:
        async with connect(url, additional_headers=headers, open_timeout=REPLY) as ws:
            assert (await recv(ws))["type"] == "session.created"
            return None
    except InvalidStatus as refused:
        return refused.response.status_code


class FaultInjectingEngine:
    """The real engine with FAKE failures injected: counts sessions, can fail or slow them down."""

    name = "fault-injecting"
    detects_speech = True

    def __init__(
        self, inner: BuiltinEngine, fail_first: int = 0, fail_with: str = "exception", finish_delay: float = 0.0
    ) -> None:
        self.inner = inner
        self.fail_first = fail_first
        self.fail_with = fail_with  # "exception" (raised) or "stream_error" (a fatal StreamError event)
        self.finish_delay = finish_delay
        self.opened = 0
        self.closed = 0

    async def load(self, progress: Any = None) -> None:
        await self.inner.load()

    async def aclose(self) -> None:
        pass

    def stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncIterator[EngineEvent]:
        return self._stream(audio)

    async def _stream(self, audio: AsyncIterable[np.ndarray]) -> AsyncGenerator[EngineEvent, None]:
        self.opened += 1
        try:
            if self.opened <= self.fail_first:
                async for _chunk in audio:
                    secret = "engine exploded at 0x7f3a2b1c in /srv/secret/engine.py"
                    if self.fail_with == "exception":
                        raise RuntimeError(secret)
                    yield StreamError(StreamErrorCode.PROCESSING_ERROR, secret, 0.0, fatal=True)
                    return
                return
            async for event in self.inner.stream(audio):
                yield event
            await asyncio.sleep(self.finish_delay)
        finally:
            self.closed += 1


async def hold_session(server: RealtimeServer) -> int | None:
    """Open a session and keep it for a moment (so the others overlap); the refusal status if refused."""
    try:
        async with connect(ws_url(server), open_timeout=REPLY) as ws:
            assert (await recv(ws))["type"] == "session.created"
            await asyncio.sleep(0.3)
            return None
    except InvalidStatus as refused:
        return refused.response.status_code


def b64(raw: bytes) -> str:
    """``raw`` bytes as base64 text, for appends that ``encode_audio`` cannot produce."""
    return base64.b64encode(raw).decode("ascii")


async def _holds(result: bool | Awaitable[bool]) -> bool:
    return await result if inspect.isawaitable(result) else result


async def paced_generation(ws: ClientConnection, samples: np.ndarray) -> Generation:
    """A generation streamed at about twice real time, so the engine has time for partial decodes."""
    await commit(ws)
    reader = asyncio.create_task(until_done(ws))
    await append(ws, samples, chunk_seconds=0.1, pace=0.05)
    await commit(ws, final=True)
    return await reader
