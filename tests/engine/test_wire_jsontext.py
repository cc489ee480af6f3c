"""The one reading and writing of a peer's JSON text the wire cores and client engines share
(:mod:`voxdesk.engine.wire.jsontext`): nesting past the parser and lone surrogates."""

from __future__ import annotations

import json

from voxdesk.engine.wire.jsontext import escape_surrogates
from voxdesk.engine.wire.realtime.protocol import ServerProtocol
from voxdesk.engine.wire.wyoming.framing import Event, encode_event


def test_a_lone_surrogate_is_written_as_the_escape_it_came_as_by_every_core() -> None:
    text = "é \ud800 \U0001f600"
    escaped = escape_surrogates(text)
    assert escaped == "é \\ud800 \U0001f600" and escaped.encode("utf-8")
    assert json.loads(f'"{escaped}"') == text  # reads back the same
    # the two writers of the cores go through it: the same escape in a Wyoming event and a realtime frame
    assert b"\\ud800" in encode_event(Event("ping", {"text": "\ud800"}))
    core = ServerProtocol("m")
    core.receive_text('{"type": "\\ud800"}')  # an unknown type, echoed in the error
    (frame,) = core.data_to_send()
    assert "\\ud800" in frame and frame.isascii()
