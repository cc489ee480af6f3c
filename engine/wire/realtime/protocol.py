"""The server side of vLLM's ``/v1/realtime`` protocol as a state machine with no I/O, on
:class:`~voxdesk.engine.wire.session_core.SessionCore` (the generation state, frames and limits
it shares with the OpenAI dialect).

Feed it what the client sent (:meth:`ServerProtocol.receive_text`), then:

- call :meth:`~ServerProtocol.events_received` and carry out each action
  (:class:`~voxdesk.engine.wire.session_core.StartGeneration`,
  :class:`~voxdesk.engine.wire.core.AudioReceived`, :class:`~voxdesk.engine.wire.core.EndOfAudio`);
- call :meth:`~ServerProtocol.data_to_send` and write each JSON string to the socket.

Report the engine's output with ``send_delta``, ``send_provisional``, ``send_done`` and
``send_error``; after each, write ``data_to_send()`` again.

Section numbers in comments refer to ``docs/realtime-protocol.md``.
"""

from __future__ import annotations

import logging
from typing import Any, Never

import numpy as np

from voxdesk.engine.wire.codes import Dialect, ProtocolError, WireCode, spell
from voxdesk.engine.wire.core import AudioReceived, Log
from voxdesk.engine.wire.pcm import decode_audio
from voxdesk.engine.wire.realtime.events import (
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    ServerEvent,
    SessionCreated,
    SessionUpdate,
    TranscriptionDone,
    TranscriptionProvisional,
    Usage,
    delta_json,
    parse_client_event,
)
from voxdesk.engine.wire.session_core import Generation, SessionCore, WaitingAudio

__all__ = ["FINAL_WITHOUT_GENERATION_MESSAGE", "MODEL_NOT_VALIDATED_MESSAGE", "ServerProtocol"]

logger = logging.getLogger(__name__)

MODEL_NOT_VALIDATED_MESSAGE = "Model not validated. Make sure to validate the model by sending a session.update event."

FINAL_WITHOUT_GENERATION_MESSAGE = (
    "No generation is running, so this final commit has nothing to end: send input_audio_buffer.commit "
    "without final first to start the generation, then the audio, then the final commit"
)


class ServerProtocol(SessionCore):
    """One ``/v1/realtime`` connection, server side (arguments: :class:`SessionCore`'s).

    Audio appended while no generation runs waits for the next one (§3 step 3), within
    ``max_pending_samples``; audio appended after the final commit is dropped (§3 step 5).
    """

    def __init__(self, served_model: str, *, log: Log = logger, **options: Any) -> None:
        super().__init__(served_model, log=log, **options)
        self.session = SessionCreated()
        self.model_validated = False
        self.provisional = False
        self._pending = WaitingAudio[Never](self.max_pending_samples, "a commit")

    # Input from the client

    def accept(self) -> None:
        """Call once the connection is accepted: queues ``session.created`` (§3 step 1)."""
        self._send(self.session)

    def receive_text(self, text: str) -> None:
        """Handle one text frame. Errors become ``error`` events; the connection stays open."""
        try:
            event = parse_client_event(text)
            if isinstance(event, SessionUpdate):
                self._update(event)
            elif isinstance(event, InputAudioBufferAppend):
                self._append(event)
            else:
                self._commit(event)
        except ProtocolError as error:
            self.send_error(error.code, error.message)

    def receive_binary(self, data: bytes) -> None:
        """Handle a binary frame: vLLM drops the socket (§4); Voxdesk answers and stays open."""
        self.send_error(WireCode.INVALID_EVENT, "Binary frames are not supported: send JSON text frames")

    # Output from the engine

    def send_delta(self, text: str) -> None:
        """Queue a ``transcription.delta`` of the running generation."""
        self._queue(delta_json(text))

    def send_provisional(self, text: str) -> None:
        """Queue a ``transcription.provisional`` if the client asked for them."""
        if self.provisional:
            self._send(TranscriptionProvisional(text=text))

    def send_done(self, text: str, usage: Usage | None = None) -> None:
        """Queue ``transcription.done``; the connection is ready for the next generation."""
        self._send(TranscriptionDone(text=text, usage=usage or Usage()))
        self._generation_over()

    def send_error(self, code: WireCode, message: str) -> None:
        """Queue an ``error`` event."""
        self._send(ErrorEvent(error=message, code=spell(code, Dialect.VLLM)))

    def generation_failed(self, message: str) -> None:
        """The engine failed: ``processing_error`` and no ``done`` for this generation (§4)."""
        self.send_error(WireCode.PROCESSING_ERROR, message)
        self._generation_over()

    # Handlers

    def _update(self, event: SessionUpdate) -> None:
        model = event.model
        valid = self.skip_model_validation or not model or model == self.served_model
        if not valid:
            raise ProtocolError(WireCode.MODEL_NOT_FOUND, f"The model `{model}` does not exist.")
        self.model_validated = True
        self.provisional = event.provisional

    def _append(self, event: InputAudioBufferAppend) -> None:
        self._add_samples(decode_audio(event.audio, self.max_message_samples))

    def _add_samples(self, samples: np.ndarray) -> None:
        """Route 16 kHz audio by the generation's state, within the session and pending limits."""
        if self.generation is Generation.STREAMING:
            self._deliver(samples)
            return
        self._check_room(len(samples))
        if self.generation is Generation.FINALIZING:
            return  # vLLM discards audio sent between the final commit and done
        self._pending.add_audio(samples)
        self._count(len(samples))

    def _commit(self, event: InputAudioBufferCommit) -> None:
        if not self.model_validated:
            raise ProtocolError(WireCode.MODEL_NOT_VALIDATED, MODEL_NOT_VALIDATED_MESSAGE)
        if not event.final:
            if self.generation is not Generation.IDLE:
                self.log.warning("generation already in progress, ignoring commit")  # as vLLM (§4)
                return
            self._start_generation()
            while self._pending:
                self._act(AudioReceived(self._pending.popleft()))
        elif self.generation is Generation.STREAMING:
            self._end_audio()
        elif self.generation is Generation.IDLE:
            # vLLM answers nothing and keeps the marker, ending the *next* generation early
            # with it (§4); its client waits for a done that never comes. Say so instead.
            self.log.warning("final commit with no generation running: answered with an error")
            raise ProtocolError(WireCode.INVALID_EVENT, FINAL_WITHOUT_GENERATION_MESSAGE)
        # A second final while finishing is ignored: the done it waits for is on its way.

    def _send(self, event: ServerEvent) -> None:
        self._queue(event.to_json())
