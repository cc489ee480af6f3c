"""Seeded fuzz input for the three wire dialects: structured frames (valid JSON with wrong
types, out-of-order events, huge and empty fields, bad base64, wrong sample rates, partial
frames, Wyoming headers with bad lengths) and random text and bytes.

One ``random.Random`` drives everything, so a seed gives the same frames on every run. Each
generator returns ``(kind, frame)``; the kind names the shape, for the tallies and for the
report of a failing frame.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from voxdesk.engine.wire.wyoming.framing import MAX_DATA_BYTES, MAX_HEADER_BYTES, PROTOCOL_VERSION

__all__ = [
    "NOISE",
    "SERVED_MODEL",
    "Frame",
    "byte_noise",
    "json_value",
    "openai_frame",
    "pcm16",
    "text_noise",
    "vllm_frame",
    "wyoming_broken",
    "wyoming_event",
]

SERVED_MODEL = "fuzz-model"
"""The model name the fuzzed cores serve."""

Frame = tuple[str, str | bytes]
"""A frame's kind and the frame."""

NOISE = frozenset({"text", "binary", "noise"})
"""The kinds that are random text or bytes; every other kind is structured."""

_STRINGS = ["", " ", "a", "é", "\u0000", "\ud800", "\U0001f600", "null", "true", "[]", "{}", "-1", "transcription"]
_NUMBERS: list[Any] = [0, 1, -1, 2, 0.5, -0.0, 1e308, -1e308, 2**63, -(2**63), 10**40, float("inf"), float("nan")]


def json_value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value of any type: scalars at their edges, short containers, a long string."""
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.2:
        return rng.random() < 0.5
    if roll < 0.4:
        return rng.choice(_NUMBERS) if rng.random() < 0.5 else rng.randint(-(10**6), 10**6)
    if roll < 0.6:
        return rng.choice(_STRINGS) if rng.random() < 0.5 else text_noise(rng, 12)
    if roll < 0.63:
        return rng.choice("xé\u0000") * rng.choice([1_000, 70_000])  # a long field
    if depth >= 2:
        return rng.random()
    if roll < 0.8:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {text_noise(rng, 6): json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def text_noise(rng: random.Random, size: int = 120) -> str:
    """Random text: JSON punctuation, ASCII, control characters, any other character."""
    pools = ('{}[]":,\\ \n', "abcdefghijklmnopqrstuvwxyz0123456789", "\x00\x01\x1f\x7f")
    out = []
    for _ in range(rng.randint(0, size)):
        pool = rng.randrange(4)
        out.append(rng.choice(pools[pool]) if pool < 3 else _code_point(rng))
    return "".join(out)


def _code_point(rng: random.Random) -> str:
    """Any character a UTF-8 text frame can carry (a lone surrogate only comes JSON-escaped)."""
    point = rng.randrange(0x110000 - 0x800)
    return chr(point + 0x800 if point >= 0xD800 else point)


def byte_noise(rng: random.Random, size: int = 200) -> bytes:
    """Random bytes."""
    return rng.randbytes(rng.randint(0, size))


def deep_json(rng: random.Random) -> str:
    """JSON nested past Python's recursion limit (or just short of it)."""
    depth = rng.choice([50, 900, 985, 995, 1_000, 5_000, 100_000])
    if rng.random() < 0.5:
        return "[" * depth + "]" * depth
    return '{"type":' * depth + "1" + "}" * depth


def pcm16(rng: random.Random, samples: int) -> bytes:
    """``samples`` random 16-bit little-endian samples."""
    return np.frombuffer(rng.randbytes(2 * samples), "<i2").tobytes()


def audio_field(rng: random.Random) -> Any:
    """An ``audio`` value: good base64 PCM16 mostly, else empty, odd, bad or huge base64, or no string."""
    roll = rng.random()
    if roll < 0.6:
        return base64.b64encode(pcm16(rng, rng.choice([1, 160, 1_600, 4_000, rng.randint(1, 6_000)]))).decode()
    if roll < 0.65:
        return ""
    if roll < 0.7:
        return base64.b64encode(rng.randbytes(2 * rng.randint(0, 50) + 1)).decode()  # an odd byte count
    if roll < 0.75:
        good = base64.b64encode(pcm16(rng, 40)).decode()
        cut = rng.randrange(len(good))
        return good[:cut] + rng.choice(["!", "=", "===", " ", "\u00e9", "\ud800", "-_", "\n"]) + good[cut:]
    if roll < 0.8:
        return base64.b64encode(pcm16(rng, 41)).decode().rstrip("=")  # padding missing
    if roll < 0.805:
        return base64.b64encode(pcm16(rng, rng.choice([48_000, 400_000]))).decode()  # huge: 3 or 25 s
    if roll < 0.85:
        return text_noise(rng, 40)
    return json_value(rng)


def _breakage(rng: random.Random, kind: str, text: str) -> tuple[str, str]:
    """The same event, or it truncated (a partial frame) or with a few characters changed."""
    roll = rng.random()
    if roll < 0.05:
        return "partial", text[: rng.randrange(len(text))]
    if roll < 0.08:
        chars = list(text)
        for _ in range(rng.randint(1, 3)):
            chars[rng.randrange(len(chars))] = rng.choice('{}[]":,x\\\x00')
        return "mutated", "".join(chars)
    return kind, text


def _envelope(rng: random.Random, noise: Callable[[random.Random], Frame]) -> Frame:
    """Frames that are not an event at all: noise, deep nesting, a JSON value that is no object."""
    roll = rng.random()
    if roll < 0.3:
        return "text", text_noise(rng)
    if roll < 0.45:
        return "deep", deep_json(rng)
    if roll < 0.7:
        return "non-object", _dumps(json_value(rng))
    return noise(rng)


def _dumps(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


def _event_type(rng: random.Random, known: list[str], server_side: list[str]) -> Any:
    roll = rng.random()
    if roll < 0.85:
        return rng.choice(known)
    if roll < 0.92:
        return rng.choice([*server_side, "", "nope", known[0].upper()])
    return json_value(rng)


def _with_extras(rng: random.Random, event: dict[str, Any]) -> dict[str, Any]:
    """Fields a client might add: a wrong sample rate, a format, an event id of any type."""
    if rng.random() < 0.1:
        event[rng.choice(["sample_rate", "rate", "input_audio_format", "event_id", "extra"])] = rng.choice(
            [44_100, 8_000, "pcm16", "g711_ulaw", json_value(rng)]
        )
    return event


# vLLM's /v1/realtime

_VLLM_TYPES = ["input_audio_buffer.append"] * 6 + ["input_audio_buffer.commit"] * 3 + ["session.update"]
_VLLM_SERVER_TYPES = ["session.created", "transcription.delta", "transcription.done", "error"]


def vllm_frame(rng: random.Random) -> Frame:
    """One frame for a vLLM ``/v1/realtime`` server core."""
    if rng.random() < 0.1:
        return _envelope(rng, _binary_noise)
    kind = _event_type(rng, _VLLM_TYPES, _VLLM_SERVER_TYPES)
    event: dict[str, Any] = {"type": kind}
    if kind == "session.update" or rng.random() < 0.05:
        if rng.random() < 0.9:
            event["model"] = rng.choice([SERVED_MODEL, SERVED_MODEL, "", "other-model", json_value(rng)])
        if rng.random() < 0.3:
            event["provisional"] = rng.choice([True, False, "true", 1, json_value(rng)])
    if (kind == "input_audio_buffer.append" or rng.random() < 0.05) and rng.random() < 0.97:
        event["audio"] = audio_field(rng)
    if kind == "input_audio_buffer.commit" or rng.random() < 0.05:
        roll = rng.random()
        if roll < 0.8:
            event["final"] = rng.random() < 0.5
        elif roll < 0.9:
            event["final"] = rng.choice(["true", "false", "yes", "off", 1, 0, 2, 0.5, "", None, [], {}])
    event = _with_extras(rng, event)
    label = "event" if isinstance(kind, str) and kind in _VLLM_TYPES else "wrong-type"
    return _breakage(rng, label, _dumps(event))


def _binary_noise(rng: random.Random) -> Frame:
    return "binary", byte_noise(rng)


# OpenAI Realtime transcription sessions

_OPENAI_TYPES = (
    ["input_audio_buffer.append"] * 6
    + ["input_audio_buffer.commit"] * 2
    + ["input_audio_buffer.clear", "session.update", "session.update"]
)
_OPENAI_OTHER_TYPES = ["response.create", "conversation.item.create", "session.updated", "transcription_session.update"]


def _openai_session(rng: random.Random) -> Any:
    """A ``session`` for ``session.update``: mostly well formed, any field possibly of a wrong type or value."""
    if rng.random() < 0.1:
        return json_value(rng)
    audio_input: dict[str, Any] = {}
    if rng.random() < 0.4:
        audio_input["format"] = {
            "type": rng.choice(["audio/pcm", "audio/pcm", "audio/pcmu", "audio/pcma", json_value(rng)]),
            "rate": rng.choice([24_000, 24_000, 16_000, 44_100, 48_000, 8_000, 0, -24_000, "24000", json_value(rng)]),
        }
    if rng.random() < 0.5:
        audio_input["turn_detection"] = rng.choice([None, None, _turn_detection(rng), json_value(rng)])
    if rng.random() < 0.4:
        audio_input["transcription"] = {
            key: rng.choice([value, json_value(rng)])
            for key, value in (("model", SERVED_MODEL), ("language", "en"), ("prompt", "words"))
            if rng.random() < 0.6
        }
    session: dict[str, Any] = {"audio": {"input": audio_input} if rng.random() < 0.95 else json_value(rng)}
    if rng.random() < 0.5:
        session["type"] = rng.choice(["transcription", "transcription", "realtime", json_value(rng)])
    return session


def _turn_detection(rng: random.Random) -> dict[str, Any]:
    detection: dict[str, Any] = {"type": rng.choice(["server_vad", "server_vad", "semantic_vad", json_value(rng)])}
    for key, good in (("threshold", 0.5), ("prefix_padding_ms", 300), ("silence_duration_ms", 200)):
        if rng.random() < 0.4:
            detection[key] = rng.choice([good, 0, -1, 10_001, 1.5, True, float("nan"), json_value(rng)])
    return detection


def openai_frame(rng: random.Random) -> Frame:
    """One frame for an OpenAI Realtime transcription server core (text, or binary carrying JSON)."""
    if rng.random() < 0.1:
        return _envelope(rng, _binary_noise)
    kind = _event_type(rng, _OPENAI_TYPES, _OPENAI_OTHER_TYPES)
    event: dict[str, Any] = {"type": kind} if rng.random() < 0.97 else {}
    if rng.random() < 0.3:
        event["event_id"] = rng.choice(["evt_1", "", json_value(rng)])
    if kind == "session.update" or rng.random() < 0.03:
        event["session"] = _openai_session(rng)
    if (kind == "input_audio_buffer.append" or rng.random() < 0.03) and rng.random() < 0.97:
        event["audio"] = audio_field(rng)
    event = _with_extras(rng, event)
    label = "event" if isinstance(kind, str) and kind in _OPENAI_TYPES else "wrong-type"
    label, text = _breakage(rng, label, _dumps(event))
    if rng.random() < 0.05:  # the SDK also reads JSON in binary frames, in any UTF
        return f"{label}-binary", text.encode(rng.choice(["utf-8", "utf-16", "utf-32"]), "surrogatepass")
    return label, text


# Wyoming


_WYOMING_TYPES = ["audio-chunk"] * 6 + ["audio-start", "audio-stop", "audio-stop", "transcribe", "describe", "ping"]
_WYOMING_OTHER_TYPES = ["transcript", "transcript-chunk", "transcript-start", "info", "error", "pong", "synthesize"]
_RATES: list[Any] = [16_000] * 6 + [8_000, 22_050, 44_100, 48_000, 192_000, 7_999, 192_001, 0, -16_000, 10**12]
_WIDTHS: list[Any] = [2] * 6 + [3, 4, 1, 8, 0, -2]
_CHANNELS: list[Any] = [1] * 6 + [2, 6, 0, -1, 2**31, 2**64]


def _wyoming_header(kind: str, data: dict[str, Any], payload: bytes, inline: bool) -> bytes:
    header: dict[str, Any] = {"type": kind, "version": PROTOCOL_VERSION}
    block = b""
    block = _dumps(data).encode("utf-8", "surrogatepass") if data else b""
    if inline and len(block) < MAX_HEADER_BYTES - 200:  # a longer header line breaks the framing
        header["data"], block = data, b""
    elif block:
        header["data_length"] = len(block)
    if payload:
        header["payload_length"] = len(payload)
    return _dumps(header).encode("utf-8", "surrogatepass") + b"\n" + block + payload


def wyoming_event(rng: random.Random) -> tuple[str, bytes]:
    """One well-framed Wyoming event: a known or unknown type, fields of any type, any audio format.

    Framing stays intact, so the connection must stay open and usable after it."""
    kind = rng.choice(_WYOMING_TYPES) if rng.random() < 0.85 else rng.choice([*_WYOMING_OTHER_TYPES, "x", "é"])
    data: dict[str, Any] = {}
    payload = b""
    label = "event"
    if kind in ("audio-chunk", "audio-start") or rng.random() < 0.05:
        data = {"rate": rng.choice(_RATES), "width": rng.choice(_WIDTHS), "channels": rng.choice(_CHANNELS)}
        if rng.random() < 0.05:
            data[rng.choice(["rate", "width", "channels"])] = json_value(rng)
            label = "wrong-type"
        elif (data["rate"], data["width"], data["channels"]) != (16_000, 2, 1):
            label = "wrong-format"
        data["timestamp"] = rng.choice([None, 0, -5, json_value(rng)])
    if kind == "audio-chunk":
        size = rng.choice([0, 1, 2, 3, 320, 3_200, 6_000, rng.randint(0, 9_000)])
        payload = pcm16(rng, size // 2) + rng.randbytes(size % 2)
        if rng.random() < 0.002:
            payload = pcm16(rng, 16_000 * 10)  # huge: ten seconds in one chunk
            label = "huge"
    elif kind in ("transcribe", "ping", "transcript", "transcript-chunk", "error") and rng.random() < 0.8:
        for key in ("name", "language", "text", "code"):
            if rng.random() < 0.4:
                data[key] = rng.choice(["en", "", "tiny", json_value(rng)])
    if kind not in _WYOMING_TYPES:
        label = "out-of-role"
    if len(_dumps(data)) > MAX_DATA_BYTES:  # a data block that long breaks the framing: keep the short fields
        data = {key: value for key, value in data.items() if len(_dumps(value)) < 1_000}
    return label, _wyoming_header(kind, data, payload, inline=rng.random() < 0.3)


def wyoming_broken(rng: random.Random) -> tuple[str, bytes]:
    """Bytes that break Wyoming's framing (bad lengths, a header that is no JSON object, a
    truncated event, noise): the stream cannot be read on after them."""
    roll = rng.random()
    if roll < 0.15:
        return "noise", byte_noise(rng) + rng.choice([b"", b"\n"])
    if roll < 0.3:
        _, event = wyoming_event(rng)
        return "partial", event[: rng.randrange(len(event))]
    if roll < 0.5:
        header: dict[str, Any] = {"type": "audio-chunk", "data": {"rate": 16_000, "width": 2, "channels": 1}}
        header[rng.choice(["data_length", "payload_length"])] = rng.choice(
            [-1, 2**40, 16 * 1024 * 1024 + 1, 1.5, "10", True, [], json_value(rng)]
        )
        return "bad-length", _dumps(header).encode() + b"\n" + byte_noise(rng, 20)
    if roll < 0.6:
        header = {"type": "audio-chunk", "payload_length": rng.randint(1, 50)}  # says more than it sends
        return "short-payload", _dumps(header).encode() + b"\n" + byte_noise(rng, 10)
    if roll < 0.75:
        bad_header = rng.choice(
            [
                {"type": json_value(rng)},
                {"type": ""},
                {"data": {}},
                {"type": "describe", "data": rng.choice([[], "x", 1, [1]])},
                json_value(rng),
            ]
        )
        return "bad-header", _dumps(bad_header).encode("utf-8", "surrogatepass") + b"\n"
    if roll < 0.85:
        block = rng.choice([b"[1]", b"not json", b"\xff\xfe", deep_json(rng).encode()[:1000_000], b""])
        return "bad-data", _dumps({"type": "transcribe", "data_length": len(block) + 1}).encode() + b"\n" + block + b" "
    if roll < 0.9:
        return "long-header", b'{"type": "' + b"x" * (MAX_HEADER_BYTES + rng.randint(1, 100))
    if roll < 0.95:
        return "deep", deep_json(rng).encode()[:MAX_HEADER_BYTES] + b"\n"
    return "bad-utf8", b'{"type": "\xff\xfe"}\n'
