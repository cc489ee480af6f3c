"""The speech gate: where turns start and stop, and the pre-roll each starts with, over a FAKE
scorer's scripted probabilities (one per 512-sample window)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.engine.fake_scorer import FakeScorer, script
from voxdesk.engine.audio.endpoint import VAD_WINDOW, EndpointSettings
from voxdesk.engine.audio.gate import GateAudio, GateEvent, GateStarted, GateStopped, SpeechGate

PRE_ROLL = 4800  # samples: 0.3 s
SPEECH = script((0.0, 20), (0.9, 30), (0.0, 25))
"""Speech from window 20 to window 49 (samples 10240 to 25600), and silence enough to end it."""
START, STOP = 20 * VAD_WINDOW, 50 * VAD_WINDOW
AUDIO = np.arange(len(SPEECH) * VAD_WINDOW, dtype=np.float32)  # every sample tells where it is


def gate(probabilities: np.ndarray = SPEECH, pre_roll_samples: int = PRE_ROLL, start: int = 0) -> SpeechGate:
    return SpeechGate(FakeScorer(probabilities), EndpointSettings(), pre_roll_samples / 16_000, start)


def fed(speech_gate: SpeechGate, audio: np.ndarray, chunk: int) -> list[GateEvent]:
    return [event for i in range(0, len(audio), chunk) for event in speech_gate.feed(audio[i : i + chunk])]


def audio_of(event: GateEvent) -> np.ndarray:
    assert isinstance(event, GateAudio)
    return event.samples


def turns(events: list[GateEvent]) -> list[tuple[GateStarted, np.ndarray, GateStopped | None]]:
    """Each turn: its start, all its audio, and its stop (None while it is open)."""
    found: list[tuple[GateStarted, list[np.ndarray], GateStopped | None]] = []
    for event in events:
        if isinstance(event, GateStarted):
            found.append((event, [], None))
        elif isinstance(event, GateAudio):
            found[-1][1].append(event.samples)
        else:
            found[-1] = (found[-1][0], found[-1][1], event)
    return [(started, np.concatenate(audio), stopped) for started, audio, stopped in found]


def test_a_turn_starts_a_pre_roll_before_its_speech_and_stops_at_its_last_voiced_window() -> None:
    events = gate().feed(AUDIO)
    assert [type(event) for event in events] == [GateStarted, GateAudio, GateStopped]
    assert events[0] == GateStarted(START, START - PRE_ROLL) and events[2] == GateStopped(STOP)
    np.testing.assert_array_equal(audio_of(events[1]), AUDIO[START - PRE_ROLL :])


@pytest.mark.parametrize("chunk", [160, 700, VAD_WINDOW, 3000, 10_300])
def test_how_audio_is_chunked_moves_no_start_and_no_stop(chunk: int) -> None:
    """The turn is the stream's own audio from its pre-roll on, without gaps or repeats, up to
    the end of the chunk that showed the stop; chunks while it is open pass whole."""
    ((started, audio, stopped),) = turns(fed(gate(), AUDIO, chunk))
    assert started == GateStarted(START, START - PRE_ROLL) and stopped == GateStopped(STOP)
    confirmed = (STOP // VAD_WINDOW + 19) * VAD_WINDOW  # 0.6 s of silence: 19 windows
    end = min(len(AUDIO), -(-confirmed // chunk) * chunk)
    np.testing.assert_array_equal(audio, AUDIO[START - PRE_ROLL : end])


def test_a_start_confirmed_by_the_next_chunk_keeps_its_whole_pre_roll() -> None:
    """The chunk that confirms speech (window 21) comes after the one its start (window 20) and
    all its pre-roll lie in."""
    speech_gate = gate()
    assert speech_gate.feed(AUDIO[:11_000]) == []
    started, audio = speech_gate.feed(AUDIO[11_000:12_000])
    assert started == GateStarted(START, START - PRE_ROLL)
    np.testing.assert_array_equal(audio_of(audio), AUDIO[START - PRE_ROLL : 12_000])


def test_pre_roll_is_cut_at_the_first_sample_and_counts_from_start() -> None:
    early = script((0.0, 3), (0.9, 10))
    assert gate(early).feed(AUDIO[:7000])[0] == GateStarted(3 * VAD_WINDOW, 0)
    assert gate(early, start=1000).feed(AUDIO[:7000])[0] == GateStarted(1000 + 3 * VAD_WINDOW, 1000)
    assert gate(start=1000).feed(AUDIO)[0] == GateStarted(1000 + START, 1000 + START - PRE_ROLL)


def test_end_stops_the_open_turn_and_speech_after_it_starts_the_next() -> None:
    speech_gate = gate()
    assert speech_gate.end() is None  # no turn open
    speech_gate.feed(AUDIO[: 30 * VAD_WINDOW])
    assert speech_gate.end() == GateStopped(30 * VAD_WINDOW) and not speech_gate.endpointer.in_speech
    assert speech_gate.end() is None
    restart = 30 * VAD_WINDOW  # windows 30 and 31 are voiced: a new onset
    started, audio = speech_gate.feed(AUDIO[restart : 33 * VAD_WINDOW])
    assert started == GateStarted(restart, restart - PRE_ROLL)  # the pre-roll reaches into the ended turn
    np.testing.assert_array_equal(audio_of(audio), AUDIO[restart - PRE_ROLL : 33 * VAD_WINDOW])


def test_drop_forgets_the_pre_roll_held_so_far() -> None:
    speech_gate = gate()
    speech_gate.feed(AUDIO[: 30 * VAD_WINDOW])
    speech_gate.end()
    speech_gate.drop()
    dropped_at = 30 * VAD_WINDOW
    started, audio = speech_gate.feed(AUDIO[dropped_at : 33 * VAD_WINDOW])
    assert started == GateStarted(dropped_at, dropped_at)
    np.testing.assert_array_equal(audio_of(audio), AUDIO[dropped_at : 33 * VAD_WINDOW])


def test_a_chunk_that_stops_one_turn_and_starts_the_next_gives_both() -> None:
    two = script((0.0, 20), (0.9, 10), (0.0, 19), (0.9, 10))
    events = gate(two).feed(AUDIO[: len(two) * VAD_WINDOW])
    assert [type(event) for event in events] == [GateStarted, GateAudio, GateStopped, GateStarted, GateAudio]
    assert events[2] == GateStopped(30 * VAD_WINDOW)
    assert events[3] == GateStarted(49 * VAD_WINDOW, 49 * VAD_WINDOW - PRE_ROLL)
