"""JSON text as the wire cores write it, whatever a peer sent: a lone surrogate
(``"\\ud800"``, valid JSON, not valid Unicode), which no UTF-8 write takes, is written back as
the JSON escape it came as (:func:`escape_surrogates`).
"""

from __future__ import annotations

__all__ = ["escape_surrogates"]


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a peer's ``"\\ud800"`` echoed back) as its JSON escape,
    which reads back the same: the text is then valid UTF-8."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
