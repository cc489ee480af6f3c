"""``/metrics`` says how long each utterance's decodes waited behind other sessions'."""

from __future__ import annotations

import asyncio

import numpy as np

from tests.engine.realtime.harness import metric, metrics, run, session, transcribe
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.engine.whisper.builtin import BuiltinEngine
from voxdesk.server.realtime.server import ServerConfig, running_server

QUEUE = "voxdesk_realtime_engine_queue_seconds"


def test_two_sessions_at_once_each_report_their_decode_queue_wait(
    engine: BuiltinEngine, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    names = ["command00-slt", "command01-slt"]

    async def scenario() -> None:
        async with running_server(engine, ServerConfig(port=0)) as server:
            before = metric(await metrics(server), f"{QUEUE}_count")

            async def one(name: str) -> str:
                async with session(server) as ws:
                    return (await transcribe(ws, fixture_audio[name])).text

            texts = await asyncio.gather(*(one(name) for name in names))
            for name, text in zip(names, texts, strict=True):
                assert_recognized(speech[name], text)
            after = await metrics(server)
            assert metric(after, f"{QUEUE}_count") >= before + 2  # one per utterance, each fixture has one or more
            assert metric(after, f"{QUEUE}_sum") > 0.0
            assert f'{QUEUE}_bucket{{le="0.5"}}' in after

    run(scenario)
