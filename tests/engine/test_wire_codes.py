"""The one wire error-code enum, against each dialect's exact ``error`` code strings.

Each row is what a client of that dialect reads for the code, or ``None`` where the dialect
never sends it; the strings are the ones the dialects sent before the codes were one enum.
"""

from __future__ import annotations

import json

import pytest

from tests.engine.wyoming.wire import library_events
from voxdesk.engine.wire.codes import SENT, Dialect, WireCode, spell
from voxdesk.engine.wire.openai.protocol import OpenAIServerProtocol
from voxdesk.engine.wire.realtime.events import WIRE_ERROR_CODES
from voxdesk.engine.wire.realtime.protocol import ServerProtocol as VllmProtocol
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.engine.wire.wyoming.protocol import ServerProtocol as WyomingProtocol

TABLE: list[tuple[WireCode, str | None, str | None, str | None]] = [
    # code, then what a client reads in vLLM's /v1/realtime, OpenAI Realtime and Wyoming
    (WireCode.INVALID_JSON, "invalid_json", "invalid_json", None),
    (WireCode.UNKNOWN_EVENT, "unknown_event", "unknown_event", None),
    (WireCode.INVALID_EVENT, "invalid_event", None, "invalid_event"),
    (WireCode.MODEL_NOT_FOUND, "model_not_found", None, None),
    (WireCode.MODEL_NOT_VALIDATED, "model_not_validated", None, None),
    (WireCode.INVALID_AUDIO, "invalid_audio", "invalid_audio", "invalid_audio"),
    (WireCode.PROCESSING_ERROR, "processing_error", "processing_error", "processing_error"),
    (WireCode.IDLE_TIMEOUT, "idle_timeout", "idle_timeout", "idle_timeout"),
    (WireCode.BUFFER_FULL, "buffer_full", "buffer_full", "buffer_full"),
    (WireCode.SERVER_SHUTDOWN, "server_shutdown", "server_shutdown", "server_shutdown"),
    (WireCode.SERVER_BUSY, None, None, "server_busy"),
    (WireCode.MISSING_REQUIRED_PARAMETER, None, "missing_required_parameter", None),
    (WireCode.INVALID_VALUE, None, "invalid_value", None),
    (WireCode.UNSUPPORTED_AUDIO_FORMAT, None, "unsupported_audio_format", None),
    (WireCode.UNSUPPORTED_TURN_DETECTION, None, "unsupported_turn_detection", None),
    (WireCode.INPUT_AUDIO_BUFFER_COMMIT_EMPTY, None, "input_audio_buffer_commit_empty", None),
]
DIALECTS = (Dialect.VLLM, Dialect.OPENAI, Dialect.WYOMING)
CASES = [
    pytest.param(code, dialect, spelled, id=f"{code.name}-{dialect.value}")
    for code, *spellings in TABLE
    for dialect, spelled in zip(DIALECTS, spellings, strict=True)
]
INFO = ServiceInfo(AsrModel("tiny.en", ("en",)), "0.1.0", {"name": "test", "url": ""}).to_event()


def test_the_table_has_every_code_once() -> None:
    assert [row[0] for row in TABLE] == list(WireCode)


def on_the_wire(code: WireCode, dialect: Dialect) -> str:
    """The ``error`` code a client reads after the dialect's server core sends ``code``."""
    if dialect is Dialect.VLLM:
        vllm = VllmProtocol("m")
        vllm.send_error(code, "x")
        (frame,) = vllm.data_to_send()
        return str(json.loads(frame)["code"])
    if dialect is Dialect.OPENAI:
        openai = OpenAIServerProtocol("m")
        openai.send_error(code, "x")
        (frame,) = openai.data_to_send()
        return str(json.loads(frame)["error"]["code"])
    wyoming = WyomingProtocol(INFO)
    wyoming.send_error(code, "x")
    (event,) = library_events(wyoming.data_to_send())
    return str(event.data["code"])


@pytest.mark.parametrize(("code", "dialect", "spelled"), CASES)
def test_each_dialect_core_writes_its_spelling(code: WireCode, dialect: Dialect, spelled: str | None) -> None:
    if spelled is None:
        assert code not in SENT[dialect]
        with pytest.raises(ValueError, match=code.name):
            on_the_wire(code, dialect)
    else:
        assert spell(code, dialect) == spelled
        assert on_the_wire(code, dialect) == spelled


def test_the_vllm_dialect_sends_exactly_its_column() -> None:
    assert {vllm for _, vllm, _, _ in TABLE if vllm is not None} == WIRE_ERROR_CODES
