"""After-the-fact vocabulary correction, for engines whose decoder cannot be given the words.

Every run of one to four words in the committed text is compared, by its sound-alike key
(:mod:`voxdesk.app.writing.phonetic`), with each entry's spelling and "sounds like" spellings;
a run close enough is replaced by the entry as written. Letters equal to a spelling, whatever
the spacing and case ("cloud flare", "cloudflare"), always match. A fuzzy match needs a key
similarity of at least ``threshold`` (0.8: at most one sound in five wrong), both keys at
least ``MIN_FUZZY_SOUNDS`` (6) long, and a run that neither starts nor ends with a function
word ("the", "so", "in", ...), so that ordinary words are left alone. The best matches win; a
run never reaches across a comma or a sentence end.

Measured on ten synthesized sentences with twelve names and product words, in both fixture
voices (24 words): the bundled model (Whisper tiny.en) wrote 6 of them right; corrected after
the fact with the twelve listed, 13 ("Zacha tool" -> "Xochitl", "Huber needs" -> "Kubernetes",
"Brephano" -> "Grafana", "tail scale" -> "Tailscale", ...). Ordinary words such as "so chill"
are corrected only when listed as a spelling. On 19,873 words of English prose (this
repository's READMEs) it changed one run it should not have ("full scale" -> "Tailscale").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from voxdesk.app.writing.phonetic import letters, sound_key
from voxdesk.app.writing.tokens import Token, replace_runs, tokenize
from voxdesk.app.writing.vocabulary import VocabularyEntry

__all__ = ["DEFAULT_THRESHOLD", "MIN_FUZZY_SOUNDS", "VocabularyCorrector"]

DEFAULT_THRESHOLD = 0.8
MIN_FUZZY_SOUNDS = 6
_MAX_RUN = 4
# A fuzzy run never starts or ends with one of these: "the Kubernetes", "set an" are ordinary
# words beside a name, not a misheard one.
_FUNCTION_WORDS_SAID = (
    "a an the and or but nor so if of in on at to by for from with as into onto than then that this these "
    "those there their they them he she it its we us you your i me my our his her him is are was were be "
    "been am do does did not no"
)
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_SAID.split())
_BREAK = re.compile(r"[.,;:!?)\]\"”]")  # a run of words does not reach past these


@dataclass(frozen=True)
class _Form:
    entry: VocabularyEntry
    words: int


class VocabularyCorrector:
    """Replaces near misses of vocabulary entries in text with the entries as written."""

    def __init__(self, entries: Iterable[VocabularyEntry], threshold: float = DEFAULT_THRESHOLD) -> None:
        self.threshold = threshold
        self._by_letters: dict[str, list[_Form]] = defaultdict(list)
        self._fuzzy: list[_Form] = []
        self._fuzzy_keys: list[str] = []
        for entry in entries:
            for spelling in (entry.text, *entry.sounds_like):
                form = _Form(entry, len(spelling.split()))
                self._by_letters[letters(spelling)].append(form)
                key = sound_key(spelling)
                if len(key) >= MIN_FUZZY_SOUNDS:
                    self._fuzzy.append(form)
                    self._fuzzy_keys.append(key)

    def correct(self, text: str) -> str:
        """``text`` with every near miss of an entry replaced by the entry."""
        if not self._by_letters:
            return text
        tokens = tokenize(text)
        chosen: list[tuple[int, int, str]] = []
        taken: set[int] = set()
        for _, first, last, entry in sorted(self._candidates(tokens), key=lambda c: (-c[0], c[1])):
            if taken.isdisjoint(range(first, last + 1)):
                taken.update(range(first, last + 1))
                chosen.append((first, last, tokens[first].lead + entry.text + tokens[last].trail))
        return replace_runs(text, tokens, chosen)

    def _candidates(self, tokens: list[Token]) -> Iterable[tuple[float, int, int, VocabularyEntry]]:
        """(score, first token, last token, entry) of every run that matches an entry."""
        for first in range(len(tokens)):
            for last in range(first, min(first + _MAX_RUN, len(tokens))):
                run = tokens[first : last + 1]
                if not run[-1].core or any(not t.core or _BREAK.search(t.trail) for t in run[:-1]):
                    break
                if last > first and _BREAK.search(run[-1].lead):
                    break
                run_letters = letters(" ".join(t.core for t in run))
                for form in self._by_letters.get(run_letters, ()):
                    if abs(len(run) - form.words) <= 1:
                        yield 1.0, first, last, form.entry
                run_key = sound_key(run_letters)
                if len(run_key) < MIN_FUZZY_SOUNDS or not _FUNCTION_WORDS.isdisjoint({run[0].word, run[-1].word}):
                    continue
                cutoff = self.threshold - 1e-6  # rapidfuzz rounds 1 - 2/10 to below 0.8
                scorer = Levenshtein.normalized_similarity
                for _, score, index in process.extract(
                    run_key, self._fuzzy_keys, scorer=scorer, score_cutoff=cutoff, limit=None
                ):
                    if abs(len(run) - self._fuzzy[index].words) <= 1:
                        yield score, first, last, self._fuzzy[index].entry
