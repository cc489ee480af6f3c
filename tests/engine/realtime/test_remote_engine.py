"""The remote engine against ``voxdesk serve`` on loopback, through real sockets."""

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
from voxdesk.engine import EngineUnavailable, ProvisionalText, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.builtin import BuiltinEngine
from voxdesk.engine.events import EngineEvent
from voxdesk.engine.realtime.client import RemoteEngine, RemoteSettings, backoff
from voxdesk.engine.realtime.server import ServerConfig, running_server
from voxdesk.engine.testing import FakeTickEngine


def test_remote_engine_transcribes_through_voxdesk_serve(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    async def scenario() -> tuple[str, list[EngineEvent]]:
        async with running_server(engine, ServerConfig(port=0)) as server:
            remote = RemoteEngine(RemoteSettings(url=f"ws://127.0.0.1:{server.port}", model="voxdesk-builtin"))
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


def test_remote_engine_keeps_committed_text_and_reconnects_after_a_dropped_connection() -> None:
    audio = np.full(16_000 * 4, 0.1, np.float32)  # 4 s: 50 ticks from the fake engine

    async def paced() -> AsyncIterator[np.ndarray]:
        for start in range(0, len(audio), 1600):
            await asyncio.sleep(0.02)
            yield audio[start : start + 1600]

    async def scenario() -> tuple[list[EngineEvent], int]:
        async with (
            running_server(FakeTickEngine(), ServerConfig(port=0)) as server,
            CuttableProxy(server.port) as proxy,
        ):
            remote = RemoteEngine(RemoteSettings(url=f"ws://127.0.0.1:{proxy.port}"))
            events: list[EngineEvent] = []
            async for event in remote.stream(paced()):
                events.append(event)
                if sum(isinstance(e, TextDelta) for e in events) == 10 and proxy.cuts == 0:
                    proxy.cut()
            return events, proxy.cuts

    events, cuts = asyncio.run(scenario())
    assert cuts == 1
    lost = [e for e in events if isinstance(e, StreamError)]
    assert [(e.code, e.fatal) for e in lost] == [("connection_lost", False)]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    [done] = [e for e in events if isinstance(e, UtteranceDone)]
    assert "".join(deltas) == done.text
    before_cut = deltas[:10]
    assert "".join(before_cut) == "tick " * 10, "text committed before the drop was lost"
    assert done.text.startswith("tick " * 10)
    assert done.text.count("tick") > 20, "the stream did not go on after reconnecting"


def test_a_refused_api_key_is_a_clear_error(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0, api_key="right")) as server:
            url = f"ws://127.0.0.1:{server.port}"
            with pytest.raises(EngineUnavailable, match="refused the API key"):
                await RemoteEngine(RemoteSettings(url=url, api_key="wrong")).load()
            await RemoteEngine(RemoteSettings(url=url, api_key="right", model="voxdesk-builtin")).load()

    asyncio.run(scenario())


def test_unknown_model_and_unreachable_server_are_clear_errors(engine: BuiltinEngine) -> None:
    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            with pytest.raises(EngineUnavailable, match="does not serve model 'whisper-9'"):
                await RemoteEngine(RemoteSettings(url=f"ws://127.0.0.1:{server.port}", model="whisper-9")).load()
            port = server.port
        with pytest.raises(EngineUnavailable, match="cannot reach"):
            await RemoteEngine(RemoteSettings(url=f"ws://127.0.0.1:{port}")).load()

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
            remote = RemoteEngine(RemoteSettings(url=f"wss://localhost:{server.port}", ca_file=str(cert)))
            await remote.load()
            report = await transcribe_audio(remote, np.zeros(16_000, np.float32), realtime=False)
            with pytest.raises(EngineUnavailable):
                await RemoteEngine(RemoteSettings(url=f"wss://localhost:{server.port}")).load()  # untrusted cert
            return report.text

    assert asyncio.run(scenario()) == "tick " * 12


def test_backoff_grows_to_a_cap_with_jitter() -> None:
    delays = list(itertools.islice(backoff(initial=0.5, factor=2.0, cap=4.0, jitter=0.2), 6))
    for delay, nominal in zip(delays, [0.5, 1.0, 2.0, 4.0, 4.0, 4.0], strict=True):
        assert nominal * 0.8 <= delay <= nominal * 1.2
