"""The transcript model: committed text, provisional tail, finals, ids."""

from __future__ import annotations

from voxdesk.app.listening.transcript import Transcript


def test_committed_words_leave_the_provisional_tail() -> None:
    transcript = Transcript()
    utterance = transcript.open()
    transcript.set_provisional(utterance.id, "Open the...")
    transcript.commit(utterance.id, "Open")
    shown = transcript.get(utterance.id)
    assert shown is not None and (shown.committed, shown.provisional) == ("Open", "the...")
    assert shown.text == "Open the..."
    transcript.commit(utterance.id, " the")
    transcript.set_provisional(utterance.id, " browser")
    assert transcript.text() == "Open the browser"


def test_a_tail_that_disagrees_with_the_commit_is_left_for_the_engine_to_replace() -> None:
    transcript = Transcript()
    utterance = transcript.open()
    transcript.set_provisional(utterance.id, "call mo")
    transcript.commit(utterance.id, "call me")
    assert transcript.get(utterance.id).provisional == "call mo"  # type: ignore[union-attr]


def test_final_text_replaces_what_was_shown_and_ids_are_never_reused() -> None:
    transcript = Transcript()
    first = transcript.open()
    transcript.commit(first.id, "helo wrld")
    transcript.finish(first.id, " Hello world. ", 1.0, 2.0)
    (final,) = transcript.utterances()
    assert (final.committed, final.provisional, final.start, final.end, final.final) == (
        "Hello world.",
        "",
        1.0,
        2.0,
        True,
    )
    transcript.clear()
    assert transcript.text() == "" and transcript.commit(first.id, "late") is None
    assert transcript.open().id == first.id + 1


def test_discarded_utterances_vanish() -> None:
    transcript = Transcript()
    kept, noise = transcript.open(), transcript.open()
    transcript.commit(kept.id, "kept")
    transcript.discard(noise.id)
    assert [u.id for u in transcript.utterances()] == [kept.id]


def test_a_retraction_withdraws_committed_and_provisional_text_until_new_deltas_come() -> None:
    transcript = Transcript()
    utterance = transcript.open()
    transcript.commit(utterance.id, "search for")
    transcript.set_provisional(utterance.id, " weather")
    transcript.retract(utterance.id)
    assert transcript.get(utterance.id).text == ""  # type: ignore[union-attr]
    transcript.commit(utterance.id, "search for weather")
    assert transcript.text() == "search for weather"
    assert transcript.retract(999) is None
