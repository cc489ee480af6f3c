"""The server side of vLLM's ``/v1/realtime`` protocol as a state machine with no I/O.

Feed it what the client sent (:meth:`ServerProtocol.receive_text`), then:

- call :meth:`~ServerProtocol.events_received` and carry out each action
  (:class:`StartGeneration`, :class:`AudioReceived`, :class:`EndOfAudio`);
- call :meth:`~ServerProtocol.data_to_send` and write each JSON string to the socket.

Report the engine's output with ``send_delta``, ``send_provisional``, ``send_done`` and
``send_error``; after each, write ``data_to_send()`` again.

Section numbers in comments refer to ``docs/realtime-protocol.md``.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import cast

import numpy as np

from voxdesk.engine.events import StreamErrorCode
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.realtime.events import (
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    ProtocolError,
    ServerEvent,
    SessionCreated,
    SessionUpdate,
    TranscriptionDone,
    TranscriptionProvisional,
    Usage,
    delta_json,
    parse_client_event,
)

__all__ = [
    "FINAL_WITHOUT_GENERATION_MESSAGE",
    "MODEL_NOT_VALIDATED_MESSAGE",
    "VLLM_MAX_MESSAGE_SAMPLES",
    "AudioReceived",
    "EndOfAudio",
    "Generation",
    "ServerProtocol",
    "StartGeneration",
    "decode_audio",
]

logger = logging.getLogger(__name__)

VLLM_MAX_MESSAGE_SAMPLES = 25 * 1024 * 1024
"""vLLM's per-message audio check (§5): 25 MiB of *samples*."""

MODEL_NOT_VALIDATED_MESSAGE = "Model not validated. Make sure to validate the model by sending a session.update event."

FINAL_WITHOUT_GENERATION_MESSAGE = (
    "No generation is running, so this final commit has nothing to end: send input_audio_buffer.commit "
    "without final first to start the generation, then the audio, then the final commit"
)


class Generation(StrEnum):
    """Where the connection stands with respect to a generation (one engine session)."""

    IDLE = "idle"  # none running: appended audio waits for the next one (§3 step 3)
    STREAMING = "streaming"  # appended audio goes to the running generation
    FINALIZING = "finalizing"  # final commit received: audio is discarded until done (§3 step 5)


@dataclass(frozen=True)
class StartGeneration:
    """Open an engine session; the audio for it follows as ``AudioReceived``."""


@dataclass(frozen=True)
class AudioReceived:
    """16 kHz mono float32 samples for the running generation."""

    samples: np.ndarray


@dataclass(frozen=True)
class EndOfAudio:
    """The client committed ``final``: end the engine session's audio."""


Action = StartGeneration | AudioReceived | EndOfAudio


_PCM16_SCALE = np.float32(1 / 32768)


def _load_b64decode() -> Callable[..., bytes]:
    """pybase64's decoder where installed (vLLM's, several times faster), else the standard one."""
    try:
        return cast("Callable[..., bytes]", importlib.import_module("pybase64").b64decode)
    except ImportError:
        return base64.b64decode


_b64decode = _load_b64decode()


def decode_audio(data: str, max_samples: int) -> np.ndarray:
    """Base64 PCM16 little-endian mono to float32, vLLM's way (§3 step 3, §5).

    Raises:
        ProtocolError: ``invalid_audio`` for bad base64, an odd byte count, no samples, or
            more than ``max_samples`` samples.
    """
    try:
        raw = _b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        raise ProtocolError(StreamErrorCode.INVALID_AUDIO, "Invalid audio data") from None
    if not raw or len(raw) % 2 or len(raw) // 2 > max_samples:
        raise ProtocolError(StreamErrorCode.INVALID_AUDIO, "Invalid audio data")
    # One pass, one array; times 2**-15 is exactly vLLM's / 32768.0 in float32.
    samples: np.ndarray = np.multiply(np.frombuffer(raw, dtype="<i2"), _PCM16_SCALE, dtype=np.float32)
    return samples


class ServerProtocol:
    """One ``/v1/realtime`` connection, server side.

    Args:
        served_model: the name ``session.update`` must match (``""`` always passes, §3 step 2).
        skip_model_validation: accept any model name, like ``VLLM_SKIP_MODEL_NAME_VALIDATION``.
        max_message_samples: samples allowed in one append.
        max_session_samples: audio allowed over the whole connection; beyond it appends are
            refused with ``buffer_full``.
        max_pending_samples: audio allowed to wait for a generation to start.
        log: where to log about this connection (the server passes one that names it).
    """

    def __init__(
        self,
        served_model: str,
        *,
        skip_model_validation: bool = False,
        max_message_samples: int = VLLM_MAX_MESSAGE_SAMPLES,
        max_session_samples: int = 4 * 3600 * SAMPLE_RATE,
        max_pending_samples: int = 60 * SAMPLE_RATE,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger] = logger,
    ) -> None:
        self.log = log
        self.served_model = served_model
        self.skip_model_validation = skip_model_validation
        self.max_message_samples = max_message_samples
        self.max_session_samples = max_session_samples
        self.max_pending_samples = max_pending_samples
        self.session = SessionCreated()
        self.model_validated = False
        self.provisional = False
        self.generation = Generation.IDLE
        self.samples_received = 0
        self._pending: list[np.ndarray] = []
        self._pending_samples = 0
        self._events: list[Action] = []
        self._outgoing: list[str] = []

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
        self.send_error(StreamErrorCode.INVALID_EVENT, "Binary frames are not supported: send JSON text frames")

    def events_received(self) -> list[Action]:
        """Actions for the I/O layer, oldest first; the list is emptied."""
        events, self._events = self._events, []
        return events

    def data_to_send(self) -> list[str]:
        """JSON text frames to write, oldest first; the list is emptied."""
        outgoing, self._outgoing = self._outgoing, []
        return outgoing

    # Output from the engine

    @property
    def has_events(self) -> bool:
        """Whether :meth:`events_received` has anything."""
        return bool(self._events)

    @property
    def has_data_to_send(self) -> bool:
        """Whether :meth:`data_to_send` has anything."""
        return bool(self._outgoing)

    def send_delta(self, text: str) -> None:
        """Queue a ``transcription.delta`` of the running generation."""
        self._outgoing.append(delta_json(text))

    def send_provisional(self, text: str) -> None:
        """Queue a ``transcription.provisional`` if the client asked for them."""
        if self.provisional:
            self._send(TranscriptionProvisional(text=text))

    def send_done(self, text: str, usage: Usage | None = None) -> None:
        """Queue ``transcription.done``; the connection is ready for the next generation.

        Audio appended after the final commit is dropped (§3 step 5).
        """
        self._send(TranscriptionDone(text=text, usage=usage or Usage()))
        self.generation = Generation.IDLE

    def send_error(self, code: StreamErrorCode, message: str) -> None:
        """Queue an ``error`` event."""
        self._send(ErrorEvent(error=message, code=code.value))

    def generation_failed(self, message: str) -> None:
        """The engine failed: ``processing_error`` and no ``done`` for this generation (§4)."""
        self.send_error(StreamErrorCode.PROCESSING_ERROR, message)
        self.generation = Generation.IDLE

    # Handlers

    def _update(self, event: SessionUpdate) -> None:
        model = event.model
        valid = self.skip_model_validation or not model or model == self.served_model
        if not valid:
            raise ProtocolError(StreamErrorCode.MODEL_NOT_FOUND, f"The model `{model}` does not exist.")
        self.model_validated = True
        self.provisional = event.provisional

    def _append(self, event: InputAudioBufferAppend) -> None:
        self._add_samples(decode_audio(event.audio, self.max_message_samples))

    def _add_samples(self, samples: np.ndarray) -> None:
        """Route 16 kHz audio by the generation's state, within the session and pending limits."""
        if self.samples_received + len(samples) > self.max_session_samples:
            limit = self.max_session_samples / SAMPLE_RATE
            raise ProtocolError(
                StreamErrorCode.BUFFER_FULL, f"Session audio limit reached ({limit:g} s); chunk dropped"
            )
        if self.generation is Generation.FINALIZING:
            return  # vLLM discards audio sent between the final commit and done
        if self.generation is Generation.IDLE:
            if self._pending_samples + len(samples) > self.max_pending_samples:
                limit = self.max_pending_samples / SAMPLE_RATE
                raise ProtocolError(
                    StreamErrorCode.BUFFER_FULL, f"More than {limit:g} s of audio waiting for a commit; chunk dropped"
                )
            self._pending.append(samples)
            self._pending_samples += len(samples)
        else:
            self._events.append(AudioReceived(samples))
        self.samples_received += len(samples)

    def _commit(self, event: InputAudioBufferCommit) -> None:
        if not self.model_validated:
            raise ProtocolError(StreamErrorCode.MODEL_NOT_VALIDATED, MODEL_NOT_VALIDATED_MESSAGE)
        if not event.final:
            if self.generation is not Generation.IDLE:
                self.log.warning("generation already in progress, ignoring commit")  # as vLLM (§4)
                return
            self.generation = Generation.STREAMING
            self._events.append(StartGeneration())
            self._events.extend(AudioReceived(samples) for samples in self._pending)
            self._pending, self._pending_samples = [], 0
        elif self.generation is Generation.STREAMING:
            self.generation = Generation.FINALIZING
            self._events.append(EndOfAudio())
        elif self.generation is Generation.IDLE:
            # vLLM answers nothing and keeps the marker, ending the *next* generation early
            # with it (§4); its client waits for a done that never comes. Say so instead.
            self.log.warning("final commit with no generation running: answered with an error")
            raise ProtocolError(StreamErrorCode.INVALID_EVENT, FINAL_WITHOUT_GENERATION_MESSAGE)
        # A second final while finishing is ignored: the done it waits for is on its way.

    def _send(self, event: ServerEvent) -> None:
        self._outgoing.append(event.to_json())
