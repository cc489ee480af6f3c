import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from tests.recognition import PHRASE_ERRORS, assert_recognized, word_errors, words
from tests.speech_fixtures import Fixture
from voxdesk.engine.whisper import decoder as whisper_decoder
from voxdesk.engine.whisper.decoder import DecoderSettings, WhisperDecoder, _after, _spoken_words, _trim_repetition

pytestmark = pytest.mark.integration  # loads Whisper models


def test_looping_partials_are_cut_to_their_first_copy() -> None:
    assert _trim_repetition(["Open", "the", "browser.", "Open", "the", "browser.", "Open"]) == [
        "Open",
        "the",
        "browser.",
    ]
    assert _trim_repetition(["open", "the", "browser", "open", "the"]) == ["open", "the", "browser"]
    assert _trim_repetition(["set", "a", "timer", "for", "five", "minutes"]) == [
        "set",
        "a",
        "timer",
        "for",
        "five",
        "minutes",
    ]


def test_bare_punctuation_is_not_a_word() -> None:
    assert _spoken_words(["...", "Hello", ".", "3.30", "-"]) == ["Hello", "3.30"]
    assert _after(["Open", "the"], ["Open", "the", "browser", "..."]) == ["browser"]


def test_decodes_continue_the_committed_words_and_never_repeat_them(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    decoder = WhisperDecoder()
    audio = fixture_audio["command09-slt"]
    assert_recognized(speech["command09-slt"], " ".join(decoder.final(audio, [])))
    continued = words(" ".join(decoder.final(audio, ["Set", "a", "timer"])))
    assert word_errors(["for", "five", "minutes"], continued) <= PHRASE_ERRORS, continued
    assert decoder.partial(audio, ["Set", "a", "timer", "for", "five", "minutes."]).words == []


def test_a_short_decode_sees_the_features_of_whispers_30_s_window(fixture_audio: dict[str, np.ndarray]) -> None:
    decoder = WhisperDecoder()
    audio = fixture_audio["passage-slt"]
    for seconds, margin in [(0.01, 6.0), (0.4, 6.0), (3.33, 10.0), (25.0, 6.0), (28.5, 0.0)]:
        piece = audio[: int(seconds * 16000)]
        features = decoder._features(piece, margin)
        whole = decoder._model.feature_extractor(piece, padding=160 * 3000)
        assert features.shape == (80, min(3000, int(np.ceil(seconds + margin) * 100)))
        np.testing.assert_allclose(features, whole[:, : features.shape[1]], atol=1e-5)


def test_loading_a_decoder_puts_numpys_openblas_on_one_thread() -> None:
    ThreadpoolController().select(internal_api="openblas").limit(limits=2)
    WhisperDecoder()
    assert [info["num_threads"] for info in ThreadpoolController().select(internal_api="openblas").info()] == [1]


def test_steady_partials_run_on_a_single_thread_copy_of_a_small_model(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    audio = fixture_audio["command09-slt"]
    decoder = WhisperDecoder()
    assert decoder._narrow is not decoder.model.model
    assert decoder.parallel_decodes == 2
    assert_recognized(speech["command09-slt"], " ".join(decoder.partial(audio, [], steady=True).words))
    shared = WhisperDecoder(DecoderSettings(steady_threads=0))
    assert shared._narrow is shared.model.model
    assert shared.parallel_decodes == 1
    monkeypatch.setattr(whisper_decoder, "_NARROW_COPY_MAX_BYTES", 1_000_000)  # tiny.en's 75 MB is too big now
    big = WhisperDecoder()
    assert big._narrow is big.model.model
    assert big.parallel_decodes == 1


def test_decodes_that_share_the_cpu_run_side_by_side_on_the_single_thread_copy(
    speech: dict[str, Fixture], fixture_audio: dict[str, np.ndarray]
) -> None:
    sharing = threading.Event()
    decoder = WhisperDecoder(shares_cpu=sharing.is_set)
    assert decoder._model_for(steady=False) is decoder.model.model
    sharing.set()
    assert decoder._model_for(steady=False) is decoder._narrow
    assert decoder._narrow.num_workers == 2  # two decodes at once, one thread each
    names = ["command09-slt", "command13-slt"]
    with ThreadPoolExecutor(2) as pool:
        finals = list(pool.map(lambda name: decoder.final(fixture_audio[name], []), names))
    for name, final in zip(names, finals, strict=True):
        assert_recognized(speech[name], " ".join(final))
