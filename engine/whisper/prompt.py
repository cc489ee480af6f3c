"""A session's vocabulary as Whisper's previous-text prompt, and the check that keeps it honest.

Whisper continues the text it is shown before the audio's transcript ("previous text", after
``<|startofprev|>``); words written there are far likelier to be written again, so listing the
user's names and product words there biases every decode towards them (faster-whisper calls
this ``hotwords``; OpenAI's API takes it as the transcription ``prompt``). The prompt holds
at most :data:`PREVIOUS_TEXT_TOKENS` tokens, and the engine already puts up to 64 tokens of the
utterance's earlier words there, so the vocabulary gets what is left: entries are taken in
order of relevance (the order given: a session's own words before the engine's) as long as
they fit, and an entry that does not fit is skipped for the next, shorter ones; what is left
out is reported.

Biasing also writes a listed word where none was said ("renew the Cloudflare Sir Xochitl" for
"Cloudflare certificate"). :func:`listed_runs` finds the listed words a decode wrote, so the
decoder can score them against the audio without the prompt and drop the biased decode
when the audio does not support them (:mod:`voxdesk.engine.whisper.decoder`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["PREVIOUS_TEXT_TOKENS", "VocabularyPrompt", "build_prompt", "listed_runs"]

logger = logging.getLogger(__name__)

PREVIOUS_TEXT_TOKENS = 223
"""Tokens Whisper's previous text holds after ``<|startofprev|>`` (its 448-token context, halved, less one)."""

_SEPARATOR = ","  # entries are written as a list: " Xochitl, Kubernetes, Tailscale."


@dataclass(frozen=True)
class VocabularyPrompt:
    """The entries that fit, their tokens as previous text, and the entries left out."""

    tokens: tuple[int, ...]
    entries: tuple[str, ...]
    left_out: tuple[str, ...] = ()
    keys: tuple[tuple[str, ...], ...] = ()  # each entry's words as :func:`_key` writes them

    def __bool__(self) -> bool:
        return bool(self.entries)


def build_prompt(entries: Sequence[str], encode: Callable[[str], list[int]], budget: int) -> VocabularyPrompt:
    """The most relevant ``entries`` (first given first) whose list fits in ``budget`` tokens.

    ``encode`` is the model's tokenizer. An entry too long for what is left is left out and
    the next ones are still tried, so as many entries as fit are kept; the prompt lists the
    kept ones in the order given. Duplicates (any case) count once.
    """
    kept: list[str] = []
    left_out: list[str] = []
    seen: set[str] = set()
    for entry in (e.strip() for e in entries):
        if not entry or entry.casefold() in seen:
            continue
        seen.add(entry.casefold())
        if len(_encode_list([*kept, entry], encode)) <= budget:
            kept.append(entry)
        else:
            left_out.append(entry)
    if left_out:
        logger.info("vocabulary: %d entries fit Whisper's prompt; left out: %s", len(kept), ", ".join(left_out))
    keys = tuple(tuple(_key(word) for word in entry.split()) for entry in kept)
    return VocabularyPrompt(tuple(_encode_list(kept, encode)), tuple(kept), tuple(left_out), keys)


def _encode_list(entries: list[str], encode: Callable[[str], list[int]]) -> list[int]:
    return encode(" " + f"{_SEPARATOR} ".join(entries) + ".") if entries else []


def listed_runs(prompt: VocabularyPrompt, words: Sequence[str]) -> list[tuple[int, int]]:
    """Where ``words`` contain an entry of ``prompt``: (first, past-last) word indices, any
    case, punctuation around the words ignored."""
    keys = [_key(word) for word in words]
    runs: list[tuple[int, int]] = []
    for entry in prompt.keys:
        size = len(entry)
        runs += [(i, i + size) for i in range(len(keys) - size + 1) if tuple(keys[i : i + size]) == entry]
    return sorted(runs)


def _key(word: str) -> str:
    return "".join(c for c in word.casefold() if c.isalnum())
