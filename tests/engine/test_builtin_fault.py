"""A decode that raises mid-utterance in the built-in engine: the session ends with one engine
error in one sentence, the text before it stays, and the engine goes on serving."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest

from tests.engine.failing_decoder import FailingDecoder
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.engine.events import EngineEvent, EngineFault, StreamError, TextDelta, UtteranceDone
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.whisper.builtin import BuiltinEngine

pytestmark = pytest.mark.integration  # loads a Whisper model

FIRST, SECOND = "command00-slt", "command13-slt"
CHUNK = 1600  # 0.1 s


async def paced(audio: np.ndarray) -> AsyncIterator[np.ndarray]:
    """The audio at real-time pace, so the second utterance gets partial decodes while it is spoken."""
    for start in range(0, len(audio), CHUNK):
        yield audio[start : start + CHUNK]
        await asyncio.sleep(CHUNK / SAMPLE_RATE)


def test_a_decode_that_raises_fails_only_its_session_and_the_engine_goes_on(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    pause = np.zeros(SAMPLE_RATE, np.float32)
    two_utterances = np.concatenate([fixture_audio[FIRST], pause, fixture_audio[SECOND]])
    unhandled: list[dict[str, Any]] = []

    async def run() -> tuple[list[EngineEvent], list[EngineEvent], FailingDecoder, int]:
        asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context))
        engine = BuiltinEngine()
        await engine.load()
        assert engine._decoder is not None
        failing = FailingDecoder(engine._decoder)
        engine._decoder = failing  # type: ignore[assignment]
        try:
            failed = [event async for event in engine.stream(paced(two_utterances))]
            after = [event async for event in engine.stream(paced(fixture_audio[SECOND]))]
            return failed, after, failing, len(asyncio.all_tasks())
        finally:
            await engine.aclose()

    failed, after, failing, tasks = asyncio.run(run())
    assert failing.failures == 1, "the second utterance had no partial decode to fail"
    [done] = [e for e in failed if isinstance(e, UtteranceDone)]
    assert_recognized(speech[FIRST], done.text)  # the text before the failure stays
    error = failed[-1]
    assert isinstance(error, StreamError), failed[-3:]
    assert error.fatal and error.engine_fault is EngineFault.SESSION and error.restart_helps
    assert "\n" not in error.message and "Traceback" not in error.message
    assert error.message.startswith("The built-in engine failed while transcribing (ValueError: ")
    assert error.audio_time > done.audio_time
    assert [e for e in failed if isinstance(e, StreamError)] == [error]

    assert_recognized(speech[SECOND], "".join(e.text for e in after if isinstance(e, TextDelta)))
    assert not [e for e in after if isinstance(e, StreamError)]
    assert tasks == 1, "a decode of the failed session is still running"
    assert unhandled == []
