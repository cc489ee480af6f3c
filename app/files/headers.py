"""What a file's first bytes and header say, for the errors of :func:`~voxdesk.app.files.reading.read_audio`:
what it holds when it cannot be decoded, and how much audio its header promises when less is there."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

__all__ = ["HEAD_BYTES", "Content", "Shortfall", "content_of", "shortfall"]

HEAD_BYTES = 4096
"""How much of the start of a file :func:`content_of` looks at."""

_AUDIO = (  # (offset, magic, name); the formats Voxdesk decodes
    (0, b"fLaC", "a FLAC file"),
    (0, b"OggS", "an Ogg file"),
    (0, b"ID3", "an MP3 file"),
    (0, b"FORM", "an AIFF file"),
    (0, b"\x1a\x45\xdf\xa3", "a Matroska or WebM file"),
    (4, b"ftyp", "an MP4 or M4A file"),
    (0, b"\xff\xf1", "an AAC stream"),
    (0, b"\xff\xf9", "an AAC stream"),
    (0, b"\xff\xfb", "an MP3 stream"),
    (0, b"\xff\xf3", "an MP3 stream"),
    (0, b"\xff\xf2", "an MP3 stream"),
)
_OTHER = (  # common files that are not audio, named so the user recognizes them
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a ZIP archive (or a document stored as one)"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\x7fELF", "a program"),
)
_STREAMED = (0, 0xFFFFFFFF)  # data sizes that writers to a pipe leave in a WAV header: the length is unknown


@dataclass(frozen=True)
class Content:
    """What a file appears to hold; ``audio`` when it is a format Voxdesk decodes."""

    name: str
    audio: bool


@dataclass(frozen=True)
class Shortfall:
    """Less audio in a file than its header says: ``present`` of ``promised`` bytes."""

    present: int
    promised: int

    def __str__(self) -> str:
        return f"truncated: {self.present} of {self.promised} bytes of audio"


def content_of(head: bytes) -> Content:
    """What a file starting with ``head`` holds, by its magic bytes, else as text or data."""
    if head[:4] in (b"RIFF", b"RIFX", b"RF64"):
        return Content("a WAV file" if head[8:12] == b"WAVE" else "a RIFF file that is not WAV", head[8:12] == b"WAVE")
    for offset, magic, name in _AUDIO:
        if head[offset : offset + len(magic)] == magic:
            return Content(name, True)
    for magic, name in _OTHER:
        if head.startswith(magic):
            return Content(name, False)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:  # a character cut at the end of ``head`` is still text
        text = head[: error.start].decode("utf-8") if error.start >= len(head) - 3 else ""
    if text and sum(c.isprintable() or c in "\t\r\n" for c in text) >= 0.95 * len(text):
        return Content("text", False)
    return Content(f"data of no audio format Voxdesk knows (it starts {head[:8].hex(' ')})", False)


def shortfall(path: Path) -> Shortfall | None:
    """How much of the audio its header promises ``path`` lacks; ``None`` when it is all there or
    the format says no length. Only WAV is checked: its header gives the length of its samples,
    and a WAV cut short still decodes (a FLAC or MP4 cut short does not)."""
    with path.open("rb") as file:
        head = file.read(12)
        if head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE":
            return _wav_shortfall(file, path.stat().st_size, rf64=head[:4] == b"RF64")
    return None


def _wav_shortfall(file: BinaryIO, size: int, rf64: bool) -> Shortfall | None:
    """Walk the RIFF chunks to ``data``; compare the bytes it declares with those in the file."""
    declared64: int | None = None  # RF64 keeps the 64-bit data size in its ds64 chunk
    position = 12
    while position + 8 <= size:
        file.seek(position)
        chunk, length = struct.unpack("<4sI", file.read(8))
        if chunk == b"ds64" and rf64:
            declared64 = struct.unpack("<8xQ", file.read(16))[0]
        if chunk == b"data":
            declared = declared64 if rf64 and declared64 is not None else length
            if not rf64 and declared in _STREAMED:
                return None
            present = size - position - 8
            return Shortfall(present, declared) if present < declared else None
        position += 8 + length + (length & 1)
    return None
