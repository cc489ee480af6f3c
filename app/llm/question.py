"""Questions Voxdesk's own state cannot answer, put to the LLM: a short answer in the transcript."""

from __future__ import annotations

import re

from voxdesk.app.actions.ports import ActionError
from voxdesk.app.llm.client import Llm, LlmError
from voxdesk.app.llm.text_answer import TEXT_SCHEMA, parse_text_answer

__all__ = ["answer_question", "is_question"]

# Only the wh-words: "do", "can", "is" start commands as often as questions ("do a search").
_QUESTION_WORDS = re.compile(r"^(what|who|whom|whose|when|where|why|how|which)\b", re.IGNORECASE)
_MAX_ANSWER_CHARS = 600  # a spoken assistant's answer is a few sentences


def is_question(text: str) -> bool:
    """Whether an utterance asks something: it ends with "?" (the recognizer's punctuation) or
    starts with a wh-word."""
    return text.rstrip().endswith("?") or bool(_QUESTION_WORDS.match(text.strip()))


async def answer_question(llm: Llm, question: str, budget_s: float) -> str:
    """A short answer to ``question`` by ``llm`` within ``budget_s``.

    Raises:
        ActionError: the model could not be asked in time, or its answer is not a short text.
    """
    system = (
        "You are a desktop voice assistant. Answer the user's question in one to three short sentences. "
        'Answer with JSON: {"text": "<the answer>"}.'
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    try:
        reply = await llm.chat(messages, budget_s, schema=TEXT_SCHEMA, max_tokens=256)
    except LlmError as error:
        raise ActionError(str(error)) from None
    answer = parse_text_answer(reply.text)
    if answer is None or not answer.strip():
        raise ActionError(f"the LLM's answer is not JSON with a text: {reply.text[:60]!r}")
    if len(answer) > _MAX_ANSWER_CHARS:
        raise ActionError(f"the LLM's answer is {len(answer)} characters long")
    return answer.strip()
