"""Stream error codes: typed, and spelled as on the wire."""

from __future__ import annotations

from voxdesk.engine import StreamErrorCode
from voxdesk.engine.wire.realtime.events import WIRE_ERROR_CODES


def test_stream_error_codes_keep_their_strings() -> None:
    assert {code.name: code.value for code in StreamErrorCode} == {
        "INVALID_JSON": "invalid_json",
        "UNKNOWN_EVENT": "unknown_event",
        "INVALID_EVENT": "invalid_event",
        "MODEL_NOT_FOUND": "model_not_found",
        "MODEL_NOT_VALIDATED": "model_not_validated",
        "INVALID_AUDIO": "invalid_audio",
        "PROCESSING_ERROR": "processing_error",
        "IDLE_TIMEOUT": "idle_timeout",
        "BUFFER_FULL": "buffer_full",
        "SERVER_SHUTDOWN": "server_shutdown",
        "CONNECTION_LOST": "connection_lost",
        "UNAUTHORIZED": "unauthorized",
        "ERROR": "error",
    }


def test_the_wire_codes_are_vllms_seven_and_voxdesks_three() -> None:
    assert sorted(WIRE_ERROR_CODES) == sorted(
        [
            "invalid_json",
            "unknown_event",
            "invalid_event",
            "model_not_found",
            "model_not_validated",
            "invalid_audio",
            "processing_error",
            "idle_timeout",
            "buffer_full",
            "server_shutdown",
        ]
    )
