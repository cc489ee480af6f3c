"""The server core that vLLM's ``/v1/realtime`` dialect and OpenAI's Realtime transcription
dialect share, with no I/O: one generation (engine session) at a time, JSON text frames out.

Each dialect is a subclass of :class:`SessionCore` (:mod:`.realtime.protocol`,
:mod:`.openai.protocol`) that parses its client's frames and words the engine's output.
Public, for the I/O layer, alike in both:

- :meth:`~SessionCore.accept`, :meth:`~SessionCore.receive_text`,
  :meth:`~SessionCore.receive_binary`: the client's input;
- :meth:`~SessionCore.events_received`: the actions to carry out (:class:`StartGeneration`,
  :class:`~.core.AudioReceived`, :class:`~.core.EndOfAudio`);
- :meth:`~SessionCore.data_to_send`: the JSON text frames to write, after each call here;
- :attr:`~SessionCore.generation`: where the generation stands;
- :meth:`~SessionCore.send_delta`, :meth:`~SessionCore.send_provisional`,
  :meth:`~SessionCore.send_done`, :meth:`~SessionCore.send_error`,
  :meth:`~SessionCore.generation_failed`: the engine's output.

Protected, for the dialects: :meth:`~SessionCore._queue` (a frame to write),
:meth:`~SessionCore._start_generation`, :meth:`~SessionCore._end_audio` and
:meth:`~SessionCore._generation_over` (the only moves of :attr:`~SessionCore.generation`),
:meth:`~.core.ServerCore._deliver` (audio to the running generation, within the session's
audio limit) and :class:`WaitingAudio` (audio held for a generation, within the pending limit).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

import numpy as np

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.codes import ProtocolError, WireCode
from voxdesk.engine.wire.core import EndOfAudio, Log, ServerCore
from voxdesk.engine.wire.jsontext import escape_surrogates
from voxdesk.engine.wire.realtime.events import Usage

__all__ = ["VLLM_MAX_MESSAGE_SAMPLES", "Generation", "SessionCore", "StartGeneration", "WaitingAudio"]

logger = logging.getLogger(__name__)

VLLM_MAX_MESSAGE_SAMPLES = 25 * 1024 * 1024
"""vLLM's per-message audio check (``docs/realtime-protocol.md`` §5): 25 MiB of *samples*."""


class Generation(StrEnum):
    """Where the connection stands with respect to a generation (one engine session)."""

    IDLE = "idle"  # none running
    STREAMING = "streaming"  # the running generation takes audio
    FINALIZING = "finalizing"  # its audio has ended: its text is on its way


@dataclass(frozen=True)
class StartGeneration:
    """Open an engine session; the audio for it follows as ``AudioReceived``."""


M = TypeVar("M")


class WaitingAudio(Generic[M]):
    """Audio held until a generation takes it, oldest first, within ``max_samples``; between
    it, in order, the dialect's markers (``M``: OpenAI's commits; vLLM holds none).

    ``waiting_for`` ends the refusal's sentence: "… of audio waiting for *a commit*".
    """

    def __init__(self, max_samples: int, waiting_for: str) -> None:
        self.max_samples = max_samples
        self.samples = 0
        """Samples held now."""
        self._waiting_for = waiting_for
        self._items: deque[np.ndarray | M] = deque()

    def __bool__(self) -> bool:
        return bool(self._items)

    def add_audio(self, samples: np.ndarray) -> None:
        """Hold ``samples``.

        Raises:
            ProtocolError: ``buffer_full`` past the limit; nothing is held.
        """
        if self.samples + len(samples) > self.max_samples:
            limit = self.max_samples / SAMPLE_RATE
            raise ProtocolError(
                WireCode.BUFFER_FULL, f"More than {limit:g} s of audio waiting for {self._waiting_for}; chunk dropped"
            )
        self._items.append(samples)
        self.samples += len(samples)

    def add_marker(self, marker: M) -> None:
        """Keep ``marker`` after the audio held so far."""
        self._items.append(marker)

    def popleft(self) -> np.ndarray | M:
        """The oldest audio or marker, no longer held."""
        item = self._items.popleft()
        if isinstance(item, np.ndarray):
            self.samples -= len(item)
        return item

    def drop_trailing_audio(self) -> None:
        """Drop the audio held after the last marker."""
        while self._items and isinstance(last := self._items[-1], np.ndarray):
            self._items.pop()
            self.samples -= len(last)


class SessionCore(ServerCore[StartGeneration], ABC):
    """One connection of a generation-per-turn realtime dialect, server side.

    Args:
        served_model: the model name the server serves.
        skip_model_validation: accept any model name a client asks for, where the dialect
            checks one (vLLM's ``VLLM_SKIP_MODEL_NAME_VALIDATION``).
        max_message_samples: samples allowed in one append.
        max_session_samples: audio allowed over the whole connection; beyond it appends are
            refused with ``buffer_full``.
        max_pending_samples: audio allowed to wait for a generation to take it.
        log: where to log about this connection (the server passes one that names it).
    """

    audio_limit = "Session audio limit reached ({limit:g} s); chunk dropped"

    def __init__(
        self,
        served_model: str,
        *,
        skip_model_validation: bool = False,
        max_message_samples: int = VLLM_MAX_MESSAGE_SAMPLES,
        max_session_samples: int = 4 * 3600 * SAMPLE_RATE,
        max_pending_samples: int = 60 * SAMPLE_RATE,
        log: Log = logger,
    ) -> None:
        super().__init__(max_session_samples=max_session_samples, log=log)
        self.served_model = served_model
        self.skip_model_validation = skip_model_validation
        self.max_message_samples = max_message_samples
        self.max_pending_samples = max_pending_samples
        self.generation = Generation.IDLE
        self._outgoing: list[str] = []

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """Words the client asked this session's transcription to be biased towards (none here)."""
        return ()

    # Input from the client

    @abstractmethod
    def accept(self) -> None:
        """Call once the connection is accepted: queues the dialect's greeting."""

    @abstractmethod
    def receive_text(self, text: str) -> None:
        """Handle one text frame; a refused one is answered with an ``error``, the connection stays open."""

    @abstractmethod
    def receive_binary(self, data: bytes) -> None:
        """Handle one binary frame."""

    def data_to_send(self) -> list[str]:
        """JSON text frames to write, oldest first; the list is emptied."""
        outgoing, self._outgoing = self._outgoing, []
        return outgoing

    @property
    def has_data_to_send(self) -> bool:
        """Whether :meth:`data_to_send` has anything."""
        return bool(self._outgoing)

    # Output from the engine

    @abstractmethod
    def send_delta(self, text: str) -> None:
        """Queue text the running generation appends."""

    @abstractmethod
    def send_provisional(self, text: str) -> None:
        """Queue the running generation's text that may still change, where the dialect has it."""

    @abstractmethod
    def send_done(self, text: str, usage: Usage | None = None) -> None:
        """Queue the generation's end with its whole text; the connection is ready for the next."""

    @abstractmethod
    def send_error(self, code: WireCode, message: str) -> None:
        """Queue an ``error``."""

    @abstractmethod
    def generation_failed(self, message: str) -> None:
        """The engine failed the running generation: say so; no text follows for it."""

    # For the dialects

    def _queue(self, frame: str) -> None:
        """Queue one JSON text frame to write (a lone surrogate a client escaped and the frame
        echoes as its JSON escape again, so that the frame is valid UTF-8)."""
        self._outgoing.append(escape_surrogates(frame))

    def _start_generation(self) -> None:
        """A generation runs from now: ``StartGeneration``; audio delivered next is its."""
        self.generation = Generation.STREAMING
        self._act(StartGeneration())

    def _end_audio(self) -> None:
        """The running generation's audio is complete: ``EndOfAudio``; its text is on its way."""
        self.generation = Generation.FINALIZING
        self._act(EndOfAudio())

    def _generation_over(self) -> None:
        """The generation is done or failed: the connection is ready for the next."""
        self.generation = Generation.IDLE
