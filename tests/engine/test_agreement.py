from voxdesk.engine.whisper.agreement import StablePrefix, join_words


def test_nothing_is_committed_from_a_single_hypothesis() -> None:
    agreement = StablePrefix()
    newly, tail = agreement.update(["Set", "a", "timer."])
    assert newly == [] and tail == ["Set", "a", "timer."]


def test_words_two_hypotheses_agree_on_are_committed_except_the_held_back_ones() -> None:
    agreement = StablePrefix(holdback=1)
    agreement.update(["Set", "a", "timer."])
    newly, tail = agreement.update(["Set", "a", "timer", "for", "five."])
    assert newly == ["Set", "a"]
    assert tail == ["timer", "for", "five."]
    assert agreement.committed == ["Set", "a"]


def test_the_newest_last_words_are_held_back_even_when_they_agree() -> None:
    agreement = StablePrefix(holdback=2)
    agreement.update(["call", "moment", "three"])
    newly, tail = agreement.update(["call", "moment", "three"])
    assert newly == ["call"] and tail == ["moment", "three"]
    one = StablePrefix(holdback=1)
    one.update(["open", "the"])
    assert one.update(["open", "the"]) == (["open"], ["the"])


def test_later_hypotheses_continue_after_the_committed_words() -> None:
    agreement = StablePrefix(holdback=1)
    agreement.update(["a", "b", "c"])
    agreement.update(["a", "b", "c", "d"])  # commits a b c
    newly, tail = agreement.update(["d", "e"])  # continuation after the committed words
    assert newly == ["d"] and tail == ["e"]
    assert agreement.committed == ["a", "b", "c", "d"]


def test_disagreement_commits_nothing() -> None:
    agreement = StablePrefix(holdback=1)
    agreement.update(["The", "quick", "round"])
    newly, _ = agreement.update(["A", "quick", "brown", "fox"])
    assert newly == []


def test_join_words_makes_pieces_that_concatenate() -> None:
    assert join_words(["Set", "a"], []) == "Set a"
    assert join_words(["timer"], ["Set", "a"]) == " timer"
    assert join_words([], ["Set"]) == ""
    assert "".join([join_words(["Set", "a"], []), join_words(["timer."], ["Set", "a"])]) == "Set a timer."


def test_an_unsure_hypothesis_commits_nothing_and_the_next_sure_one_agrees_with_it() -> None:
    agreement = StablePrefix(holdback=1)
    agreement.update(["send", "the", "report", "now"])
    assert agreement.update(["send", "the", "report", "now", "please"], sure=False) == (
        [],
        ["send", "the", "report", "now", "please"],
    )
    assert agreement.committed == []
    newly, _ = agreement.update(["send", "the", "report", "now", "please", "Anna."])
    assert newly == ["send", "the", "report", "now", "please"]
