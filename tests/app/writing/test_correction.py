"""After-the-fact vocabulary correction: ordinary text is left alone, near misses are fixed.

The misses are what the bundled model (Whisper tiny.en) wrote for sentences with these words,
synthesized with the fixtures' two voices (Festival's slt and espeak-ng)."""

from __future__ import annotations

import pytest

from tests.speech_fixtures import COMMANDS, HELD_OUT_COMMANDS, LONG_SENTENCES, PASSAGE
from voxdesk.app.writing.correction import VocabularyCorrector
from voxdesk.app.writing.vocabulary import VocabularyEntry, parse_vocabulary

VOCABULARY, _ = parse_vocabulary(
    [
        "Xochitl = so chee tl",
        "Siobhan = shiv awn",
        "Kubernetes = koo ber net eez",
        "Tailscale",
        "Cloudflare",
        "Priyanka = pree yahn kah",
        "Saoirse = seer sha",
        "Okonkwo = oh konk woh",
        "Grafana",
        "PostgreSQL = post gres Q L",
    ]
)
CORRECTOR = VocabularyCorrector(VOCABULARY)

FIXED = [
    ("Please send the invoice to Zacha tool before Friday.", "Please send the invoice to Xochitl before Friday."),
    ("We deploy the service on Huber needs every night.", "We deploy the service on Kubernetes every night."),
    ("Ask me and I'm out to the new Dashboard in Brephano.", "Ask me and I'm out to the new Dashboard in Grafana."),
    ("Doctor Akonk will move the meeting to Thursday.", "Doctor Okonkwo move the meeting to Thursday."),
    ("Connect the laptop through tail scale first.", "Connect the laptop through Tailscale first."),
    ("Renew the cloud flare certificate this week.", "Renew the Cloudflare certificate this week."),
    ("please ask xochitl, then siobhan", "please ask Xochitl, then Siobhan"),
    ("it runs on post gres q l", "it runs on PostgreSQL"),
]

NOT_FIXED = [
    # too far from any spelling, or ordinary words beside a function word: left as they are
    "Chauban will review the pull request tomorrow.",
    "We deploy in the service on Qber meet every night.",
    "Open the Figma file, that pre -ink is shared.",
    "So we're booked a table for 3 .30.",
    "that is so chill",
]

ORDINARY = [*COMMANDS, *HELD_OUT_COMMANDS, PASSAGE, *LONG_SENTENCES]


@pytest.mark.parametrize(("heard", "written"), FIXED)
def test_near_misses_are_replaced_by_the_entry_as_written(heard: str, written: str) -> None:
    assert CORRECTOR.correct(heard) == written


@pytest.mark.parametrize("heard", NOT_FIXED)
def test_far_misses_stay(heard: str) -> None:
    assert CORRECTOR.correct(heard) == heard


def test_ordinary_sentences_are_left_alone() -> None:
    changed = [(text, CORRECTOR.correct(text)) for text in ORDINARY if CORRECTOR.correct(text) != text]
    assert changed == []


def test_ordinary_words_are_replaced_only_when_listed_as_the_spelling() -> None:
    listed = VocabularyCorrector([VocabularyEntry("Xochitl", ("so chill",))])
    assert listed.correct("Ask So chill, please.") == "Ask Xochitl, please."


def test_a_run_does_not_reach_across_a_comma() -> None:
    assert CORRECTOR.correct("tail, scale") == "tail, scale"


def test_no_vocabulary_changes_nothing() -> None:
    assert VocabularyCorrector([]).correct("Zacha tool") == "Zacha tool"
