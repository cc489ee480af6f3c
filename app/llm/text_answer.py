"""The one answer shape the LLM's text uses ask for: JSON ``{"text": ...}``, checked."""

from __future__ import annotations

import json

__all__ = ["TEXT_SCHEMA", "parse_text_answer"]

TEXT_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


def parse_text_answer(answer: str) -> str | None:
    """The ``text`` of an answer that is JSON of :data:`TEXT_SCHEMA`'s shape, else None."""
    try:
        value = json.loads(answer)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        return None
    return str(value["text"])
