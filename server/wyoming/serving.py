"""One Wyoming request on the engine: its committed text out as ``transcript-chunk`` events,
then one ``transcript`` once the client sent ``audio-stop``."""

from __future__ import annotations

import asyncio

from voxdesk.engine.events import TextDelta, UtteranceDone
from voxdesk.engine.wire.codes import WireCode
from voxdesk.engine.wire.wyoming.protocol import ServerProtocol
from voxdesk.server.serving import Channel, EngineJob

__all__ = ["Recognition"]


class Recognition(EngineJob[ServerProtocol]):
    """One engine session serving one request; it starts running at once."""

    engine_failed = "Transcription failed"
    engine_stopped = "Transcription failed: the engine stopped; retry once the server is restarted"

    def __init__(self, channel: Channel, protocol: ServerProtocol, language: str | None) -> None:
        self._language = language
        self._stopped = asyncio.Event()
        super().__init__(channel, protocol)

    @property
    def interruptible(self) -> bool:
        """A request is interrupted by a shutdown while it still takes audio (no ``audio-stop`` yet)."""
        return not self._stopped.is_set()

    def end_audio(self) -> None:
        """``audio-stop`` (or shutdown): the engine finishes, then the transcript goes out."""
        self._stopped.set()
        super().end_audio()

    async def _run(self) -> None:
        try:
            await self._fold()
            await self._channel.flush()  # an engine failure's error goes out at once
            await self._stopped.wait()  # exactly one transcript, and only after audio-stop (§3)
            self._protocol.send_transcript(self.text, self._language)
            await self._channel.flush()
        except ConnectionError:
            self._log.debug("client gone before its transcript")

    def _delta(self, piece: str, event: TextDelta) -> None:
        self._protocol.send_text(piece)

    def _provisional(self, text: str) -> None:
        """Wyoming has no text that may still change: it is dropped."""

    def _utterance_done(self, event: UtteranceDone) -> None:
        self._language = event.language or self._language

    def _fail(self, message: str) -> None:
        self._protocol.send_error(WireCode.PROCESSING_ERROR, message)
