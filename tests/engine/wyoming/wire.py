"""Bytes through the official ``wyoming`` package: what it writes, and what it reads back."""

from __future__ import annotations

import io

from wyoming.event import Event as LibraryEvent
from wyoming.event import read_event, write_event


def library_bytes(*events: LibraryEvent) -> bytes:
    """``events`` as the ``wyoming`` library writes them."""
    buffer = io.BytesIO()
    for event in events:
        write_event(event, buffer)
    return buffer.getvalue()


def library_events(data: bytes) -> list[LibraryEvent]:
    """Every event the ``wyoming`` library reads from ``data``."""
    buffer = io.BytesIO(data)
    events = []
    while (event := read_event(buffer)) is not None:
        events.append(event)
    return events
