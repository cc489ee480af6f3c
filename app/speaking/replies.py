"""What is said aloud for an action record, and how long a reply may be."""

from __future__ import annotations

import enum
import re

from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.kinds import Action

__all__ = ["MORE_ON_SCREEN", "ReplyKind", "reply_for", "spoken_text"]


class ReplyKind(enum.StrEnum):
    """What a reply is, each spoken or not by its own setting (``[speech]``)."""

    ANSWER = "answers"
    CONFIRMATION = "confirmations"
    ALARM = "alarms"
    ERROR = "errors"


MORE_ON_SCREEN = "More on screen."
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def reply_for(record: ActionRecord) -> tuple[str, ReplyKind] | None:
    """The reply to say for ``record`` as it stands, and its kind; ``None`` when nothing is said
    (an action that simply ran: its effect is the answer; a request not understood)."""
    if record.status is ActionStatus.DONE and record.action is Action.ANSWER:
        return record.message, ReplyKind.ANSWER
    if record.status is ActionStatus.WAITING:
        return f"{record.preview}?", ReplyKind.CONFIRMATION
    if record.status is ActionStatus.FAILED:
        return f"That did not work: {record.message}.", ReplyKind.ERROR
    # Not understood is shown, not said: while a reply plays the microphone is deaf (no echo
    # canceller yet), and what is said next, often the request again, would be lost.
    return None


def spoken_text(text: str, max_sentences: int) -> str:
    """``text`` cut after ``max_sentences`` sentences, with :data:`MORE_ON_SCREEN` when cut."""
    sentences = [part for part in _SENTENCE_END.split(text.strip()) if part]
    if len(sentences) <= max(1, max_sentences):
        return text.strip()
    return " ".join([*sentences[: max(1, max_sentences)], MORE_ON_SCREEN])
