"""Wyoming event framing with no I/O: a JSON header line, then optional data and payload (§1).

Every event is ``{"type": …, "data_length": N, "payload_length": M}\\n``, then ``N`` bytes of
a JSON object merged over the header's inline ``data``, then ``M`` bytes of payload. Write
events with :func:`encode_event`; feed received bytes to an :class:`EventReader` and take
the complete events from :meth:`EventReader.events`.

Section numbers in comments refer to ``shared/docs/wyoming-reference.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.wire.jsontext import escape_surrogates, loads

__all__ = [
    "MAX_DATA_BYTES",
    "MAX_HEADER_BYTES",
    "MAX_PAYLOAD_BYTES",
    "PROTOCOL_VERSION",
    "Event",
    "EventReader",
    "FramingError",
    "encode_event",
]

PROTOCOL_VERSION = "1.10.2"
"""The ``wyoming`` release whose wire format this follows, written in every header."""

MAX_HEADER_BYTES = 64 * 1024
"""The ``wyoming`` library's asyncio reader fails on longer header lines (§1)."""

MAX_DATA_BYTES = 1024 * 1024
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024


class FramingError(VoxdeskError):
    """The peer sent bytes that are not Wyoming events; the stream cannot be resynchronised."""


@dataclass(frozen=True)
class Event:
    """One Wyoming event: its type, its data object and its binary payload."""

    type: str
    data: dict[str, Any] = field(default_factory=dict)
    payload: bytes = b""


def encode_event(event: Event) -> bytes:
    """The bytes of ``event`` as the ``wyoming`` library writes them: data always in the
    ``data_length`` block, never inline (§1)."""
    header: dict[str, Any] = {"type": event.type, "version": PROTOCOL_VERSION}
    data = _utf8(json.dumps(event.data, ensure_ascii=False)) if event.data else b""
    if data:
        header["data_length"] = len(data)
    if event.payload:
        header["payload_length"] = len(event.payload)
    return _utf8(json.dumps(header, ensure_ascii=False)) + b"\n" + data + event.payload


def _utf8(text: str) -> bytes:
    return escape_surrogates(text).encode("utf-8")


@dataclass(frozen=True)
class _Header:
    type: str
    data: dict[str, Any]
    data_length: int
    payload_length: int


class EventReader:
    """Bytes in, events out: call :meth:`receive_data` with whatever arrived, then :meth:`events`.

    After a :class:`FramingError` the stream is lost; close the connection.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._header: _Header | None = None

    def receive_data(self, data: bytes) -> None:
        """Add bytes read from the stream."""
        self._buffer += data

    def events(self) -> list[Event]:
        """Every complete event received so far, oldest first.

        Raises:
            FramingError: a header that is not a JSON object with a string ``type``, bad
                lengths, a header line over 64 KiB, or a data block that is not a JSON object.
        """
        events = []
        while (event := self._next()) is not None:
            events.append(event)
        return events

    def check_eof(self) -> None:
        """Call when the stream ended. Raises ``FramingError`` if it ended inside an event."""
        if self._buffer or self._header is not None:
            raise FramingError("the stream ended in the middle of an event")

    def _next(self) -> Event | None:
        if self._header is None:
            self._header = self._read_header()
            if self._header is None:
                return None
        header = self._header
        size = header.data_length + header.payload_length
        if len(self._buffer) < size:
            return None
        block, payload = bytes(self._buffer[: header.data_length]), bytes(self._buffer[header.data_length : size])
        del self._buffer[:size]
        self._header = None
        data = dict(header.data)
        if block:
            data.update(_json_object(block, "data block"))  # block keys win (§1)
        return Event(header.type, data, payload)

    def _read_header(self) -> _Header | None:
        end = self._buffer.find(b"\n", 0, MAX_HEADER_BYTES + 1)
        if end < 0:
            if len(self._buffer) > MAX_HEADER_BYTES:
                raise FramingError(f"header line longer than {MAX_HEADER_BYTES} bytes")
            return None
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
        header = _json_object(line, "header")
        kind, data = header.get("type"), header.get("data") or {}
        if not isinstance(kind, str) or not kind:
            raise FramingError("header without a string 'type'")
        if not isinstance(data, dict):
            raise FramingError("header 'data' is not a JSON object")
        data_length = _length(header, "data_length", MAX_DATA_BYTES)
        payload_length = _length(header, "payload_length", MAX_PAYLOAD_BYTES)
        return _Header(kind, data, data_length, payload_length)


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        value = loads(raw)
    except ValueError:
        raise FramingError(f"{what} is not valid JSON") from None
    if not isinstance(value, dict):
        raise FramingError(f"{what} is not a JSON object")
    return value


def _length(header: dict[str, Any], key: str, limit: int) -> int:
    value = header.get(key) or 0
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= limit:
        raise FramingError(f"header {key!r} must be a whole number from 0 to {limit}")
    return value
