"""Dictation cleaned up by the language model in a mode's style, or left as heard.

The model is asked for JSON ``{"text": ...}`` (structured outputs where the server has them)
and its answer is checked before it is used: JSON of that shape, some text, and not much
longer than what was said (a model that answers the text instead of cleaning it writes more).
Whatever goes wrong, the text as heard is kept and :attr:`Cleaned.note` says why.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.llm.client import Llm, LlmError
from voxdesk.app.llm.text_answer import TEXT_SCHEMA, parse_text_answer
from voxdesk.app.writing.modes import CleanupStyle, Mode

__all__ = ["CLEANUP_SCHEMA", "Cleaned", "clean_up", "cleaned_report", "cleanup_messages"]

CLEANUP_SCHEMA = TEXT_SCHEMA

_MAX_GROWTH = 2.0  # a cleaned text at most twice as long as the heard one, plus a little
_MAX_EXTRA_CHARS = 40


_STYLE_PROMPTS = {
    CleanupStyle.LIGHT: (
        "Remove filler words (um, uh, you know, like) and false starts, and fix punctuation and capitals. "
        "Keep the speaker's words, order and meaning; add nothing."
    ),
    CleanupStyle.FORMAL: (
        "Remove filler words and false starts and rewrite it in a clear, formal register with correct "
        "punctuation. Keep the meaning; add nothing."
    ),
}


@dataclass(frozen=True)
class Cleaned:
    """The text to write, and why it is the text as heard (empty when the model cleaned it)."""

    text: str
    note: str = ""


def cleanup_messages(
    text: str, style: CleanupStyle, prompt: str = "", vocabulary: tuple[str, ...] = (), app: str = ""
) -> list[dict[str, str]]:
    """The chat messages that ask for ``text`` cleaned up in ``style`` (``prompt`` for CUSTOM)."""
    instructions = prompt if style is CleanupStyle.CUSTOM else _STYLE_PROMPTS[style]
    system = f"You clean up dictated text. {instructions}"
    if vocabulary:
        system += f" Spell these words and names exactly so: {', '.join(vocabulary)}."
    if app:
        system += f" The text is typed into {app}."
    system += ' Answer with JSON: {"text": "<the cleaned text>"}.'
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


async def clean_up(
    llm: Llm,
    text: str,
    style: CleanupStyle,
    budget_s: float,
    *,
    prompt: str = "",
    vocabulary: tuple[str, ...] = (),
    app: str = "",
) -> Cleaned:
    """``text`` cleaned up by ``llm`` within ``budget_s``, or as heard with a note saying why."""
    if style is CleanupStyle.NONE or not text.strip():
        return Cleaned(text)
    messages = cleanup_messages(text, style, prompt, vocabulary, app)
    try:
        reply = await llm.chat(messages, budget_s, schema=CLEANUP_SCHEMA, max_tokens=_token_limit(text))
    except LlmError as error:
        return Cleaned(text, f"not cleaned up: {error}")
    cleaned = parse_text_answer(reply.text)
    if cleaned is None:
        return Cleaned(text, f"not cleaned up: the LLM's answer is not JSON with a text: {reply.text[:60]!r}")
    if not cleaned.strip():
        return Cleaned(text, "not cleaned up: the LLM answered an empty text")
    if len(cleaned) > _MAX_GROWTH * len(text) + _MAX_EXTRA_CHARS:
        return Cleaned(text, f"not cleaned up: the LLM wrote {len(cleaned)} characters for {len(text)}")
    return Cleaned(cleaned.strip())


def _token_limit(text: str) -> int:
    """Enough tokens for the cleaned text and its JSON, so a runaway answer ends."""
    return 64 + 2 * len(text)


async def cleaned_report(
    report: TranscriptionReport, mode: Mode, llm: Llm, budget_s: float
) -> tuple[TranscriptionReport, list[str]]:
    """``report`` with each utterance's final text cleaned up in ``mode``'s style (each within
    ``budget_s``), and one note per utterance left as heard."""
    vocabulary = tuple(entry.text for entry in mode.vocabulary)
    utterances, notes = [], []
    for number, utterance in enumerate(report.utterances, start=1):
        cleaned = await clean_up(
            llm, utterance.done.text, mode.cleanup, budget_s, prompt=mode.cleanup_prompt, vocabulary=vocabulary
        )
        if cleaned.note:
            notes.append(f"utterance {number}: {cleaned.note}")
        utterances.append(dataclasses.replace(utterance, done=dataclasses.replace(utterance.done, text=cleaned.text)))
    return dataclasses.replace(report, utterances=utterances), notes
