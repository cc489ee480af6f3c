"""Wyoming framing with no I/O, checked against the bytes of the official ``wyoming`` package."""

from __future__ import annotations

import json

import pytest
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk
from wyoming.event import Event as LibraryEvent

from tests.engine.wyoming.wire import library_bytes, library_events
from voxdesk.engine.wire.wyoming.framing import MAX_HEADER_BYTES, Event, EventReader, FramingError, encode_event


def read_all(data: bytes, step: int | None = None) -> list[Event]:
    reader = EventReader()
    events: list[Event] = []
    for start in range(0, len(data), step or len(data) or 1):
        reader.receive_data(data[start : start + (step or len(data))])
        events.extend(reader.events())
    reader.check_eof()
    return events


def test_encoding_matches_the_library_byte_for_byte() -> None:
    ours = encode_event(Event("transcript", {"text": "hé"}))
    assert ours == library_bytes(Transcript(text="hé").event())
    assert ours == b'{"type": "transcript", "version": "1.10.2", "data_length": 15}\n{"text": "h\xc3\xa9"}'
    chunk = AudioChunk(rate=16000, width=2, channels=1, audio=b"\x01\x00\x02\x00")
    audio_format = {"rate": 16000, "width": 2, "channels": 1, "timestamp": None}
    wire_chunk = Event("audio-chunk", audio_format, b"\x01\x00\x02\x00")
    assert encode_event(wire_chunk) == library_bytes(chunk.event())
    assert encode_event(Event("transcript-stop")) == library_bytes(LibraryEvent("transcript-stop"))


@pytest.mark.parametrize("step", [None, 1, 7])
def test_reads_what_the_library_writes_in_any_pieces(step: int | None) -> None:
    data = library_bytes(
        LibraryEvent("describe"),
        AudioChunk(rate=24000, width=2, channels=2, audio=bytes(range(8))).event(),
        LibraryEvent("transcript", {"text": "hé"}),
        LibraryEvent("transcript-stop"),
    )
    events = read_all(data, step)
    assert [e.type for e in events] == ["describe", "audio-chunk", "transcript", "transcript-stop"]
    assert events[1].data["rate"] == 24000 and events[1].payload == bytes(range(8))
    assert events[2].data == {"text": "hé"}


def test_the_library_reads_what_we_write() -> None:
    events = library_events(encode_event(Event("error", {"text": "boom", "code": "x"})) + encode_event(Event("pong")))
    assert [(e.type, e.data) for e in events] == [("error", {"text": "boom", "code": "x"}), ("pong", {})]


def test_inline_data_is_accepted_and_the_data_block_wins() -> None:
    block = json.dumps({"text": "block"}).encode()
    header = {"type": "transcript", "data": {"text": "inline", "language": "en"}, "data_length": len(block)}
    (event,) = read_all(json.dumps(header).encode() + b"\n" + block)
    assert event.data == {"text": "block", "language": "en"}


@pytest.mark.parametrize(
    "data",
    [
        b"not json\n",
        b'["a list"]\n',
        b'{"data": {}}\n',  # no type
        b'{"type": "x", "data_length": -1}\n',
        b'{"type": "x", "payload_length": "4"}\n',
        b'{"type": "x", "data_length": 6}\n[1, 2]',  # data block not an object
        b'{"type": "' + b"x" * MAX_HEADER_BYTES + b'"}\n',
    ],
)
def test_malformed_input_is_a_framing_error(data: bytes) -> None:
    reader = EventReader()
    reader.receive_data(data)
    with pytest.raises(FramingError):
        reader.events()


def test_a_stream_cut_inside_an_event_is_a_framing_error() -> None:
    reader = EventReader()
    reader.receive_data(library_bytes(AudioChunk(rate=16000, width=2, channels=1, audio=bytes(8)).event())[:-3])
    assert reader.events() == []
    with pytest.raises(FramingError):
        reader.check_eof()
