"""A past utterance written again: through a mode (its formatting and LLM cleanup) or an edit by
instruction, for re-processing from the history (the window's *Run again* and ``voxdesk history
rewrite``)."""

from __future__ import annotations

from dataclasses import dataclass

from voxdesk.app.actions.ports import ActionError
from voxdesk.app.llm.cleanup import clean_up
from voxdesk.app.llm.client import Llm
from voxdesk.app.llm.edit import edit_text
from voxdesk.app.writing.modes import Mode
from voxdesk.app.writing.pipeline import write_text

__all__ = ["Rewritten", "rewrite"]


@dataclass(frozen=True)
class Rewritten:
    """The text written again, and why it is the text as it was (empty when it was rewritten)."""

    text: str
    note: str = ""


async def rewrite(llm: Llm, text: str, budget_s: float, mode: Mode, edit: str = "") -> Rewritten:
    """``text`` rewritten as ``edit`` says when given, else written in ``mode`` and cleaned up by
    its style; on any failure the text as it was (edits) or as the mode writes it, with a note."""
    if edit:
        try:
            return Rewritten(await edit_text(llm, text, edit, budget_s))
        except ActionError as error:
            return Rewritten(text, f"not rewritten: {error}")
    written = write_text(text, mode)
    cleaned = await clean_up(llm, written, mode.cleanup, budget_s, prompt=mode.cleanup_prompt)
    return Rewritten(cleaned.text, cleaned.note)
