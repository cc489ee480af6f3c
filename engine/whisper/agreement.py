"""Stable-prefix agreement: decide which words of successive partial decodes to commit.

A word is committed once two consecutive hypotheses agree on it, word for word and with the
same spelling and punctuation, and it is not among the last ``holdback`` words of the newest
hypothesis: those lie at the edge of the audio heard so far, where a word may be cut off and
a truncated decode guesses ("call mo…" → "moment"). This is LocalAgreement-2 as used by
whisper_streaming, plus the hold-back. A hypothesis the decoder was unsure of (noise) commits
nothing: its words stay provisional and the final decode settles them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["StablePrefix", "join_words"]


@dataclass
class StablePrefix:
    """Committed words of one utterance plus the last uncommitted continuation seen."""

    holdback: int = 2
    committed: list[str] = field(default_factory=list)
    _previous: list[str] = field(default_factory=list)

    @property
    def provisional(self) -> list[str]:
        """The uncommitted words of the newest hypothesis."""
        return self._previous

    def update(self, continuation: list[str], sure: bool = True) -> tuple[list[str], list[str]]:
        """Take the words a new decode put after the committed ones; ``sure=False`` commits none.

        Returns:
            The newly committed words and the remaining provisional words.
        """
        agreed = 0
        limit = min(len(self._previous), len(continuation) - self.holdback) if sure else 0
        while agreed < limit and self._previous[agreed] == continuation[agreed]:
            agreed += 1
        newly = continuation[:agreed]
        self.committed.extend(newly)
        self._previous = continuation[agreed:]
        return newly, self._previous


def join_words(words: list[str], after: list[str]) -> str:
    """Text that appends ``words`` to text made of ``after``, so the pieces concatenate."""
    text = " ".join(words)
    return " " + text if after and text else text
