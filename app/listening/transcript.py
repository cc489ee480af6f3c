"""The live transcript: utterances with committed text, a provisional tail, times and latencies."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["Transcript", "Utterance"]


@dataclass
class Utterance:
    """One stretch of speech. Times are seconds of audio since listening started."""

    id: int
    committed: str = ""
    provisional: str = ""
    start: float | None = None
    end: float | None = None
    final: bool = False
    first_partial_latency: float | None = None  # speech onset → first text shown
    final_latency: float | None = None  # end of speech → final text
    language: str | None = None  # the language the engine decoded it in, where it says

    @property
    def text(self) -> str:
        """Committed text followed by the provisional tail."""
        return " ".join(part for part in (self.committed.strip(), self.provisional.strip()) if part)


class Transcript:
    """Every utterance of the session in order. Ids are never reused, even after ``clear``."""

    def __init__(self) -> None:
        self._utterances: dict[int, Utterance] = {}
        self._next_id = 1

    def open(self, start: float | None = None) -> Utterance:
        """Start a new utterance and return it."""
        utterance = Utterance(self._next_id, start=start)
        self._next_id += 1
        self._utterances[utterance.id] = utterance
        return utterance

    def get(self, utterance_id: int) -> Utterance | None:
        return self._utterances.get(utterance_id)

    def commit(self, utterance_id: int, delta: str) -> Utterance | None:
        """Append committed text; ``None`` when the utterance was cleared away.

        Words the provisional tail already showed move out of it, so that nothing shows
        twice until the engine sends its next provisional text (a server sends the two
        in separate messages)."""
        utterance = self._utterances.get(utterance_id)
        if utterance is not None:
            utterance.committed += delta
            utterance.provisional = _without_prefix(utterance.provisional, delta)
        return utterance

    def set_provisional(self, utterance_id: int, text: str) -> Utterance | None:
        """Replace the provisional tail."""
        utterance = self._utterances.get(utterance_id)
        if utterance is not None:
            utterance.provisional = text
        return utterance

    def retract(self, utterance_id: int) -> Utterance | None:
        """Withdraw an utterance's committed and provisional text: the engine transcribes its
        audio again (a remote engine that moved to another server) and commits it anew."""
        utterance = self._utterances.get(utterance_id)
        if utterance is not None:
            utterance.committed = utterance.provisional = ""
        return utterance

    def finish(
        self, utterance_id: int, text: str, start: float, end: float, language: str | None = None
    ) -> Utterance | None:
        """Make an utterance final: the engine's final text replaces what was shown."""
        utterance = self._utterances.get(utterance_id)
        if utterance is not None:
            utterance.committed, utterance.provisional = text.strip(), ""
            utterance.start, utterance.end, utterance.final = start, end, True
            utterance.language = language
        return utterance

    def discard(self, utterance_id: int) -> None:
        """Drop an utterance that turned out to hold no words."""
        self._utterances.pop(utterance_id, None)

    def utterances(self) -> list[Utterance]:
        """Copies of every utterance, oldest first."""
        return [dataclasses.replace(u) for u in self._utterances.values()]

    def text(self) -> str:
        """The whole transcript as plain text, one utterance per line (for the clipboard)."""
        return "\n".join(u.text for u in self._utterances.values() if u.text)

    def clear(self) -> None:
        self._utterances.clear()


def _without_prefix(text: str, prefix: str) -> str:
    """``text`` minus its leading words when they are ``prefix``'s words (case and punctuation aside)."""
    words, leading = text.split(), prefix.split()
    if not leading or len(leading) > len(words):
        return text
    if [_bare(w) for w in words[: len(leading)]] != [_bare(w) for w in leading]:
        return text
    return " ".join(words[len(leading) :])


def _bare(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum())
