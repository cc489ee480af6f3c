"""An unexpected exception in the one sentence a user reads: its type and first line, cut short."""

from __future__ import annotations

from voxdesk.engine.errors import one_line


def test_an_exception_is_its_type_and_first_line() -> None:
    assert one_line(ValueError("bad shape\n  at encode()\n")) == "ValueError: bad shape"
    assert one_line(RuntimeError()) == "RuntimeError"


def test_a_long_first_line_is_cut_with_an_ellipsis() -> None:
    told = one_line(MemoryError("x" * 500))
    assert told.startswith("MemoryError: xxx") and told.endswith("…") and len(told) < 200
