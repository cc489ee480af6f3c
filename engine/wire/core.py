"""What every dialect's server core does for its I/O layer, whatever its wire: the actions to
carry out, and the account of the audio the connection sent within its limit.

A core (:class:`ServerCore`) turns client input into actions, oldest first: its own that
opens a request, then :class:`AudioReceived` and :class:`EndOfAudio`, which every dialect
shares. The I/O layer takes them with :meth:`ServerCore.events_received`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

import numpy as np

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.codes import ProtocolError, WireCode

__all__ = ["AudioReceived", "EndOfAudio", "Log", "ServerCore"]

Log = logging.Logger | logging.LoggerAdapter[logging.Logger]


@dataclass(frozen=True)
class AudioReceived:
    """16 kHz mono float32 samples for the open request."""

    samples: np.ndarray


@dataclass(frozen=True)
class EndOfAudio:
    """The request's audio is complete: end the engine session's audio; its text follows."""


S = TypeVar("S")


class ServerCore(Generic[S]):
    """The actions a connection's input asked for (``S``, the dialect's action that opens a
    request, :class:`AudioReceived` and :class:`EndOfAudio`), and the audio it sent.

    For a dialect's subclass: :meth:`_act` queues an action; :meth:`_deliver` hands audio to the
    open request, counted in :attr:`samples_received` within ``max_session_samples`` (beyond it
    the audio is refused with ``buffer_full``, worded by :attr:`audio_limit`).
    """

    audio_limit: ClassVar[str]
    """The ``buffer_full`` message past the connection's audio limit; ``{limit:g}`` is in seconds."""

    def __init__(self, *, max_session_samples: int, log: Log) -> None:
        self.log = log
        self.max_session_samples = max_session_samples
        self.samples_received = 0
        self._events: list[S | AudioReceived | EndOfAudio] = []

    def events_received(self) -> list[S | AudioReceived | EndOfAudio]:
        """Actions for the I/O layer, oldest first; the list is emptied."""
        events, self._events = self._events, []
        return events

    @property
    def has_events(self) -> bool:
        """Whether :meth:`events_received` has anything."""
        return bool(self._events)

    def _act(self, action: S | AudioReceived | EndOfAudio) -> None:
        """Queue ``action`` for the I/O layer."""
        self._events.append(action)

    def _check_room(self, samples: int) -> None:
        """Refuse ``samples`` more if they pass the connection's audio limit.

        Raises:
            ProtocolError: ``buffer_full``.
        """
        if self.samples_received + samples > self.max_session_samples:
            limit = self.max_session_samples / SAMPLE_RATE
            raise ProtocolError(WireCode.BUFFER_FULL, self.audio_limit.format(limit=limit))

    def _count(self, samples: int) -> None:
        """Count ``samples`` as received (audio taken, whether delivered now or later)."""
        self.samples_received += samples

    def _deliver(self, samples: np.ndarray) -> None:
        """Hand ``samples`` to the open request, within the connection's audio limit.

        Raises:
            ProtocolError: ``buffer_full``; nothing is handed on.
        """
        self._check_room(len(samples))
        self._act(AudioReceived(samples))
        self._count(len(samples))
