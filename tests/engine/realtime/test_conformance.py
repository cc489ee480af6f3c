"""Conformance of ``voxdesk serve``'s ``/v1/realtime`` with vLLM 0.33: what only a real socket shows.

Every test starts a server on 127.0.0.1 (port 0) around the session's built-in engine (Whisper
tiny.en on the CPU) and talks to it with the ``websockets`` client: handshakes and auth, pings,
binary frames, idle timeouts, backpressure, shutdown, disconnects, HTTP routes, and real speech end
to end. Rows that one reply shows (most of the error table) are checked on the sans-I/O protocol in
``test_conformance_rows.py``; the harness is ``harness.py``.

Test names point at sections of ``docs/realtime-protocol.md``:

- ``test_s2_*`` / ``test_s3_*``: the wire shapes of section 2, the lifecycle of section 3;
- ``test_s4_*``: rows of the section 4 error table;
- ``test_s15_itemN_*`` / ``test_s16_itemN_*``: item N of the server (15) or client (16) checklist,
  as far as it is the server's business;
- ``test_vx_*``: Voxdesk's own choices beyond vLLM (auth, limits, idle timeout, provisional text).

Not covered, because they are Voxtral token math and not the built-in engine's: section 15 item 9's
token counts and delays (the built-in engine reports no tokens, so only the shape and arithmetic of
``usage`` are checked), item 13 (``max_model_len``), and section 16 items 6 (empty deltas are a
client concern), 12 (Voxtral latency) and 13 (older vLLM releases). Item 15's 20 s / 20 s ping is
checked as a mechanism with short intervals, not waited out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.engine.realtime.harness import (
    BROWSER,
    EMPTY_DONE,
    MODEL,
    PARIS,
    REPLY,
    SESSION_CREATED,
    TRANSCRIPTION,
    USAGE_KEYS,
    VLLM_SERVER_EVENTS,
    VOLUME,
    Event,
    FaultInjectingEngine,
    append,
    append_one,
    assert_quiet,
    assert_still_serving,
    commit,
    compact,
    eventually,
    expect_closed,
    expect_error,
    get,
    handshake_status,
    hold_session,
    http_url,
    metric,
    metrics,
    paced_generation,
    recv,
    recv_text,
    run,
    says,
    send,
    session,
    transcribe,
    until_done,
    update,
    ws_url,
)
from tests.recognition import ACCURACY, heard_in_problem, wer
from tests.speech_fixtures import Fixture
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.engine.wire.realtime.protocol import FINAL_WITHOUT_GENERATION_MESSAGE
from voxdesk.server.realtime.server import InsecureBindError, RealtimeServer, ServerConfig, running_server


@pytest.fixture(scope="module")
def paris(fixture_audio: dict[str, np.ndarray]) -> np.ndarray:
    return fixture_audio[PARIS]


# Section 2: the wire protocol


def test_s2_server_events_serialized_like_pydantic(
    engine: BuiltinEngine, paris: np.ndarray, speech: dict[str, Fixture]
) -> None:
    """Deltas and done: compact JSON, ``type`` first, every field in declaration order.

    Section 16 item 8 too: ``usage`` is vLLM's ``UsageInfo``, integer counts, total = prompt +
    completion, null details.
    """

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            generation = await transcribe(ws, paris)
            for raw, event in zip(generation.frames, generation.events, strict=True):
                assert raw == compact(event), raw
                if event["type"] == "transcription.delta":
                    assert list(event) == ["type", "delta"] and isinstance(event["delta"], str)
            assert list(generation.done) == ["type", "text", "usage"]
            assert says(generation.text, speech[PARIS]), generation.text
            usage = generation.done["usage"]
            assert list(usage) == USAGE_KEYS
            assert all(isinstance(usage[key], int) and usage[key] >= 0 for key in USAGE_KEYS[:3]), usage
            assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"], usage
            assert usage["prompt_tokens_details"] is None and usage["completion_tokens_details"] is None

    run(scenario)


# Section 3: the lifecycle


def test_s3_concurrent_sessions_are_independent(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    """Two sockets streaming at once each get their own transcript, nothing of the other's."""

    async def one(server: RealtimeServer, name: str) -> str:
        async with session(server) as ws:
            await commit(ws)
            await append(ws, fixture_audio[name], chunk_seconds=0.1, pace=0.01)
            await commit(ws, final=True)
            return (await until_done(ws)).text

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            paris_text, volume_text = await asyncio.gather(one(server, PARIS), one(server, VOLUME))
            assert says(paris_text, speech[PARIS]), paris_text
            assert says(volume_text, speech[VOLUME]), volume_text

    run(scenario)


# Section 4: what only a socket shows of the error table


def test_s4_invalid_json_keeps_connection_open(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server, model=None) as ws:
            for text in ("not json", "{", '{"type": "session.update",}', ""):
                await send(ws, text)
                assert await recv_text(ws) == '{"type":"error","error":"Invalid JSON","code":"invalid_json"}'
            await assert_still_serving(ws)

    run(scenario)


def test_s4_empty_commit_gives_empty_done(engine: BuiltinEngine) -> None:
    """Section 15 item 11: commit then final with no audio: ``done`` with "" and zero usage, exactly."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            for _ in range(2):
                await commit(ws)
                await commit(ws, final=True)
                assert await recv_text(ws, TRANSCRIPTION) == EMPTY_DONE

    run(scenario)


@pytest.mark.parametrize("fail_with", ["exception", "stream_error"])
def test_s4_exception_during_generation_is_processing_error(
    engine: BuiltinEngine, paris: np.ndarray, speech: dict[str, Fixture], fail_with: str
) -> None:
    """Section 15 item 12, 16 item 7: sanitised ``processing_error``, no ``done``, a new commit works."""
    failing = FaultInjectingEngine(engine, fail_first=1, fail_with=fail_with)

    async def scenario() -> None:
        async with running_server(failing, ServerConfig(port=0)) as server, session(server) as ws:
            await commit(ws)
            await append_one(ws, paris[:SAMPLE_RATE])  # one chunk: none left over for later
            error = await expect_error(ws, "processing_error")
            assert "0x" not in error["error"] and "/srv" not in error["error"] and "Traceback" not in error["error"]
            await commit(ws, final=True)  # the failed generation is over: a final now is stray
            await expect_error(ws, "invalid_event", FINAL_WITHOUT_GENERATION_MESSAGE)
            await assert_quiet(ws)
            generation = await transcribe(ws, paris)
            assert says(generation.text, speech[PARIS]), generation.text
            assert failing.opened == 2

    run(scenario)


def test_s4_binary_frame_is_invalid_event_and_connection_stays_open(engine: BuiltinEngine) -> None:
    """vLLM drops the socket on a binary frame; Voxdesk answers ``invalid_event`` and goes on."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            for frame in (b"\x00\x01", json.dumps({"type": "session.update", "model": MODEL}).encode()):
                await ws.send(frame)
                await expect_error(ws, "invalid_event")
            await assert_still_serving(ws)

    run(scenario)


def test_s4_client_disconnect_mid_generation_frees_session(engine: BuiltinEngine, paris: np.ndarray) -> None:
    """Section 15 item 14, 16 item 11: an abrupt disconnect ends the engine session and the connection."""
    recording = FaultInjectingEngine(engine)

    async def scenario() -> None:
        async with running_server(recording, ServerConfig(port=0)) as server:
            async with session(server) as ws:
                await commit(ws)
                await append(ws, paris[: SAMPLE_RATE // 2])
                assert await eventually(lambda: recording.opened == 1)
                ws.transport.abort()

            async def freed() -> bool:
                exposition = await metrics(server)
                return (
                    recording.closed == 1
                    and server.active_connections == 0
                    and metric(exposition, "voxdesk_realtime_sessions_active") == 0
                    and metric(exposition, "vllm:websocket_connections_active") == 0
                )

            assert await eventually(freed), (recording.closed, server.active_connections)
            async with session(server) as ws:
                await assert_still_serving(ws)

    run(scenario)


def test_s4_handshake_without_valid_bearer_token_is_401(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, api_key="KEY")) as server:
            url = ws_url(server)
            assert await handshake_status(url) == 401
            assert await handshake_status(url, {"Authorization": "Bearer WRONG"}) == 401
            assert await handshake_status(url, {"Authorization": "KEY"}) == 401
            assert await handshake_status(url, {"Authorization": "Bearer KEY"}) is None
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, open_timeout=REPLY):
                    pass
            assert json.loads(refused.value.response.body) == {"error": "Unauthorized"}

    run(scenario)


# Section 15: what a compatible server must do


def test_s15_item1_realtime_route_only(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            assert await handshake_status(ws_url(server, "/v1/realtime")) is None
            assert await handshake_status(ws_url(server, "/v1/realtime?model=x")) is None  # FastAPI ignores it
            for path in ("/v1/realtime/x", "/realtime", "/v1/audio/transcriptions"):
                assert await handshake_status(ws_url(server, path)) == 404, path

    run(scenario)


def test_s15_item2_session_created_first(engine: BuiltinEngine) -> None:
    """``session.created`` comes before any answer, even to a message sent right after the handshake."""

    async def scenario() -> None:
        async with (
            running_server(engine, ServerConfig(port=0)) as server,
            connect(ws_url(server), open_timeout=REPLY) as ws,
        ):
            await send(ws, "not json")
            raw = await recv_text(ws)
            match = SESSION_CREATED.fullmatch(raw)
            assert match, raw
            assert abs(int(match.group(1)) - time.time()) < 10
            await expect_error(ws, "invalid_json", "Invalid JSON")

    run(scenario)


def test_s15_item4_skip_model_validation_switch(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        config = ServerConfig(port=0, skip_model_validation=True)
        async with running_server(engine, config) as server, session(server, model="any-model-at-all") as ws:
            await assert_quiet(ws)
            await commit(ws)
            await commit(ws, final=True)
            assert (await until_done(ws)).text == ""

    run(scenario)


def test_s15_item4_served_model_name_is_configurable(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        config = ServerConfig(port=0, served_model_name="my-model")
        async with running_server(engine, config) as server, session(server, model=None) as ws:
            await update(ws, MODEL)
            await expect_error(ws, "model_not_found", f"The model `{MODEL}` does not exist.")
            await update(ws, "my-model")
            await assert_quiet(ws)
            await commit(ws)
            await commit(ws, final=True)
            assert (await until_done(ws)).text == ""

    run(scenario)


def test_s15_item9_deltas_concatenate_to_done_text(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    """Two sentences in one generation: deltas in order, all before ``done``, joined they are its text."""
    audio = np.concatenate([fixture_audio[PARIS], fixture_audio[VOLUME]])

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            generation = await transcribe(ws, audio)
            kinds = [event["type"] for event in generation.events]
            assert kinds == ["transcription.delta"] * (len(kinds) - 1) + ["transcription.done"], kinds
            assert len([d for d in generation.deltas if d.strip()]) >= 2, generation.deltas
            assert "".join(generation.deltas) == generation.text
            problems = [heard_in_problem(speech[name], generation.text) for name in (PARIS, VOLUME)]
            assert problems == [None, None], problems

    run(scenario)


def test_s15_item14_idle_connection_gets_idle_timeout_then_close(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with (
            running_server(engine, ServerConfig(port=0, idle_timeout=1.0)) as server,
            connect(ws_url(server), open_timeout=REPLY) as ws,
        ):
            opened = time.monotonic()
            assert (await recv(ws))["type"] == "session.created"
            error = await expect_error(ws, "idle_timeout")
            waited = time.monotonic() - opened
            assert 0.9 <= waited <= 3.0, waited
            closed = await expect_closed(ws)
            assert closed.rcvd is not None and closed.rcvd.code == 1000, closed
            assert time.monotonic() - opened <= 3.5
            assert error["error"]
        assert await eventually(lambda: server.active_connections == 0)

    run(scenario)


def test_s15_item14_messages_reset_the_idle_timer(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, idle_timeout=0.8)) as server, session(server) as ws:
            for _ in range(5):  # 2 s in all (two and a half timeouts), never 0.8 s without a message
                await asyncio.sleep(0.4)
                await update(ws)
            await assert_quiet(ws, 0.2)
            await assert_still_serving(ws)

    run(scenario)


def test_s15_item14_idle_timer_waits_for_a_finishing_generation(engine: BuiltinEngine) -> None:
    """After ``final`` the client is waiting for the server, so it is not idle."""
    slow = FaultInjectingEngine(engine, finish_delay=1.5)

    async def scenario() -> None:
        async with running_server(slow, ServerConfig(port=0, idle_timeout=0.5)) as server, session(server) as ws:
            await commit(ws)
            await commit(ws, final=True)
            assert (await until_done(ws, timeout=REPLY)).text == ""

    run(scenario)


def test_s15_item15_metrics(engine: BuiltinEngine) -> None:
    """vLLM's three ``vllm:websocket_*`` metrics (types and buckets of section 10), counting a real connection."""
    duration = "vllm:websocket_connection_duration_seconds"

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            status, content_type, body = await get(http_url(server, "/metrics"))
            assert status == 200 and content_type.startswith("text/plain")
            before = body.decode()
            types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", before, re.MULTILINE))
            assert types.get("vllm:websocket_connections_active") == "gauge", types
            assert "counter" in (types.get("vllm:websocket_connections"), types.get("vllm:websocket_connections_total"))
            assert types.get(duration) == "histogram", types
            buckets = re.findall(rf'^{re.escape(duration)}_bucket\{{le="([^"]+)"\}}', before, re.MULTILINE)
            assert [float(le) for le in buckets] == [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, float("inf")]
            async with session(server) as ws:
                during = await metrics(server)
                assert metric(during, "vllm:websocket_connections_active") == 1
                assert metric(during, "vllm:websocket_connections_total") == (
                    metric(before, "vllm:websocket_connections_total") + 1
                )
                await assert_still_serving(ws)

            async def counted() -> bool:
                after = await metrics(server)
                return metric(after, "vllm:websocket_connections_active") == 0 and metric(
                    after, "vllm:websocket_connection_duration_seconds_count"
                ) == (metric(before, "vllm:websocket_connection_duration_seconds_count") + 1)

            assert await eventually(counted), await metrics(server)

    run(scenario)


def test_s15_item15_frames_of_16_mib_are_accepted(engine: BuiltinEngine) -> None:
    """uvicorn's 16 MiB frame limit, which vLLM runs under: a frame of exactly 16 MiB is read."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server, model=None) as ws:
            head = '{"type":"big.frame","pad":"'
            frame = head + "a" * (16 * 1024 * 1024 - len(head) - 2) + '"}'
            assert len(frame.encode()) == 16 * 1024 * 1024
            await send(ws, frame)
            await expect_error(ws, "unknown_event", "Unknown event type: big.frame")
            await assert_still_serving(ws)

    run(scenario)


# Section 16: what a client relies on


def test_s16_item1_bearer_token_opens_the_session(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        config = ServerConfig(port=0, api_key="KEY")
        async with (
            running_server(engine, config) as server,
            session(server, headers={"Authorization": "Bearer KEY"}) as ws,
        ):
            await assert_still_serving(ws)

    run(scenario)


def test_s16_item1_server_pings_are_answered_and_connection_stays_open(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        config = ServerConfig(port=0, ping_interval=0.2, ping_timeout=0.5)
        async with running_server(engine, config) as server, session(server) as ws:
            await assert_quiet(ws, 1.2)  # several ping/pong rounds, no client message
            await assert_still_serving(ws)

    run(scenario)


def test_s16_item5_file_streamed_faster_than_real_time_is_fully_transcribed(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    """65 s of speech sent as fast as possible, like vLLM's example file client (section 12.2).

    vLLM queues it all (its audio queue is unbounded) and transcribes every word; the server may slow
    the client down, but must not drop audio.
    """
    fixture = speech["long-slt"]

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            await commit(ws)
            await append(ws, fixture_audio["long-slt"], chunk_seconds=0.5)
            await commit(ws, final=True)
            events: list[Event] = []
            while not events or events[-1]["type"] != "transcription.done":
                events.append(await recv(ws, TRANSCRIPTION))
            errors = [event for event in events if event["type"] == "error"]
            assert not errors, f"{len(errors)} errors, first: {errors[0]}"
            text = events[-1]["text"]
            assert wer([fixture.text], [text]) <= ACCURACY["long-slt"].max_wer, text

    run(scenario)


def test_s16_item10_several_utterances_on_one_socket(
    engine: BuiltinEngine, fixture_audio: dict[str, np.ndarray], speech: dict[str, Fixture]
) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            for name in (PARIS, VOLUME, BROWSER, PARIS):
                generation = await transcribe(ws, fixture_audio[name])
                assert says(generation.text, speech[name]), (name, generation.text)
                assert "".join(generation.deltas) == generation.text

    run(scenario)


# Voxdesk's choices beyond vLLM


def test_vx_provisional_extension_when_asked(engine: BuiltinEngine, paris: np.ndarray) -> None:
    """``"provisional": true`` adds ``{"type":"transcription.provisional","text":...}`` events."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server, provisional=True) as ws:
            generation = await paced_generation(ws, paris)
            provisional = [
                (raw, event)
                for raw, event in zip(generation.frames, generation.events, strict=True)
                if event["type"] == "transcription.provisional"
            ]
            assert provisional, generation.frames
            for raw, event in provisional:
                assert list(event) == ["type", "text"] and isinstance(event["text"], str), raw
                assert raw == compact(event), raw
            assert "".join(generation.deltas) == generation.text

    run(scenario)


def test_vx_without_provisional_only_vllm_event_types(engine: BuiltinEngine, paris: np.ndarray) -> None:
    """The same paced stream without the extension: nothing a vLLM client does not know."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server, session(server) as ws:
            generation = await paced_generation(ws, paris)
            kinds = {event["type"] for event in generation.events}
            assert kinds <= VLLM_SERVER_EVENTS, kinds
            await update(ws, MODEL, provisional=False)
            generation = await paced_generation(ws, paris)
            assert {event["type"] for event in generation.events} <= VLLM_SERVER_EVENTS

    run(scenario)


def test_vx_http_health_models_metrics(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            status, _, _ = await get(http_url(server, "/health"))
            assert status == 200
            status, content_type, body = await get(http_url(server, "/v1/models"))
            assert status == 200 and content_type.startswith("application/json")
            models = json.loads(body)
            assert models["object"] == "list" and len(models["data"]) == 1, models
            assert models["data"][0]["id"] == MODEL and models["data"][0]["object"] == "model", models
            status, _, body = await get(http_url(server, "/metrics"))
            assert status == 200
            for name in (
                "vllm:websocket_connections_active",
                "vllm:websocket_connections_total",
                "vllm:websocket_connection_duration_seconds",
            ):
                assert name in body.decode(), name
            status, _, _ = await get(http_url(server, "/v1/nothing-here"))
            assert status == 404

    run(scenario)


def test_vx_api_key_guards_v1_http_paths(engine: BuiltinEngine) -> None:
    """With an API key, ``/v1/models`` needs it too; ``/health`` and ``/metrics`` (outside /v1) do not."""

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, api_key="KEY")) as server:
            status, _, body = await get(http_url(server, "/v1/models"))
            assert status == 401 and json.loads(body) == {"error": "Unauthorized"}
            status, _, _ = await get(http_url(server, "/v1/models"), {"Authorization": "Bearer nope"})
            assert status == 401
            status, _, body = await get(http_url(server, "/v1/models"), {"Authorization": "Bearer KEY"})
            assert status == 200 and json.loads(body)["data"][0]["id"] == MODEL
            assert (await get(http_url(server, "/health")))[0] == 200
            assert (await get(http_url(server, "/metrics")))[0] == 200

    run(scenario)


def test_vx_insecure_bind_is_refused_without_api_key(engine: BuiltinEngine) -> None:
    for host in ("0.0.0.0", "::", "192.168.1.20", "example.org"):
        with pytest.raises(InsecureBindError):
            RealtimeServer(engine, ServerConfig(host=host))
        RealtimeServer(engine, ServerConfig(host=host, allow_insecure_no_api_key=True))
        RealtimeServer(engine, ServerConfig(host=host, api_key="KEY"))
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"):
        RealtimeServer(engine, ServerConfig(host=host))


def test_vx_max_sessions_refuses_the_next_handshake_with_503(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, max_sessions=2)) as server:
            async with session(server) as first, session(server):
                assert await handshake_status(ws_url(server)) == 503
                await assert_still_serving(first)  # the open sessions are unaffected
            assert await eventually(lambda: server.active_connections == 0)
            assert await handshake_status(ws_url(server)) is None
            # Four handshakes at once: two get in, two are refused.
            statuses = await asyncio.gather(*(hold_session(server) for _ in range(4)))
            assert sorted(statuses, key=str) == [503, 503, None, None], statuses

    run(scenario)


def test_s4_message_audio_cap_setting_is_applied(engine: BuiltinEngine) -> None:
    """``max_message_audio=1.0``: a 2 s append is ``invalid_audio``, a 1 s one is accepted."""

    async def scenario() -> None:
        config = ServerConfig(port=0, max_message_audio=1.0)
        async with running_server(engine, config) as server, session(server) as ws:
            await commit(ws)
            await append_one(ws, np.zeros(2 * SAMPLE_RATE, np.float32))
            await expect_error(ws, "invalid_audio", "Invalid audio data")
            await append_one(ws, np.zeros(SAMPLE_RATE, np.float32))
            await assert_quiet(ws, 0.3)
            await commit(ws, final=True)
            assert (await until_done(ws)).text == ""

    run(scenario)


def test_vx_session_audio_cap_is_buffer_full(engine: BuiltinEngine) -> None:
    """``max_session_audio=2.0``: appends beyond 2 s in all get ``buffer_full``; the session goes on."""
    silence = np.zeros(SAMPLE_RATE // 2, np.float32)

    async def scenario() -> None:
        config = ServerConfig(port=0, max_session_audio=2.0)
        async with running_server(engine, config) as server, session(server) as ws:
            await append_one(ws, silence)  # 0.5 s, before any commit
            await commit(ws)
            await append_one(ws, np.zeros(SAMPLE_RATE, np.float32))  # 1.5 s
            await assert_quiet(ws, 0.3)
            await append_one(ws, np.zeros(SAMPLE_RATE, np.float32))  # would be 2.5 s
            await expect_error(ws, "buffer_full")
            await append_one(ws, silence)  # exactly 2.0 s
            await assert_quiet(ws, 0.3)
            await append_one(ws, silence[:320])
            await expect_error(ws, "buffer_full")
            await commit(ws, final=True)
            assert (await until_done(ws)).text == ""
            await send(ws, "oops")
            await expect_error(ws, "invalid_json")

    run(scenario)


def test_vx_shutdown_finishes_open_generation_then_closes_1001(
    engine: BuiltinEngine, paris: np.ndarray, speech: dict[str, Fixture]
) -> None:
    async def scenario() -> None:
        server = RealtimeServer(engine, ServerConfig(port=0))
        await server.start()
        async with session(server) as ws:
            await commit(ws)
            await append(ws, paris)
            while not (await recv(ws, TRANSCRIPTION)).get("delta", "").strip():
                pass  # the server has read the audio once the sentence comes back
            shutdown = asyncio.create_task(server.shutdown())
            generation = await until_done(ws, expect_error="server_shutdown")
            assert says(generation.text, speech[PARIS]), generation.text
            closed = await expect_closed(ws)
            assert closed.rcvd is not None and closed.rcvd.code == 1001, closed
            await shutdown

    run(scenario)


def test_vx_shutdown_while_client_still_appends(engine: BuiltinEngine, paris: np.ndarray) -> None:
    """A client that keeps streaming during shutdown still gets ``done`` and a 1001 close, not 1011."""

    async def scenario() -> None:
        server = RealtimeServer(engine, ServerConfig(port=0))
        await server.start()
        async with session(server) as ws:
            await commit(ws)
            await append(ws, paris[:SAMPLE_RATE])
            await asyncio.sleep(0.3)
            shutdown = asyncio.create_task(server.shutdown())
            await asyncio.sleep(0.05)
            with contextlib.suppress(ConnectionClosed):
                await append(ws, paris[SAMPLE_RATE:])
            await until_done(ws, expect_error="server_shutdown")
            closed = await expect_closed(ws)
            assert closed.rcvd is not None and closed.rcvd.code == 1001, closed
            await shutdown

    run(scenario)
