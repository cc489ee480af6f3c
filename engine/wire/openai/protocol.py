"""OpenAI's Realtime transcription dialect as a mapping onto
:class:`~voxdesk.engine.wire.session_core.SessionCore`'s state.

The generation state machine, the audio limits and the engine actions are the ones it shares
with the vLLM dialect; this class maps OpenAI's client events onto them and the engine's
output back out:

- the first ``input_audio_buffer.append`` of a turn starts a generation (vLLM's non-final
  commit), its 24 kHz audio resampled to 16 kHz (:class:`~voxdesk.engine.wire.pcm.Resampler`);
- ``input_audio_buffer.commit`` answers ``committed`` with a new item and ends the
  generation's audio (vLLM's final commit); its ``done`` becomes ``…transcription.completed``;
- with ``server_vad`` turn detection (a :class:`~voxdesk.engine.audio.gate.SpeechGate` over
  the speech scorer the server gives) speech start and stop are announced and each utterance
  is committed by the server;
- audio and commits that arrive while a turn is finalizing wait, in order, and replay when it
  is done (vLLM would drop them), so turns may follow each other without waiting.

Section numbers refer to ``shared/docs/openai-realtime-reference.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from voxdesk.engine.audio.endpoint import EndpointSettings
from voxdesk.engine.audio.gate import GateAudio, GateEvent, GateStarted, Scorer, SpeechGate
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.codes import ProtocolError, WireCode
from voxdesk.engine.wire.openai.events import (
    RATE,
    ClientFrame,
    OpenAIRequestError,
    ServerEvents,
    SessionSettings,
    parse_client_frame,
    prompt_vocabulary,
)
from voxdesk.engine.wire.pcm import Resampler, decode_audio
from voxdesk.engine.wire.realtime.events import Usage
from voxdesk.engine.wire.session_core import Generation, SessionCore, WaitingAudio

__all__ = ["NO_GENERATION_MESSAGE", "OpenAIServerProtocol"]

NO_GENERATION_MESSAGE = "The transcription of this audio already ended with an error; send the audio again"
"""Why a committed item whose generation the engine already ended gets no transcript."""

MIN_COMMIT_SAMPLES = RATE // 10
"""OpenAI refuses to commit less than 100 ms of audio (§6)."""

_NEVER_CUT = 24 * 3600.0  # OpenAI does not end long speech early: no shorter pause after long speech


class OpenAIServerProtocol(SessionCore):
    """One OpenAI transcription session, server side; the interface is :class:`SessionCore`'s.

    ``scorers`` makes a fresh speech scorer for each ``server_vad`` turn detection (Silero VAD
    in ``voxdesk serve``); without it ``server_vad`` is refused.
    """

    def __init__(self, served_model: str, *, scorers: Callable[[], Scorer] | None = None, **options: Any) -> None:
        super().__init__(served_model, **options)  # OpenAI checks no model name
        self._scorers = scorers
        self._wire = ServerEvents()
        self.settings = SessionSettings(id=self._wire.new_id("sess"), model=served_model)
        self._resampler = Resampler(RATE)
        self._buffered = 0  # 24 kHz samples appended since the last commit or clear
        self._waiting = WaitingAudio[str](self.max_pending_samples, "a turn")  # str: a commit's item id
        self._previous_item: str | None = None
        self._item: str | None = None  # the running generation's item, once committed
        self._early = ""  # its text from before the commit
        self._discard = False  # cleared before its commit: its output is dropped
        self._generation_samples = 0
        self._vad: SpeechGate | None = None
        self._vad_item = ""  # the item speech_started announced

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """The session's ``prompt`` as vocabulary entries: OpenAI's Whisper takes "a list of
        keywords" there, so each comma- or line-separated phrase is one entry."""
        return prompt_vocabulary(self.settings.prompt)

    # Input from the client

    def accept(self) -> None:
        """Queue ``session.created`` (§1.5: the client may already be sending)."""
        self._queue(self._wire.event("session.created", session=self.settings.to_dict()))

    def receive_text(self, text: str) -> None:
        """Handle one text frame; a refused event becomes an ``error`` and the session stays open."""
        self._receive(text)

    def receive_binary(self, data: bytes) -> None:
        """Binary frames are parsed like text frames, as the SDK does (§7)."""
        self._receive(data)

    def _receive(self, raw: str | bytes) -> None:
        event_id = None
        try:
            frame = parse_client_frame(raw)
            event_id = frame.event_id
            self._handle(frame)
        except ProtocolError as error:  # an OpenAIRequestError names the parameter at fault
            param = error.param if isinstance(error, OpenAIRequestError) else None
            self._queue(self._wire.error(error.code, error.message, param, event_id))

    def _handle(self, frame: ClientFrame) -> None:
        if frame.type == "session.update":
            self._update_session(frame.data.get("session"))
            self._queue(self._wire.event("session.updated", session=self.settings.to_dict()))
        elif frame.type == "input_audio_buffer.append":
            self._append_audio(frame.data.get("audio"))
        elif frame.type == "input_audio_buffer.commit":
            self._commit_buffer()
        elif frame.type == "input_audio_buffer.clear":
            self._clear_buffer()
            self._queue(self._wire.event("input_audio_buffer.cleared"))
        else:
            raise OpenAIRequestError(WireCode.UNKNOWN_EVENT, f"Unknown event type: {frame.type!r}", "type")

    def _update_session(self, session: Any) -> None:
        before = self.settings.turn_detection
        self.settings.update(session)
        detection = self.settings.turn_detection
        if detection == before:
            return
        if self._vad is not None and self._vad.endpointer.in_speech:
            self._clear_buffer()  # the open turn's audio belonged to the old turn detection
        try:
            self._vad = None if detection is None else self._server_vad(detection)
        except EngineUnavailable as error:
            self.settings.turn_detection = None
            raise OpenAIRequestError(
                WireCode.UNSUPPORTED_TURN_DETECTION, f"server_vad is unavailable here: {error}", "session.audio.input"
            ) from None

    def _append_audio(self, audio: Any) -> None:
        if not isinstance(audio, str):
            raise OpenAIRequestError(WireCode.INVALID_VALUE, "audio must be a base64 string", "audio")
        limit = self.max_message_samples * RATE // SAMPLE_RATE
        samples = decode_audio(audio, limit)
        resampled = self._resampler.resample(samples)
        if self._vad is None:
            self._route(resampled)
        else:
            for event in self._vad.feed(resampled):
                self._turn_event(event)
        self._buffered += len(samples)

    def _server_vad(self, detection: dict[str, Any]) -> SpeechGate:
        """A fresh ``server_vad`` gate (raises ``EngineUnavailable`` without a scorer)."""
        if self._scorers is None:
            raise EngineUnavailable("this server gave the session no speech detector")
        endpoint = EndpointSettings(
            threshold=detection["threshold"],
            silence_seconds=detection["silence_duration_ms"] / 1000,
            long_speech_seconds=_NEVER_CUT,
        )
        return SpeechGate(self._scorers(), endpoint, detection["prefix_padding_ms"] / 1000)

    def _turn_event(self, event: GateEvent) -> None:
        """Server VAD: announce speech, route its audio, commit its turn when it stops."""
        if isinstance(event, GateStarted):
            self._vad_item = self._wire.new_id("item")
            self._queue(
                self._wire.event(
                    "input_audio_buffer.speech_started", audio_start_ms=_ms(event.audio_start), item_id=self._vad_item
                )
            )
        elif isinstance(event, GateAudio):
            self._route(event.samples)
        else:
            self._queue(
                self._wire.event(
                    "input_audio_buffer.speech_stopped", audio_end_ms=_ms(event.sample), item_id=self._vad_item
                )
            )
            self._commit_item(self._vad_item)

    def _commit_buffer(self) -> None:
        if self._vad is not None:
            stopped = self._vad.end()
            if stopped is None:
                raise OpenAIRequestError(
                    WireCode.INPUT_AUDIO_BUFFER_COMMIT_EMPTY,
                    "Error committing input audio buffer: no speech since the last turn.",
                )
            self._vad.drop()  # the next turn's padding is audio after this commit
            self._turn_event(stopped)
            return
        if self._buffered < MIN_COMMIT_SAMPLES:
            raise OpenAIRequestError(
                WireCode.INPUT_AUDIO_BUFFER_COMMIT_EMPTY,
                "Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, "
                f"but buffer only has {self._buffered * 1000 / RATE:.2f}ms of audio.",
            )
        self._route(self._resampler.flush())
        self._resampler = Resampler(RATE)
        self._commit_item(self._wire.new_id("item"))

    def _commit_item(self, item: str) -> None:
        """``committed`` and ``conversation.item.added`` for ``item``; its audio ends now or waits."""
        self._buffered = 0
        self._queue(
            self._wire.event("input_audio_buffer.committed", previous_item_id=self._previous_item, item_id=item)
        )
        self._queue(self._item_event("conversation.item.added", item, None))
        self._previous_item = item
        if self.generation is Generation.FINALIZING or self._waiting:
            self._waiting.add_marker(item)
        else:
            self._end_turn(item)

    def _clear_buffer(self) -> None:
        self._resampler, self._buffered = Resampler(RATE), 0
        if self._vad is not None:
            self._vad.end()
            self._vad.drop()
        self._waiting.drop_trailing_audio()
        if not self._waiting and self.generation is Generation.STREAMING:
            self._discard = True
            self._end_audio()

    def _route(self, samples: np.ndarray) -> None:
        """16 kHz audio to the running generation, or to the queue behind a finalizing one."""
        if not len(samples):
            return
        if self.generation is Generation.FINALIZING or self._waiting:
            self._waiting.add_audio(samples)
        else:
            self._feed(samples)

    def _feed(self, samples: np.ndarray) -> None:
        """16 kHz audio to the running generation, starting one if none runs."""
        if self.generation is Generation.IDLE:
            self._start_generation()
            self._item, self._early, self._discard, self._generation_samples = None, "", False, 0
        self._deliver(samples)
        self._generation_samples += len(samples)

    def _end_turn(self, item: str) -> None:
        if self.generation is Generation.IDLE:
            # Its generation is over already (the engine failed it before its speech stopped):
            # no text will come, so say so instead of waiting for one.
            self._queue(self._wire.failed(item, NO_GENERATION_MESSAGE))
            return
        self._item = item
        self._end_audio()
        if self._early:
            self.send_delta("")

    def _replay(self) -> None:
        """Feed what waited behind the finished generation, up to the next commit."""
        while self._waiting and self.generation is not Generation.FINALIZING:
            waiting = self._waiting.popleft()
            if isinstance(waiting, str):
                self._end_turn(waiting)
            else:
                try:
                    self._feed(waiting)
                except ProtocolError as error:  # the session's audio limit
                    self.send_error(error.code, error.message)

    # Output from the engine

    def send_delta(self, text: str) -> None:
        """Queue a ``…transcription.delta`` once the item is committed; earlier text waits for it."""
        if self._discard:
            return
        if self._item is None:
            self._early += text
            return
        text, self._early = self._early + text, ""
        if text:
            self._queue(
                self._wire.event(
                    "conversation.item.input_audio_transcription.delta",
                    item_id=self._item,
                    content_index=0,
                    delta=text,
                )
            )

    def send_provisional(self, text: str) -> None:
        """OpenAI has no provisional text: nothing is sent."""

    def send_done(self, text: str, usage: Usage | None = None) -> None:
        """Queue ``…transcription.completed`` and ``conversation.item.done`` for the item."""
        if not self._discard:
            item = self._item or self._commit_unasked()
            seconds = round(self._generation_samples / SAMPLE_RATE, 3)
            self._queue(
                self._wire.event(
                    "conversation.item.input_audio_transcription.completed",
                    item_id=item,
                    content_index=0,
                    transcript=text,
                    usage={"type": "duration", "seconds": seconds},
                )
            )
            self._queue(self._item_event("conversation.item.done", item, text))
        self._finished()

    def send_error(self, code: WireCode, message: str) -> None:
        """Queue an ``error`` in OpenAI's envelope."""
        self._queue(self._wire.error(code, message))

    def generation_failed(self, message: str) -> None:
        """``…transcription.failed`` for the item (an ``error`` if it was not committed yet)."""
        if self._discard:
            pass
        elif self._item is None:
            self.send_error(WireCode.PROCESSING_ERROR, message)
        else:
            self._queue(self._wire.failed(self._item, message))
        self._finished()

    def _finished(self) -> None:
        self._generation_over()
        self._item, self._discard = None, False
        self._replay()

    def _commit_unasked(self) -> str:
        """An item for text that ended without a commit (server shutdown): the text is not lost."""
        item = self._wire.new_id("item")
        self._queue(
            self._wire.event("input_audio_buffer.committed", previous_item_id=self._previous_item, item_id=item)
        )
        self._previous_item = item
        return item

    def _item_event(self, kind: str, item: str, transcript: str | None) -> str:
        content = [{"type": "input_audio", "transcript": transcript}]
        body = {"id": item, "type": "message", "object": "realtime.item", "status": "completed", "role": "user"}
        return self._wire.event(kind, previous_item_id=None, item={**body, "content": content})


def _ms(sample: int) -> int:
    """Milliseconds from the session's first 16 kHz sample."""
    return sample * 1000 // SAMPLE_RATE
