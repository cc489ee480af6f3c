"""The speech backends, run for real: espeak-ng and Festival as installed programs, and the
OpenAI ``/v1/audio/speech`` client against a fake server on loopback (no real one installs here)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.loopback_http import FakeHandler, LoopbackServer
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.tts.choice import SPEECH_BACKENDS, synthesizer_for
from voxdesk.engine.tts.espeak import EspeakSynthesizer, parse_voices
from voxdesk.engine.tts.festival import FestivalSynthesizer
from voxdesk.engine.tts.openai_speech import OpenAiSpeech

PHRASE = "The timer for five minutes is up."


def test_espeak_speaks_a_phrase_and_a_higher_rate_speaks_it_faster() -> None:
    normal = asyncio.run(EspeakSynthesizer().synthesize(PHRASE))
    fast = asyncio.run(EspeakSynthesizer(rate=2.0).synthesize(PHRASE))
    assert normal.rate == 22_050 and normal.samples.dtype.name == "float32"
    assert 1.0 < normal.duration < 4.0 and 0.2 < normal.samples.max() <= 1.0
    assert fast.duration < 0.7 * normal.duration


def test_espeak_lists_its_voices_and_an_unknown_voice_is_one_line() -> None:
    voices = asyncio.run(EspeakSynthesizer().voices())
    assert {"en-us", "fr-fr"} <= {voice.name for voice in voices}
    with pytest.raises(EngineUnavailable) as failure:
        asyncio.run(EspeakSynthesizer(voice="xx-nowhere").synthesize(PHRASE))
    assert str(failure.value).startswith("espeak-ng failed: ") and "\n" not in str(failure.value)


def test_a_missing_program_says_how_to_install_it() -> None:
    with pytest.raises(EngineUnavailable, match=r"espeak-ng is not installed \(Debian and Ubuntu: sudo apt"):
        asyncio.run(EspeakSynthesizer(program="no-such-espeak-ng").synthesize(PHRASE))


def test_the_voice_table_of_espeak_is_read_by_its_columns() -> None:
    listing = (
        "Pty Language       Age/Gender VoiceName          File                 Other Languages\n"
        " 5  en-us           --/M      English_(America)  gmw/en-US            (en 3)\n"
    )
    [voice] = parse_voices(listing)
    assert (voice.name, voice.language, voice.description) == ("en-us", "en-us", "English (America)")


def test_festival_speaks_with_its_installed_voice_and_refuses_a_voice_that_is_no_name() -> None:
    [voice] = [v for v in asyncio.run(FestivalSynthesizer().voices()) if v.name == "cmu_us_slt_arctic_hts"]
    speech = asyncio.run(FestivalSynthesizer(voice.name).synthesize(PHRASE))
    assert speech.rate == 32_000 and 1.0 < speech.duration < 5.0  # the HTS voice's own rate
    with pytest.raises(EngineUnavailable, match="no Festival voice"):
        asyncio.run(FestivalSynthesizer('slt) (system "id"').synthesize(PHRASE))


class FakeSpeechServer(LoopbackServer):
    """A fake OpenAI-compatible ``/v1/audio/speech``: answers with espeak-ng's WAV of the input,
    or with ``self.status`` and an error body; records each request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        fake = self

        class Handler(FakeHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, **body})
                if fake.status != 200:
                    payload, kind = json.dumps({"error": {"message": "bad key"}}).encode(), "application/json"
                else:
                    payload = subprocess.run(["espeak-ng", "--stdout", body["input"]], capture_output=True).stdout
                    kind = "audio/wav"
                self.reply(fake.status, kind, payload)

        super().__init__(Handler)


@pytest.fixture
def speech_server() -> Iterator[FakeSpeechServer]:
    server = FakeSpeechServer()
    yield server
    server.close()


def test_an_openai_speech_server_is_asked_for_wav_with_the_model_voice_and_speed(
    speech_server: FakeSpeechServer,
) -> None:
    synthesizer = synthesizer_for("openai", "nova", 1.5, speech_server.url, "tts-1", "k")
    speech = asyncio.run(synthesizer.synthesize(PHRASE))
    assert speech.rate == 22_050 and speech.duration > 1.0
    [request] = speech_server.requests
    assert request == {
        "path": "/v1/audio/speech",
        "model": "tts-1",
        "voice": "nova",
        "input": PHRASE,
        "response_format": "wav",
        "speed": 1.5,
    }


def test_a_speech_server_that_refuses_or_is_not_there_is_one_line(speech_server: FakeSpeechServer) -> None:
    speech_server.status = 401
    with pytest.raises(EngineUnavailable) as refused:
        asyncio.run(OpenAiSpeech(speech_server.url, "tts-1").synthesize(PHRASE))
    assert str(refused.value).startswith(f"the speech server at {speech_server.url} refused: HTTP 401")
    speech_server.close()
    with pytest.raises(EngineUnavailable) as gone:
        asyncio.run(OpenAiSpeech(speech_server.url, "tts-1").synthesize(PHRASE))
    assert str(gone.value).startswith(f"could not reach the speech server at {speech_server.url}: ")
    assert "\n" not in str(refused.value) + str(gone.value)


def test_every_backend_the_settings_take_is_built_and_an_unknown_one_is_refused() -> None:
    assert [synthesizer_for(name).where.split()[0] for name in SPEECH_BACKENDS] == ["espeak-ng", "Festival", "the"]
    with pytest.raises(ValueError, match="unknown speech backend 'sapi'"):
        synthesizer_for("sapi")
