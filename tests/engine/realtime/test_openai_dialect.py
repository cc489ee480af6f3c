"""The OpenAI Realtime transcription dialect of ``voxdesk serve``, driven by the official ``openai`` SDK.

The SDK connects the way it does to OpenAI (``/v1/realtime?intent=transcription``, a Bearer key)
to a real server on loopback; every server event it receives is also validated against the
SDK's own models (strict, unlike its parser). The conformance rows are those of
``shared/docs/openai-realtime-reference.md`` §8.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from openai import AsyncOpenAI
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedOK, InvalidStatus

from tests.engine.realtime.harness import (
    PARIS,
    REPLY,
    TRANSCRIPTION,
    VOLUME,
    eventually,
    metric,
    metrics,
    recv,
    run,
    ws_url,
)
from tests.engine.realtime.openai_sdk import SESSION, Event, append, next_event, sdk_session, transcripts, until
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.server.realtime.server import RealtimeServer, ServerConfig, running_server


def test_sdk_transcribes_two_turns_sent_back_to_back(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    """Two utterances on one socket, the second sent before the first is transcribed: two items,
    each committed, transcribed and completed in order (§8 rows 1-8)."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, sdk_session(server.port) as conn:
            await conn.session.update(session=SESSION)  # type: ignore[arg-type]
            updated = await next_event(conn)
            assert updated["type"] == "session.updated"
            assert updated["session"]["audio"]["input"]["transcription"]["model"] == "gpt-4o-transcribe"
            for name in (PARIS, VOLUME):
                await append(conn, fixture_audio[name])
                await conn.input_audio_buffer.commit()
            events = await until(conn, "conversation.item.input_audio_transcription.completed")
            events += await until(conn, "conversation.item.input_audio_transcription.completed")
            committed = [e["item_id"] for e in events if e["type"] == "input_audio_buffer.committed"]
            assert len(committed) == 2 and committed[0] != committed[1]
            done = transcripts(events)
            assert list(done) == committed
            assert_recognized(speech[PARIS], done[committed[0]])
            assert_recognized(speech[VOLUME], done[committed[1]])

    run(scenario)


def test_sdk_server_vad_commits_each_utterance_by_itself(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    """With ``server_vad`` and no commit from the client, each utterance is announced by
    ``speech_started`` / ``speech_stopped``, committed under the same item id and completed (§8 row 11)."""

    async def scenario() -> None:
        detection = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 700}
        session = {"type": "transcription", "audio": {"input": {"turn_detection": detection}}}
        silence = np.zeros(SAMPLE_RATE, np.float32)
        async with running_server(engine, ServerConfig(port=0)) as server, sdk_session(server.port) as conn:
            await conn.session.update(session=session)  # type: ignore[arg-type]
            updated = await next_event(conn)
            assert updated["session"]["audio"]["input"]["turn_detection"] == detection
            await append(conn, np.concatenate([silence, fixture_audio[PARIS], silence, fixture_audio[VOLUME], silence]))
            events = await until(conn, "conversation.item.input_audio_transcription.completed")
            events += await until(conn, "conversation.item.input_audio_transcription.completed")
            kinds = [e["type"] for e in events if e["type"].startswith("input_audio_buffer.")]
            assert (
                kinds
                == [
                    "input_audio_buffer.speech_started",
                    "input_audio_buffer.speech_stopped",
                    "input_audio_buffer.committed",
                ]
                * 2
            )
            items = [e["item_id"] for e in events if e["type"].startswith("input_audio_buffer.")]
            assert items[0] == items[1] == items[2] != items[3] == items[4] == items[5]
            started = [e for e in events if e["type"] == "input_audio_buffer.speech_started"]
            stopped = [e for e in events if e["type"] == "input_audio_buffer.speech_stopped"]
            assert 400 <= started[0]["audio_start_ms"] < stopped[0]["audio_end_ms"] < started[1]["audio_start_ms"]
            done = transcripts(events)
            assert_recognized(speech[PARIS], done[items[0]])
            assert_recognized(speech[VOLUME], done[items[3]])

    run(scenario)


def test_sdk_clear_drops_the_uncommitted_turn(engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray]) -> None:
    """``clear`` answers ``cleared``; the cleared audio is never transcribed, and a commit after it
    finds the buffer empty (§8 rows 9, 10)."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, sdk_session(server.port) as conn:
            await append(conn, fixture_audio[PARIS])
            await conn.input_audio_buffer.clear()
            assert (await next_event(conn))["type"] == "input_audio_buffer.cleared"
            await conn.input_audio_buffer.commit()
            error = await next_event(conn)
            assert error["error"]["code"] == "input_audio_buffer_commit_empty", error

    run(scenario)


def openai_error(event: Event, code: str, param: str | None = None, event_id: str | None = None) -> None:
    """``event`` is an ``error`` in OpenAI's envelope with ``code``."""
    assert event["type"] == "error", event
    assert list(event["error"]) == ["type", "code", "message", "param", "event_id"], event
    assert event["error"]["type"] == "invalid_request_error" and event["error"]["code"] == code, event
    assert event["error"]["message"] and event["error"]["param"] == param, event
    assert event["error"]["event_id"] == event_id, event


@pytest.mark.parametrize(
    ("frame", "code", "param"),
    [
        pytest.param("{not json", "invalid_json", None, id="bad_json"),
        pytest.param({"type": "response.create", "event_id": "e1"}, "unknown_event", "type", id="unknown_event"),
        pytest.param(
            {
                "type": "session.update",
                "event_id": "e1",
                "session": {"audio": {"input": {"format": {"type": "audio/pcmu"}}}},
            },
            "unsupported_audio_format",
            "session.audio.input.format",
            id="g711_format",
        ),
        pytest.param(
            {
                "type": "session.update",
                "event_id": "e1",
                "session": {"audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}},
            },
            "unsupported_audio_format",
            "session.audio.input.format",
            id="rate_16k",
        ),
        pytest.param(
            {"type": "session.update", "event_id": "e1", "session": {"type": "realtime"}},
            "invalid_value",
            "session.type",
            id="conversation_session",
        ),
        pytest.param(
            {
                "type": "session.update",
                "event_id": "e1",
                "session": {"audio": {"input": {"turn_detection": {"type": "semantic_vad"}}}},
            },
            "unsupported_turn_detection",
            "session.audio.input.turn_detection.type",
            id="semantic_vad",
        ),
        pytest.param(
            {"type": "input_audio_buffer.append", "event_id": "e1", "audio": "***"},
            "invalid_audio",
            None,
            id="bad_base64",
        ),
        pytest.param(
            {"type": "input_audio_buffer.commit", "event_id": "e1"},
            "input_audio_buffer_commit_empty",
            None,
            id="empty_commit",
        ),
    ],
)
def test_sdk_error_rows(engine: BuiltinEngine, frame: Event | str, code: str, param: str | None) -> None:
    """Each refused event gets OpenAI's error envelope (echoing its ``event_id``) and the session
    stays open: a ``clear`` right after still gets its reply (§6, §8 rows 9, 13)."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, sdk_session(server.port) as conn:
            await conn.send_raw(frame if isinstance(frame, str) else json.dumps(frame))
            openai_error(await next_event(conn), code, param, None if isinstance(frame, str) else "e1")
            await conn.input_audio_buffer.clear()
            assert (await next_event(conn))["type"] == "input_audio_buffer.cleared"

    run(scenario)


def test_sdk_with_a_wrong_key_is_refused_before_the_upgrade(engine: BuiltinEngine) -> None:
    """With ``--api-key`` the SDK's Bearer key is checked: a wrong one gets HTTP 401 (§8 row 3),
    the right one a session."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, api_key="KEY")) as server:
            with pytest.raises(InvalidStatus) as refused:
                async with sdk_session(server.port, key="sk-wrong"):
                    pass
            assert refused.value.response.status_code == 401
            async with sdk_session(server.port, key="KEY") as conn:
                await conn.input_audio_buffer.clear()
                assert (await next_event(conn))["type"] == "input_audio_buffer.cleared"

    run(scenario)


def test_vllm_clients_keep_the_vllm_dialect(engine: BuiltinEngine) -> None:
    """Without ``intent=transcription`` the same path speaks vLLM's dialect."""

    async def scenario() -> None:
        async with (
            running_server(engine, ServerConfig(port=0)) as server,
            connect(ws_url(server), open_timeout=REPLY) as ws,
        ):
            assert list(await recv(ws)) == ["type", "id", "created"]

    run(scenario)


def test_idle_session_gets_idle_timeout_in_openai_shape_then_close(engine: BuiltinEngine) -> None:
    """The vLLM dialect's idle eviction, in OpenAI's envelope; the SDK sees a clean close."""

    async def scenario() -> None:
        config = ServerConfig(port=0, idle_timeout=0.5)
        async with running_server(engine, config) as server, sdk_session(server.port) as conn:
            openai_error(await next_event(conn), "idle_timeout")
            with pytest.raises(ConnectionClosedOK):
                await conn.recv_bytes()

    run(scenario)


def test_shutdown_completes_the_uncommitted_turn_then_closes_1001(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    """On shutdown a turn not yet committed is not lost: ``server_shutdown``, then the server
    commits it itself and completes it, then closes with 1001; the session counts in /metrics."""

    async def scenario() -> None:
        server = RealtimeServer(engine, ServerConfig(port=0))
        await server.start()
        async with sdk_session(server.port) as conn:
            audio = fixture_audio[PARIS]
            await append(conn, audio)
            seconds = len(audio) / SAMPLE_RATE - 0.2  # soxr holds back its filter delay until a commit

            async def all_read() -> bool:
                return metric(await metrics(server), "voxdesk_realtime_audio_seconds_received_total") >= seconds

            assert await eventually(all_read, TRANSCRIPTION)
            assert metric(await metrics(server), "vllm:websocket_connections_active") == 1
            shutdown = asyncio.create_task(server.shutdown())
            events = await until(conn, "conversation.item.input_audio_transcription.completed")
            error = events[0]
            assert error["type"] == "error" and error["error"]["type"] == "server_error", error
            assert error["error"]["code"] == "server_shutdown", error
            assert events[1]["type"] == "input_audio_buffer.committed", events
            assert_recognized(speech[PARIS], events[-1]["transcript"])
            await next_event(conn)  # conversation.item.done
            with pytest.raises(ConnectionClosedOK) as closed:
                await conn.recv_bytes()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
            await shutdown

    run(scenario)


def test_binary_frames_carrying_json_are_taken(engine: BuiltinEngine) -> None:
    """A binary frame with a JSON event is handled like a text frame, as the SDK's parser does (§8 row 5)."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, sdk_session(server.port) as conn:
            await conn.send_raw(json.dumps({"type": "input_audio_buffer.clear"}).encode())
            assert (await next_event(conn))["type"] == "input_audio_buffer.cleared"

    run(scenario)


@pytest.mark.parametrize(
    "query",
    ["?intent=transcription", "?model=&intent=transcription", "?api-version=x&intent=transcription&model=m"],
)
def test_the_intent_query_selects_the_openai_dialect(engine: BuiltinEngine, query: str) -> None:
    """``intent=transcription`` with or without ``model`` (empty or not) and unknown keys (§8 row 2)."""

    async def scenario() -> None:
        async with (
            running_server(engine, ServerConfig(port=0)) as server,
            connect(ws_url(server, "/v1/realtime" + query), open_timeout=REPLY) as ws,
        ):
            created = await recv(ws)
            assert created["type"] == "session.created" and created["session"]["type"] == "transcription"

    run(scenario)


def test_sdk_base_url_without_v1_reaches_the_server_with_auth(engine: BuiltinEngine) -> None:
    """``websocket_base_url="ws://HOST:PORT"`` makes the SDK ask for ``/realtime?intent=transcription``
    (§1.1): served too, behind the same key check."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, api_key="KEY")) as server:
            for key, status in (("sk-wrong", 401), ("KEY", None)):
                client = AsyncOpenAI(api_key=key, websocket_base_url=f"ws://127.0.0.1:{server.port}")
                try:
                    async with client.realtime.connect(extra_query={"intent": "transcription"}) as conn:
                        assert (await next_event(conn))["session"]["type"] == "transcription"
                        refused = None
                except InvalidStatus as error:
                    refused = error.response.status_code
                assert refused == status

    run(scenario)
