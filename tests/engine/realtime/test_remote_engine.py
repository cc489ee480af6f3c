"""The vLLM realtime engine against ``voxdesk serve`` on loopback, through real sockets."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from tests.speech_fixtures import Fixture
from tests.tcp_proxy import CuttableProxy
from voxdesk.app.files.transcription import transcribe_audio
from voxdesk.app.textnorm import normalize_text
from voxdesk.engine import EngineUnavailable, ProvisionalText, StreamError, TextDelta, TextRetracted, UtteranceDone
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.remote.realtime import VllmRealtimeEngine, VllmRealtimeSettings, backoff
from voxdesk.engine.testing import FakeTickEngine
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.server.realtime.server import RealtimeServer, ServerConfig, running_server

pytestmark = pytest.mark.integration  # voxdesk serve processes


def test_remote_engine_transcribes_through_voxdesk_serve(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    async def scenario() -> tuple[str, list[EngineEvent]]:
        async with running_server(engine, ServerConfig(port=0)) as server:
            settings = VllmRealtimeSettings(url=f"ws://127.0.0.1:{server.port}", model="voxdesk-builtin")
            remote = VllmRealtimeEngine(settings)
            await remote.load()
            report = await transcribe_audio(remote, fixture_audio["passage-slt"][: 16_000 * 10], realtime=True)
            return report.text, [t.event for t in report.timeline]

    text, events = asyncio.run(scenario())
    reference = normalize_text(speech["passage-slt"].text)
    assert reference.startswith(" ".join(normalize_text(text).split()[:20]))
    assert len(normalize_text(text).split()) >= 20
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert "".join(deltas) == done.text
    assert len(deltas) > 1, "text arrived only at the end"
    assert any(isinstance(e, ProvisionalText) and e.text for e in events), "the provisional extension was not used"


def _paced(audio: np.ndarray) -> AsyncIterator[np.ndarray]:
    async def chunks() -> AsyncIterator[np.ndarray]:
        for start in range(0, len(audio), 1600):
            await asyncio.sleep(0.02)
            yield audio[start : start + 1600]

    return chunks()


def _after_last_retraction(events: list[EngineEvent]) -> list[EngineEvent]:
    retractions = [i for i, e in enumerate(events) if isinstance(e, TextRetracted)]
    return events[retractions[-1] + 1 :] if retractions else events


def test_a_dropped_connection_replays_the_unfinished_audio_and_loses_no_words() -> None:
    audio = np.full(16_000 * 4, 0.1, np.float32)  # 4 s: exactly 50 ticks from the fake engine

    async def scenario() -> tuple[list[EngineEvent], int]:
        async with (
            running_server(FakeTickEngine(), ServerConfig(port=0)) as server,
            CuttableProxy(server.port) as proxy,
        ):
            remote = VllmRealtimeEngine(VllmRealtimeSettings(url=f"ws://127.0.0.1:{proxy.port}"))
            events: list[EngineEvent] = []
            async for event in remote.stream(_paced(audio)):
                events.append(event)
                if sum(isinstance(e, TextDelta) for e in events) == 10 and proxy.cuts == 0:
                    proxy.cut()
            return events, proxy.cuts

    events, cuts = asyncio.run(scenario())
    assert cuts == 1
    lost = [e for e in events if isinstance(e, StreamError)]
    assert [(e.code, e.fatal) for e in lost] == [("connection_lost", False)]
    assert sum(isinstance(e, TextRetracted) for e in events) == 1, "the lost server's text was not withdrawn"
    assert "".join(e.text for e in events[: events.index(lost[0])] if isinstance(e, TextDelta)) == "tick " * 10
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert done.text == "tick " * 50, "audio was lost or heard twice across the drop"
    assert "".join(e.text for e in _after_last_retraction(events) if isinstance(e, TextDelta)) == done.text
    times = [e.audio_time for e in events]
    assert times == sorted(times)


def test_failover_moves_to_the_next_server_when_one_refuses_or_dies() -> None:
    audio = np.full(16_000 * 3, 0.1, np.float32)  # 3 s: 37 ticks

    async def scenario() -> tuple[list[EngineEvent], list[str], list[str]]:
        async with (
            running_server(FakeTickEngine(), ServerConfig(port=0)) as first,
            running_server(FakeTickEngine(), ServerConfig(port=0)) as second,
            CuttableProxy(first.port) as proxy,
        ):
            loading = RealtimeServer(FakeTickEngine(), ServerConfig(port=0), loaded=False)  # answers 503
            await loading.start()
            urls = [f"ws://127.0.0.1:{port}" for port in (loading.port, proxy.port, second.port)]
            remote = VllmRealtimeEngine(VllmRealtimeSettings(url=f"{urls[0]}, {urls[1]},{urls[2]}"))
            await remote.load()
            used = [remote.url]
            events: list[EngineEvent] = []
            async for event in remote.stream(_paced(audio)):
                events.append(event)
                if sum(isinstance(e, TextDelta) for e in events) == 5 and proxy.cuts == 0:
                    proxy.cut()
                    await first.shutdown()  # gone for good: the session must move on
            used.append(remote.url)
            await loading.shutdown()
            return events, urls, used

    events, urls, used = asyncio.run(scenario())
    assert used == [f"{urls[1]}/v1/realtime", f"{urls[2]}/v1/realtime"]  # 503 while loading: skipped
    [lost] = [e for e in events if isinstance(e, StreamError)]
    assert not lost.fatal and f"going on with {urls[2]}" in lost.message
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert done.text == "tick " * 37


def test_a_refused_api_key_is_a_clear_error(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, api_key="right")) as server:
            url = f"ws://127.0.0.1:{server.port}"
            with pytest.raises(EngineUnavailable, match="refused the API key"):
                await VllmRealtimeEngine(VllmRealtimeSettings(url=url, api_key="wrong")).load()
            await VllmRealtimeEngine(VllmRealtimeSettings(url=url, api_key="right", model="voxdesk-builtin")).load()

    asyncio.run(scenario())


def test_unknown_model_and_unreachable_server_are_clear_errors(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            unknown = VllmRealtimeSettings(url=f"ws://127.0.0.1:{server.port}", model="whisper-9")
            with pytest.raises(EngineUnavailable, match="does not serve model 'whisper-9'"):
                await VllmRealtimeEngine(unknown).load()
            port = server.port
        with pytest.raises(EngineUnavailable, match="cannot reach"):
            await VllmRealtimeEngine(VllmRealtimeSettings(url=f"ws://127.0.0.1:{port}")).load()

    asyncio.run(scenario())


def test_remote_engine_over_tls(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip

    async def scenario() -> str:
        config = ServerConfig(port=0, ssl_certfile=str(cert), ssl_keyfile=str(key))
        async with running_server(FakeTickEngine(), config) as server:
            remote = VllmRealtimeEngine(VllmRealtimeSettings(url=f"wss://localhost:{server.port}", ca_file=str(cert)))
            await remote.load()
            report = await transcribe_audio(remote, np.zeros(16_000, np.float32), realtime=False)
            untrusted = VllmRealtimeEngine(VllmRealtimeSettings(url=f"wss://localhost:{server.port}"))
            with pytest.raises(EngineUnavailable):
                await untrusted.load()
            return report.text

    assert asyncio.run(scenario()) == "tick " * 12


def test_backoff_grows_to_a_cap_with_jitter() -> None:
    delays = list(itertools.islice(backoff(initial=0.5, factor=2.0, cap=4.0, jitter=0.2), 6))
    for delay, nominal in zip(delays, [0.5, 1.0, 2.0, 4.0, 4.0, 4.0], strict=True):
        assert nominal * 0.8 <= delay <= nominal * 1.2
