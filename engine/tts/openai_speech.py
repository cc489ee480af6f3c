"""Any server with OpenAI's ``/v1/audio/speech`` (OpenAI itself, Kokoro-FastAPI, openedai-speech,
LocalAI, Speaches), through the official ``openai`` SDK."""

from __future__ import annotations

from collections.abc import Sequence

from voxdesk.engine.errors import EngineUnavailable, one_line
from voxdesk.engine.tts.speech import Speech, Voice, decode_wav

__all__ = ["OPENAI_VOICES", "OpenAiSpeech"]

OPENAI_VOICES = ("alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse")
"""The voices OpenAI documents; other servers take their own names (the API has no list)."""
_TIMEOUT_S = 30.0


class OpenAiSpeech:
    """Speech from the server at ``url`` (``…/v1``) with ``model`` and ``voice`` at ``rate``."""

    def __init__(self, url: str, model: str, voice: str = "", rate: float = 1.0, api_key: str = "") -> None:
        self.url, self.model, self.voice, self.rate, self.api_key = url, model, voice or OPENAI_VOICES[0], rate, api_key

    @property
    def where(self) -> str:
        return f"the speech server at {self.url}"

    async def synthesize(self, text: str) -> Speech:
        """``text`` spoken as WAV by the server. Raises :class:`EngineUnavailable` with one line."""
        import openai

        key = self.api_key or "none"  # servers on this computer take any key; the SDK wants one
        client = openai.AsyncOpenAI(base_url=self.url, api_key=key, timeout=_TIMEOUT_S, max_retries=0)
        try:
            response = await client.audio.speech.create(
                model=self.model,
                voice=self.voice,
                input=text,
                response_format="wav",
                speed=max(0.25, min(4.0, self.rate)),
            )
            wav = await response.aread()
        except openai.APIStatusError as error:
            raise EngineUnavailable(f"{self.where} refused: HTTP {error.status_code} {one_line(error)}") from None
        except openai.APIError as error:
            raise EngineUnavailable(f"could not reach {self.where}: {one_line(error)}") from None
        finally:
            await client.close()
        return decode_wav(wav, self.where)

    async def voices(self) -> Sequence[Voice]:
        """OpenAI's documented voices (a server of another kind may name others)."""
        return [Voice(name, "en", "as OpenAI documents it") for name in OPENAI_VOICES]
