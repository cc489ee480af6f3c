"""The microphone path's one bounded queue: real PortAudio capture from the virtual PulseAudio
microphone, at its real pace, into an engine held back by the test (a FAKE that ticks instead
of recognizing, so that only the queue is under test), through the real controller."""

from __future__ import annotations

import asyncio
import contextlib
import wave
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.desktop_rig import VirtualMic
from tests.engine.fake_held_engine import FakeHeldEngine
from voxdesk.app.listening.capture import AudioCapture
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import AudioDropped, ControllerEvent, UtteranceFinal
from voxdesk.app.listening.session import DROP_REPORT_SECONDS, MAX_BACKLOG_SECONDS
from voxdesk.app.settings import Settings
from voxdesk.engine.session import SAMPLE_RATE

TIMEOUT = 30.0  # only for a broken test; every wait below ends on an event


class TappedCapture(AudioCapture):
    """The real capture, keeping every chunk it yields and the engine's backlog as each arrives."""

    def __init__(self, engine: FakeHeldEngine, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._engine = engine
        self.heard: list[np.ndarray] = []
        self.backlogs: list[float] = []  # seconds waiting in the engine's feed, at each chunk
        self._more = asyncio.Event()

    @property
    def heard_samples(self) -> int:
        return sum(len(chunk) for chunk in self.heard)

    async def chunks(self) -> AsyncGenerator[tuple[np.ndarray, float], None]:
        async with contextlib.aclosing(super().chunks()) as chunks:
            async for chunk, captured_at in chunks:
                self.backlogs.append(self._engine.feeds[-1].buffered_seconds if self._engine.feeds else 0.0)
                self.heard.append(chunk)
                self._more.set()
                yield chunk, captured_at

    async def until_heard(self, samples: int) -> None:
        """Return once at least ``samples`` of audio came from the microphone."""

        async def wait() -> None:
            while self.heard_samples < samples:
                self._more.clear()
                await self._more.wait()

        await asyncio.wait_for(wait(), TIMEOUT)


class Rig:
    """A controller on a held engine, listening through a tapped capture, and what it reported."""

    def __init__(self, engine: FakeHeldEngine) -> None:
        self.engine = engine
        self.captures: list[TappedCapture] = []
        self.controller = Controller(Settings(), engine_factory=lambda _: engine, capture_factory=self._capture)
        self.events: list[ControllerEvent] = []
        self.controller.subscribe(self.events.append)

    def _capture(self, *args: Any, **kwargs: Any) -> TappedCapture:
        capture = TappedCapture(self.engine, *args, **kwargs)
        self.captures.append(capture)
        return capture

    async def start(self) -> TappedCapture:
        assert await self.controller.load_engine()
        self.controller.start_listening()
        (capture,) = self.captures
        return capture

    def dropped(self) -> list[float]:
        return [event.seconds for event in self.events if isinstance(event, AudioDropped)]

    def final(self) -> UtteranceFinal:
        (final,) = [event for event in self.events if isinstance(event, UtteranceFinal)]
        return final


@pytest.fixture
def noise(virtual_mic: VirtualMic, tmp_path: Path) -> Iterator[None]:
    """White noise playing into the microphone (every chunk of it unlike any other)."""
    rate, seconds = 48_000, 12.0
    samples = np.random.default_rng(7).uniform(-0.4, 0.4, int(rate * seconds))
    path = tmp_path / "noise.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((samples * 32767).astype("<i2").tobytes())
    player = virtual_mic.play(path)
    yield
    player.terminate()  # the microphone is shared with the tests after this one
    player.wait()


def test_an_engine_that_falls_behind_loses_the_oldest_audio_only_and_the_loss_is_reported(noise: None) -> None:
    async def scenario() -> None:
        rig = Rig(FakeHeldEngine())
        capture = await rig.start()
        await capture.until_heard(int((MAX_BACKLOG_SECONDS + 1.0) * SAMPLE_RATE))
        (feed,) = rig.engine.feeds
        heard_at_release, dropped_at_release = capture.heard_samples, round(feed.dropped_seconds * SAMPLE_RATE)
        rig.engine.release.set()
        await capture.until_heard(heard_at_release + SAMPLE_RATE)  # a second more, the engine keeping up
        await rig.controller.stop_listening()

        captured = np.concatenate(capture.heard)
        received = np.concatenate(rig.engine.heard)
        dropped = len(captured) - len(received)
        assert max(capture.backlogs) <= MAX_BACKLOG_SECONDS  # the feed never held more than the bound
        # The queue was full when the engine came back: it dropped about a second, and kept the
        # newest MAX_BACKLOG_SECONDS (to within a chunk) of the audio captured until then.
        assert 0.9 * SAMPLE_RATE < dropped_at_release <= dropped <= heard_at_release
        backlog_at_release = (heard_at_release - dropped_at_release) / SAMPLE_RATE
        assert MAX_BACKLOG_SECONDS - 0.1 < backlog_at_release <= MAX_BACKLOG_SECONDS
        # What reached the engine is everything after the oldest ``dropped`` samples, in order.
        assert np.sqrt(np.mean(np.square(captured[dropped : dropped + 1600]))) > 0.05, "no noise: nothing to compare"
        np.testing.assert_array_equal(received, captured[dropped:])
        # The controller heard the loss as it grew, a tenth of a second at a time (not at every
        # chunk), and its total is what went missing.
        reported = rig.dropped()
        assert reported == sorted(reported) and reported[-1] == pytest.approx(dropped / SAMPLE_RATE, abs=1e-9)
        assert 5 <= len(reported) <= dropped / SAMPLE_RATE / DROP_REPORT_SECONDS + 2
        assert feed.dropped_seconds == reported[-1]
        # The utterance ends where the captured audio ends, not ``dropped`` seconds before.
        assert rig.final().utterance.end == pytest.approx(len(captured) / SAMPLE_RATE, abs=1e-9)
        await rig.controller.aclose()

    asyncio.run(scenario())


def test_an_engine_that_stalls_for_less_than_the_bound_then_keeps_up_loses_nothing(noise: None) -> None:
    async def scenario() -> None:
        rig = Rig(FakeHeldEngine())
        capture = await rig.start()
        await capture.until_heard(2 * SAMPLE_RATE)  # a stall like a long final decode
        heard_at_release = capture.heard_samples
        rig.engine.release.set()
        await capture.until_heard(heard_at_release + SAMPLE_RATE)
        await rig.controller.stop_listening()

        captured = np.concatenate(capture.heard)
        np.testing.assert_array_equal(np.concatenate(rig.engine.heard), captured)
        assert 1.9 < max(capture.backlogs) <= MAX_BACKLOG_SECONDS  # the stall really backed audio up
        (feed,) = rig.engine.feeds
        assert feed.dropped_seconds == 0 and rig.dropped() == []
        assert rig.final().utterance.end == pytest.approx(len(captured) / SAMPLE_RATE, abs=1e-9)
        await rig.controller.aclose()

    asyncio.run(scenario())
