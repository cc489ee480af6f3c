import numpy as np
import pytest

from tests.speech_fixtures import Fixture
from voxdesk.engine.audio.endpoint import VAD_WINDOW, Endpointer, EndpointSettings, SpeechEnded, SpeechStarted
from voxdesk.engine.audio.silero import SileroVad

WINDOW_SECONDS = VAD_WINDOW / 16_000


def probabilities(*runs: tuple[float, float]) -> np.ndarray:
    """Windows of constant probability: (probability, seconds) pairs."""
    return np.concatenate([np.full(round(seconds / WINDOW_SECONDS), p, np.float32) for p, seconds in runs])


def test_endpointer_finds_start_and_end_of_speech() -> None:
    endpointer = Endpointer(EndpointSettings(silence_seconds=0.6))
    points = endpointer.process(probabilities((0.0, 1.024), (0.9, 2.048), (0.0, 1.024)))
    assert points == [SpeechStarted(int(1.024 * 16_000)), SpeechEnded(int(3.072 * 16_000))]


def test_short_pauses_do_not_end_speech() -> None:
    endpointer = Endpointer(EndpointSettings(silence_seconds=0.6))
    points = endpointer.process(probabilities((0.9, 1.0), (0.1, 0.4), (0.9, 1.0)))
    assert [type(p) for p in points] == [SpeechStarted]
    assert endpointer.in_speech


def test_long_speech_ends_at_a_shorter_pause() -> None:
    settings = EndpointSettings(silence_seconds=0.6, long_speech_seconds=8.0, long_speech_silence_seconds=0.25)
    short = Endpointer(settings).process(probabilities((0.9, 4.0), (0.1, 0.32), (0.9, 1.0)))
    assert [type(p) for p in short] == [SpeechStarted]
    long = Endpointer(settings).process(probabilities((0.9, 9.0), (0.1, 0.32), (0.9, 1.0)))
    assert [type(p) for p in long] == [SpeechStarted, SpeechEnded, SpeechStarted]


def test_a_single_voiced_window_is_not_speech() -> None:
    endpointer = Endpointer()
    assert endpointer.process(probabilities((0.0, 0.5), (0.9, WINDOW_SECONDS), (0.0, 0.5))) == []


def test_endpointer_results_do_not_depend_on_how_input_is_split() -> None:
    probs = probabilities((0.0, 0.3), (0.8, 1.0), (0.2, 0.8), (0.7, 0.5), (0.0, 1.0))
    whole = Endpointer().process(probs)
    pieces = Endpointer()
    split = [point for i in range(0, len(probs), 7) for point in pieces.process(probs[i : i + 7])]
    assert whole == split and len(whole) == 4


def test_silero_probabilities_do_not_depend_on_chunk_size(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    audio = fixture_audio["command09-slt"]
    vad = SileroVad()
    whole = vad.probabilities(audio)
    vad.reset()
    chunked = np.concatenate([vad.probabilities(audio[i : i + 1234]) for i in range(0, len(audio), 1234)])
    assert len(whole) == len(audio) // VAD_WINDOW
    np.testing.assert_allclose(whole, chunked, atol=1e-5)


@pytest.mark.parametrize("name", ["command09-slt", "command05-espeak", "long-slt"])
def test_silero_endpoints_match_the_known_speech(
    name: str, speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    points = Endpointer().process(SileroVad().probabilities(fixture_audio[name]))
    starts = [p.sample / 16_000 for p in points if isinstance(p, SpeechStarted)]
    ends = [p.sample / 16_000 for p in points if isinstance(p, SpeechEnded)]
    truth = speech[name].speech
    assert len(starts) == len(ends) == len(truth)
    for (true_start, true_end), start, end in zip(truth, starts, ends, strict=True):
        assert abs(start - true_start) < 0.25
        assert abs(end - true_end) < 0.35


@pytest.mark.parametrize("name", ["silence", "noise"])
def test_silero_hears_no_speech_in_silence_or_noise(name: str, fixture_audio: dict[str, np.ndarray]) -> None:
    assert Endpointer().process(SileroVad().probabilities(fixture_audio[name])) == []
