"""Text rewritten by voice: "make that shorter", "translate that to French", "fix the grammar".

The model gets the text and the instruction and answers JSON ``{"text": ...}``; an answer that
is not that, is empty, or is far longer than any rewrite would be raises :class:`ActionError`
with what was wrong, so the text in the app is left as it was.
"""

from __future__ import annotations

from voxdesk.app.actions.ports import ActionError
from voxdesk.app.llm.client import Llm, LlmError
from voxdesk.app.llm.text_answer import TEXT_SCHEMA, parse_text_answer

__all__ = ["edit_messages", "edit_text"]

_MAX_GROWTH, _MAX_EXTRA_CHARS = 4.0, 200  # a list or a translation may be longer; not this much


def edit_messages(text: str, instruction: str) -> list[dict[str, str]]:
    """The chat messages that ask for ``text`` rewritten as ``instruction`` says."""
    system = (
        "You rewrite a text the user dictated, as their instruction says, and nothing else. "
        f"The instruction: {instruction}. "
        'Answer with JSON: {"text": "<the rewritten text>"}.'
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


async def edit_text(llm: Llm, text: str, instruction: str, budget_s: float) -> str:
    """``text`` rewritten by ``llm`` as ``instruction`` says, within ``budget_s``.

    Raises:
        ActionError: the model could not be asked in time, or its answer is not a rewritten text.
    """
    messages = edit_messages(text, instruction)
    try:
        reply = await llm.chat(messages, budget_s, schema=TEXT_SCHEMA, max_tokens=256 + 4 * len(text))
    except LlmError as error:
        raise ActionError(str(error)) from None
    edited = parse_text_answer(reply.text)
    if edited is None:
        raise ActionError(f"the LLM's answer is not JSON with a text: {reply.text[:60]!r}")
    if not edited.strip():
        raise ActionError("the LLM answered an empty text")
    if len(edited) > _MAX_GROWTH * len(text) + _MAX_EXTRA_CHARS:
        raise ActionError(f"the LLM wrote {len(edited)} characters for {len(text)}")
    return edited.strip()
