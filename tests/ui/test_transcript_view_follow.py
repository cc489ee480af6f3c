"""The transcript view follows new text again after it is cleared, even when the user had
scrolled up before: an empty view has no scroll bar to scroll back down with."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from voxdesk.app.listening.transcript import Utterance
from voxdesk.ui.transcript_view import TranscriptView


def show_lines(view: TranscriptView, numbers: range) -> None:
    for number in numbers:
        view.show_utterance(Utterance(number, committed=f"Line number {number} of the session.", final=True))


def test_clearing_while_scrolled_up_follows_new_text_again(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    show_lines(view, range(1, 60))
    bar = view.verticalScrollBar()
    bar.setValue(0)  # reading the start
    assert not view.follow
    view.clear_transcript()
    show_lines(view, range(60, 120))
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
