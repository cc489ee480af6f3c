"""Conformance rows of ``/v1/realtime`` that one reply shows, checked on the sans-I/O protocol.

Each row feeds :class:`ServerProtocol` text frames and compares what it would write (and the
actions it asks of the server) with vLLM 0.33's behaviour. Section numbers in the test ids
(``s2``, ``s4``, ``s15_itemN``, ``s16_itemN``, ``vx`` for Voxdesk's own choices) refer to
``docs/realtime-protocol.md``. What only a socket shows is in ``test_conformance.py``.
"""

from __future__ import annotations

import json
import logging
from typing import Any, cast

import numpy as np
import pytest

from tests.engine.realtime.harness import EMPTY_DONE, MODEL, MODEL_NOT_VALIDATED, SESSION_CREATED, b64, compact
from voxdesk.engine.remote.realtime import encode_audio
from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.core import AudioReceived, EndOfAudio
from voxdesk.engine.wire.realtime.events import Usage
from voxdesk.engine.wire.realtime.protocol import FINAL_WITHOUT_GENERATION_MESSAGE, ServerProtocol
from voxdesk.engine.wire.session_core import StartGeneration

Frame = dict[str, Any] | str

CHUNK = encode_audio(np.zeros(1600, np.float32))
NOT_VALIDATED = (MODEL_NOT_VALIDATED, "model_not_validated")


def connection(validated: bool = True, served: str = MODEL, **options: Any) -> ServerProtocol:
    """A protocol past ``session.created`` and, if ``validated``, a valid ``session.update``."""
    protocol = ServerProtocol(served, **options)
    protocol.accept()
    [created] = protocol.data_to_send()
    assert SESSION_CREATED.fullmatch(created), created
    if validated:
        assert reply(protocol, {"type": "session.update", "model": MODEL}) == []
    return protocol


def reply(protocol: ServerProtocol, *frames: Frame) -> list[str]:
    """Feed ``frames`` (dicts are sent as JSON); what the server would write back."""
    for frame in frames:
        protocol.receive_text(frame if isinstance(frame, str) else json.dumps(frame))
    return protocol.data_to_send()


def append(samples: np.ndarray) -> dict[str, Any]:
    return {"type": "input_audio_buffer.append", "audio": encode_audio(samples)}


def commit(final: bool = False) -> dict[str, Any]:
    return {"type": "input_audio_buffer.commit", **({"final": True} if final else {})}


def assert_error(raw: str, code: str, message: str | None = None) -> None:
    """``raw`` is an ``error`` with ``code`` (and ``message``), in vLLM's exact shape."""
    event = json.loads(raw)
    assert list(event) == ["type", "error", "code"], raw
    assert event["type"] == "error" and event["code"] == code, raw
    assert raw == compact(event), raw
    assert isinstance(event["error"], str) and event["error"], raw
    if message is not None:
        assert event["error"] == message, raw


def assert_still_serving(protocol: ServerProtocol) -> None:
    """A valid update, commit and final still start and end a generation, silently."""
    protocol.events_received()
    update = {"type": "session.update", "model": protocol.served_model}
    assert reply(protocol, update, commit(), commit(final=True)) == []
    assert [type(action) for action in protocol.events_received()] == [StartGeneration, EndOfAudio]


def kinds(protocol: ServerProtocol) -> list[type]:
    return [type(action) for action in protocol.events_received()]


def received(protocol: ServerProtocol) -> np.ndarray:
    """The samples of the ``AudioReceived`` actions so far, joined."""
    parts = [action.samples for action in protocol.events_received() if isinstance(action, AudioReceived)]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


Row = tuple[str, bool, Frame, str, str | None]


def row(name: str, validated: bool, frame: object, code: str, message: str | None) -> Row:
    """A table row; ``frame`` comes from a literal of mixed types that mypy widens to ``object``."""
    return (name, validated, cast(Frame, frame), code, message)


# Section 4: one error reply per frame. (id, validated first, frame, code, exact message or None)
ERROR_ROWS: list[Row] = [
    *(
        (f"s4_invalid_json[{text!r}]", False, text, "invalid_json", "Invalid JSON")
        for text in ("not json", "{", '{"type": "session.update",}', "")
    ),
    *(
        (f"s4_json_not_an_object[{text}]", False, text, "processing_error", f"'{kind}' object has no attribute 'get'")
        for text, kind in {"[]": "list", "5": "int", '"hello"': "str", "null": "NoneType", "true": "bool"}.items()
    ),
    *(
        row(f"s4_unknown_event[{name}]", False, event, "unknown_event", f"Unknown event type: {shown}")
        for name, event, shown in [
            ("misspelled", {"type": "session.updat", "model": MODEL}, "session.updat"),
            ("missing", {"model": MODEL}, "None"),
            ("null", {"type": None}, "None"),
            ("int", {"type": 5}, "5"),
            ("wrong_case", {"type": "Session.Update", "model": MODEL}, "Session.Update"),
            # vLLM compares a non-string type with strings: just another unknown type
            ("list", {"type": []}, "[]"),
            ("object", {"type": {"a": 1}}, "{'a': 1}"),
        ]
    ),
    *(
        (
            f"s2_openai_only_event[{kind}]",
            False,
            {"type": kind, "session": {"model": MODEL}},
            "unknown_event",
            f"Unknown event type: {kind}",
        )
        for kind in (
            "input_audio_buffer.clear",
            "transcription_session.update",
            "conversation.item.create",
            "response.create",
            "session.updated",
        )
    ),
    (
        "s2_commit_final_not_a_bool[maybe]",
        True,
        {"type": "input_audio_buffer.commit", "final": "maybe"},
        "processing_error",
        None,
    ),
    (
        "s2_commit_final_not_a_bool[None]",
        True,
        {"type": "input_audio_buffer.commit", "final": None},
        "processing_error",
        None,
    ),
    (
        "s2_commit_final_not_a_bool[2]",
        True,
        {"type": "input_audio_buffer.commit", "final": 2},
        "processing_error",
        None,
    ),
    *(
        row(f"s4_session_update_without_model[{name}]", False, event, "invalid_event", "Missing required field: model")
        for name, event in [
            ("missing", {"type": "session.update"}),
            ("null", {"type": "session.update", "model": None}),
            ("openai_nested", {"type": "session.update", "session": {"model": MODEL}}),
        ]
    ),
    *(
        row(
            f"s4_unknown_model[{model!r}]",
            False,
            {"type": "session.update", "model": model},
            "model_not_found",
            f"The model `{model}` does not exist.",
        )
        for model in ("nonexistent-model", "Voxdesk-Builtin", " voxdesk-builtin", 5)
    ),
    ("s4_commit_before_session_update", False, commit(), "model_not_validated", MODEL_NOT_VALIDATED),
    ("s4_final_commit_before_session_update", False, commit(final=True), "model_not_validated", MODEL_NOT_VALIDATED),
    *(
        row(f"s4_append_without_audio[{name}]", True, event, "processing_error", None)
        for name, event in [
            ("missing", {"type": "input_audio_buffer.append"}),
            ("null", {"type": "input_audio_buffer.append", "audio": None}),
            ("int", {"type": "input_audio_buffer.append", "audio": 5}),
            ("data_key", {"type": "input_audio_buffer.append", "data": CHUNK}),
        ]
    ),
    *(
        (
            f"s4_bad_base64[{name}]",
            True,
            {"type": "input_audio_buffer.append", "audio": audio},
            "invalid_audio",
            "Invalid audio data",
        )
        for name, audio in [
            ("abc", "abc"),
            ("AAAAA", "AAAAA"),
            ("A===", "A==="),
            ("data_url", f"data:audio/pcm;base64,{CHUNK}"),
        ]
    ),
    *(
        (
            f"s4_odd_byte_count[{len(raw)}]",
            True,
            {"type": "input_audio_buffer.append", "audio": b64(raw)},
            "invalid_audio",
            "Invalid audio data",
        )
        for raw in (b"\x01", b"\x00\x01\x02", bytes(3201))
    ),
    ("s4_empty_audio", True, {"type": "input_audio_buffer.append", "audio": ""}, "invalid_audio", "Invalid audio data"),
]


@pytest.mark.parametrize(
    ("validated", "frame", "code", "message"), [pytest.param(*row[1:], id=row[0]) for row in ERROR_ROWS]
)
def test_error_row(validated: bool, frame: Frame, code: str, message: str | None) -> None:
    """One frame, one error in vLLM's exact shape, no action, and the connection goes on."""
    protocol = connection(validated)
    [raw] = reply(protocol, frame)
    assert_error(raw, code, message)
    assert protocol.events_received() == []
    assert protocol.model_validated is validated
    assert_still_serving(protocol)


@pytest.mark.parametrize(("start", "end"), [(0, "yes"), ("no", 1)])
def test_s2_commit_final_is_coerced_like_pydantic(start: object, end: object) -> None:
    """``final`` is a lax pydantic bool: "yes"/1 end the audio, 0/"no" start a generation."""
    protocol = connection()
    assert reply(protocol, {"type": "input_audio_buffer.commit", "final": start}, append(np.zeros(800))) == []
    assert kinds(protocol) == [StartGeneration, AudioReceived]
    assert reply(protocol, {"type": "input_audio_buffer.commit", "final": end}) == []
    assert kinds(protocol) == [EndOfAudio]


@pytest.mark.parametrize(
    "update",
    [{"type": "session.update"}, {"type": "session.update", "model": "nope"}],
    ids=["without_model", "unknown_model"],
)
def test_s4_refused_update_does_not_validate(update: dict[str, Any]) -> None:
    protocol = connection(validated=False)
    assert len(reply(protocol, update)) == 1
    [raw] = reply(protocol, commit())
    assert_error(raw, "model_not_validated", MODEL_NOT_VALIDATED)


def test_s4_commit_with_queued_audio_before_session_update_is_model_not_validated() -> None:
    protocol = connection(validated=False)
    assert reply(protocol, append(np.zeros(SAMPLE_RATE // 2))) == []
    [raw] = reply(protocol, {"type": "input_audio_buffer.commit", "final": False})
    assert_error(raw, "model_not_validated", MODEL_NOT_VALIDATED)
    assert protocol.events_received() == []
    assert protocol.data_to_send() == []


def test_s4_empty_audio_during_a_generation_is_invalid_audio() -> None:
    protocol = connection()
    reply(protocol, commit())
    [raw] = reply(protocol, {"type": "input_audio_buffer.append", "audio": ""})
    assert_error(raw, "invalid_audio", "Invalid audio data")
    assert reply(protocol, commit(final=True)) == []
    assert kinds(protocol) == [StartGeneration, EndOfAudio]


def test_s4_message_over_sample_limit_is_dropped_alone() -> None:
    """vLLM's per-message sample cap: a chunk over it is refused; one exactly at it is kept."""
    protocol = connection(max_message_samples=SAMPLE_RATE)
    reply(protocol, commit())
    [raw] = reply(protocol, append(np.full(2 * SAMPLE_RATE, 0.5)))
    assert_error(raw, "invalid_audio", "Invalid audio data")
    assert reply(protocol, append(np.full(SAMPLE_RATE, 0.25))) == []
    kept = received(protocol)
    assert len(kept) == SAMPLE_RATE and np.allclose(kept, 0.25, atol=1e-4)


def test_s4_invalid_audio_mid_stream_drops_only_that_chunk() -> None:
    """Section 16 item 7 too: the generation goes on after ``invalid_audio``."""
    protocol = connection()
    first, second = np.full(800, 0.25), np.full(1200, -0.5)
    reply(protocol, commit(), append(first))
    [raw] = reply(protocol, {"type": "input_audio_buffer.append", "audio": b64(b"\x00\x01\x02")})
    assert_error(raw, "invalid_audio")
    assert reply(protocol, append(second), commit(final=True)) == []
    actions = protocol.events_received()
    assert [type(action) for action in actions] == [StartGeneration, AudioReceived, AudioReceived, EndOfAudio]
    joined = np.concatenate([action.samples for action in actions if isinstance(action, AudioReceived)])
    assert np.allclose(joined, np.concatenate([first, second]), atol=1e-4)


def test_s4_non_base64_characters_are_silently_dropped(fixture_audio: dict[str, np.ndarray]) -> None:
    """Characters outside the base64 alphabet are skipped, as ``pybase64`` (validate=False) does."""
    paris = fixture_audio["command01-slt"]
    clean, noisy = connection(), connection()
    step = SAMPLE_RATE // 4
    for protocol in (clean, noisy):
        reply(protocol, commit())
    for start in range(0, len(paris), step):
        audio = encode_audio(paris[start : start + step])
        assert reply(clean, {"type": "input_audio_buffer.append", "audio": audio}) == []
        spaced = "\n".join(audio[i : i + 76] for i in range(0, len(audio), 76)) + " !*"
        assert reply(noisy, {"type": "input_audio_buffer.append", "audio": spaced}) == []
    expected = received(clean)
    assert len(expected) == len(paris)
    assert np.array_equal(received(noisy), expected)


def test_s4_non_final_commit_while_generating_is_ignored() -> None:
    """Section 15 item 7 too: no reply, no restart; the one generation gets all the audio."""
    protocol = connection()
    assert reply(protocol, commit(), append(np.zeros(800)), commit(), commit(), append(np.zeros(800))) == []
    assert reply(protocol, commit(final=True)) == []
    assert kinds(protocol) == [StartGeneration, AudioReceived, AudioReceived, EndOfAudio]


def test_vx_final_commit_without_generation_is_an_error(caplog: pytest.LogCaptureFixture) -> None:
    """Section 16 item 9: vLLM answers nothing (its client waits for a ``done`` that never comes)
    and cuts the next generation short; Voxdesk says what is wrong, logs it, and neither."""
    protocol = connection()
    with caplog.at_level(logging.WARNING, logger="voxdesk.engine.wire.realtime.protocol"):
        [first, second] = reply(protocol, commit(final=True), commit(final=True))
    for raw in (first, second):
        assert_error(raw, "invalid_event", FINAL_WITHOUT_GENERATION_MESSAGE)
    assert "commit without final first to start the generation" in FINAL_WITHOUT_GENERATION_MESSAGE
    logged = "final commit with no generation running: answered with an error"
    assert [r.getMessage() for r in caplog.records] == [logged, logged]
    assert kinds(protocol) == []
    assert reply(protocol, commit(), append(np.zeros(800))) == []
    assert kinds(protocol) == [StartGeneration, AudioReceived]
    assert reply(protocol, commit(final=True), commit(final=True)) == []  # a second final while finishing
    assert kinds(protocol) == [EndOfAudio]
    protocol.send_done("text", Usage())
    assert [json.loads(raw)["type"] for raw in protocol.data_to_send()] == ["transcription.done"]
    [raw] = reply(protocol, commit(final=True))  # a stray final right after done
    assert_error(raw, "invalid_event", FINAL_WITHOUT_GENERATION_MESSAGE)
    assert kinds(protocol) == []
    assert reply(protocol, commit(), append(np.zeros(800))) == []
    assert kinds(protocol) == [StartGeneration, AudioReceived]


def test_s4_empty_done_is_exactly_vllms() -> None:
    """Section 15 item 11: ``done`` with "" and zero usage, byte for byte."""
    protocol = connection()
    reply(protocol, commit(), commit(final=True))
    protocol.send_done("", Usage())
    assert protocol.data_to_send() == [EMPTY_DONE]


def test_s15_item3_extra_keys_are_ignored() -> None:
    """Routing is on ``type`` only; unknown fields of known events change nothing."""
    protocol = connection(validated=False)
    extra_update = {"temperature": 0.7, "language": "fr", "session": {"model": "other"}, "event_id": "e1"}
    assert reply(protocol, {"type": "session.update", "model": MODEL, **extra_update}) == []
    assert protocol.model_validated
    assert reply(protocol, {"type": "input_audio_buffer.commit", "event_id": "e2", "item_id": "x"}) == []
    chunk = {"type": "input_audio_buffer.append", "audio": CHUNK, "format": "pcm24", "x": [1]}
    assert reply(protocol, chunk, {"type": "input_audio_buffer.commit", "final": True, "event_id": "e3"}) == []
    actions = protocol.events_received()
    assert [type(action) for action in actions] == [StartGeneration, AudioReceived, EndOfAudio]
    assert isinstance(actions[1], AudioReceived) and len(actions[1].samples) == 1600


@pytest.mark.parametrize("model", [MODEL, ""])
def test_s15_item4_valid_session_update_sends_nothing(model: str) -> None:
    """No ``session.updated``; the served name and "" both validate; it may be sent again."""
    protocol = connection(validated=False)
    for _ in range(2):
        assert reply(protocol, {"type": "session.update", "model": model}) == []
        assert protocol.model_validated
    assert_still_serving(protocol)


def test_s15_item4_skip_model_validation_switch() -> None:
    protocol = connection(validated=False, skip_model_validation=True)
    assert reply(protocol, {"type": "session.update", "model": "any-model-at-all"}) == []
    assert_still_serving(protocol)


def test_s15_item4_served_model_name_is_what_validates() -> None:
    protocol = connection(validated=False, served="my-model")
    [raw] = reply(protocol, {"type": "session.update", "model": MODEL})
    assert_error(raw, "model_not_found", f"The model `{MODEL}` does not exist.")
    assert reply(protocol, {"type": "session.update", "model": "my-model"}) == []
    assert_still_serving(protocol)


@pytest.mark.parametrize("validated_first", [False, True], ids=["s15_item7_before_validation", "s16_item4"])
def test_commit_uses_audio_queued_before_it(validated_first: bool) -> None:
    """Section 15 items 5 and 7, 16 item 4: audio appended before the commit starts the generation."""
    protocol = connection(validated=validated_first)
    first, rest = np.full(SAMPLE_RATE // 5, 0.25), np.full(SAMPLE_RATE, -0.25)
    assert reply(protocol, append(first)) == []
    assert protocol.events_received() == []
    assert reply(protocol, {"type": "session.update", "model": MODEL}, commit(), append(rest), commit(final=True)) == []
    actions = protocol.events_received()
    assert [type(action) for action in actions] == [StartGeneration, AudioReceived, AudioReceived, EndOfAudio]
    joined = np.concatenate([action.samples for action in actions if isinstance(action, AudioReceived)])
    assert np.allclose(joined, np.concatenate([first, rest]), atol=1e-4)


def test_s15_item10_audio_between_final_and_done_is_discarded() -> None:
    """After ``final`` the audio is dropped: it is neither in this generation nor in the next."""
    protocol = connection()
    assert reply(protocol, commit(), append(np.zeros(800)), commit(final=True), append(np.zeros(1600))) == []
    assert kinds(protocol) == [StartGeneration, AudioReceived, EndOfAudio]
    protocol.send_done("", Usage())
    protocol.data_to_send()
    assert reply(protocol, commit(), commit(final=True)) == []
    assert kinds(protocol) == [StartGeneration, EndOfAudio]  # the leftover audio is gone


def test_s16_item2_session_ids_are_unique() -> None:
    ids = {json.loads(connection(validated=False).session.to_json())["id"] for _ in range(3)}
    assert len(ids) == 3, ids


def test_s16_item5_any_chunk_size(fixture_audio: dict[str, np.ndarray]) -> None:
    """20 ms chunks, odd sample counts, one big chunk: every sample reaches the engine, in order."""
    paris = fixture_audio["command01-slt"]
    sizes = [320, 1, 3, 7999, 160, 12345, 2, 640]
    protocol = connection()
    reply(protocol, commit())
    start, index = 0, 0
    while start < len(paris):
        size = sizes[index % len(sizes)]
        assert reply(protocol, append(paris[start : start + size])) == []
        start, index = start + size, index + 1
    assert np.allclose(received(protocol), paris, atol=1 / 32768)
    assert reply(protocol, append(paris)) == []
    assert np.allclose(received(protocol), paris, atol=1 / 32768)


def test_vx_failed_update_keeps_earlier_validation() -> None:
    protocol = connection()
    [raw] = reply(protocol, {"type": "session.update", "model": "gpt-4o-transcribe"})
    assert_error(raw, "model_not_found", "The model `gpt-4o-transcribe` does not exist.")
    [raw] = reply(protocol, {"type": "session.update"})
    assert_error(raw, "invalid_event", "Missing required field: model")
    assert reply(protocol, commit(), commit(final=True)) == []
    assert kinds(protocol) == [StartGeneration, EndOfAudio]


def test_vx_session_audio_cap_is_buffer_full() -> None:
    """Appends beyond the session cap (2 s here) get ``buffer_full``; the session goes on."""
    protocol = connection(max_session_samples=2 * SAMPLE_RATE)
    half = np.zeros(SAMPLE_RATE // 2)
    assert reply(protocol, append(half), commit(), append(np.zeros(SAMPLE_RATE))) == []  # 1.5 s
    [raw] = reply(protocol, append(np.zeros(SAMPLE_RATE)))  # would be 2.5 s
    assert_error(raw, "buffer_full")
    assert reply(protocol, append(half)) == []  # exactly 2.0 s
    [raw] = reply(protocol, append(half[:320]))
    assert_error(raw, "buffer_full")
    assert reply(protocol, commit(final=True)) == []
    assert kinds(protocol) == [StartGeneration, AudioReceived, AudioReceived, AudioReceived, EndOfAudio]
    [raw] = reply(protocol, "oops")
    assert_error(raw, "invalid_json")
