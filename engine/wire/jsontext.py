"""JSON text as the wire cores and the client engines read and write it, whatever a peer sends.

A peer's JSON can be nested deeper than Python's parser goes, and can carry a lone surrogate
(``"\\ud800"``, valid JSON, not valid Unicode), which no UTF-8 write takes. :func:`loads`
makes the first one more invalid JSON (a ``ValueError``, not a ``RecursionError``);
:func:`loads_unicode` (:func:`check_unicode`) refuses the second too, for text that goes on to a user;
:func:`escape_surrogates` writes it back as the JSON escape it came as.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["check_unicode", "escape_surrogates", "loads", "loads_unicode"]


def loads(text: str | bytes) -> Any:
    """The JSON value of ``text``.

    Raises:
        ValueError: not JSON (bytes that are not UTF-8 included), or nested deeper than the parser goes.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested deeper than the parser goes") from None


def loads_unicode(text: str | bytes) -> Any:
    """The JSON value of ``text``, every string in it valid Unicode (:func:`check_unicode`).

    Raises:
        ValueError: as :func:`loads`, or a string with a lone surrogate.
    """
    value = loads(text)
    check_unicode(value)
    return value


def check_unicode(value: Any) -> None:
    """Check that every string in a JSON value (key or value, at any depth) is valid Unicode.

    Raises:
        ValueError: a string with a lone surrogate, which no UTF-8 write takes.
    """
    pending = [value]
    while pending:  # a loop, not recursion: the value may be nested as deep as the parser went
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as bad:
                raise ValueError(f"a string with a lone surrogate ({item[bad.start]!a}), not Unicode") from None
        elif isinstance(item, dict):
            pending += item.keys()
            pending += item.values()
        elif isinstance(item, list):
            pending += item


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a peer's ``"\\ud800"`` echoed back) as its JSON escape,
    which reads back the same: the text is then valid UTF-8."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
