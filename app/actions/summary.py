"""An action record in one line of plain words, as the transcript and the overlay show it."""

from __future__ import annotations

from voxdesk.app.actions.center import ActionRecord, ActionStatus

__all__ = ["action_line"]


def action_line(record: ActionRecord) -> str:
    """Command, slots, status and what came of it: ``timer (n: 5, unit: minutes) — done: …``."""
    if record.status is ActionStatus.NOT_UNDERSTOOD:
        return f"not understood — {record.message}"
    if record.source == "dictation":
        what = "dictation"
    else:
        slots = ", ".join(f"{key}: {value}" for key, value in record.slots.items())
        guessed = " (guessed)" if record.source == "llm" else ""
        what = f"{record.command}{guessed}" + (f" ({slots})" if slots else "")
    status = str(record.status)
    if record.status is ActionStatus.WAITING:
        status = f"{status}: {record.preview}"
    elif record.message and record.status is not ActionStatus.CANCELLED:
        status = f"{status}: {record.message}"
    return f"{what} — {status}"
