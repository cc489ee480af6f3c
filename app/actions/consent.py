"""A spoken yes or no to the action that waits for confirmation: what its *Confirm* and
*Cancel* links do, for a short while after it asked."""

from __future__ import annotations

from voxdesk.app.textnorm import normalize_text

__all__ = ["CONSENT_WINDOW_S", "consent"]

CONSENT_WINDOW_S = 30.0
"""How long after an action asked a spoken yes or no still answers it (later, only the links do)."""

_YES = frozenset({"yes", "yeah", "yep", "sure", "confirm", "do it", "go ahead", "okay", "yes please", "yes do it"})
_NO = frozenset({"no", "nope", "cancel", "cancel it", "dont", "do not", "never mind", "no thanks", "no thank you"})


def consent(said: str) -> bool | None:
    """``True`` for a spoken yes, ``False`` for a no, ``None`` for anything else."""
    words = normalize_text(said).replace("'", "")
    if words in _YES:
        return True
    if words in _NO:
        return False
    return None
