"""The transcript view edits its document in place: a partial rewrites its own paragraph and
nothing before it, and what it shows is what the HTML transcript showed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtGui import QBrush, QColor, QPalette, QTextDocument, QTextFormat, QTextFrame, QTextLength
from PySide6.QtWidgets import QTextBrowser
from pytestqt.qtbot import QtBot

from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.kinds import Action
from voxdesk.app.actions.matching import match_utterance
from voxdesk.app.listening.transcript import Utterance
from voxdesk.ui.transcript_view import EMPTY_HINT, TranscriptView

EARLIER = [f"Sentence number {number} of the session." for number in range(1, 41)]


def make_view(qtbot: QtBot) -> TranscriptView:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    return view


def timer_record(status: ActionStatus) -> ActionRecord:
    return ActionRecord(
        7, "timer", Action.TIMER, {"n": 5}, "Set a timer", "Set a timer for 5 minutes.", 2, "phrase", True, status, 0.0
    )


def test_a_partial_rewrites_only_its_own_paragraph(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    document = view.document()
    for number, text in enumerate(EARLIER, start=1):
        view.show_utterance(Utterance(number, committed=text, final=True))
    block = document.begin()
    for number in range(len(EARLIER)):
        block.setUserState(number)  # a mark that only these very blocks carry
        block = block.next()
    new = len(EARLIER) + 1

    view.show_utterance(Utterance(new, provisional="Open"))
    assert document.blockCount() == len(EARLIER) + 1
    last = document.lastBlock()
    changes: list[int] = []
    document.contentsChange.connect(lambda position, removed, added: changes.append(position))
    for partial in (
        Utterance(new, provisional="Open the brow"),
        Utterance(new, committed="Open the", provisional="browser"),
        Utterance(new, committed="Open the browser.", final=True),
    ):
        view.show_utterance(partial)
        assert document.blockCount() == len(EARLIER) + 1
        assert document.lastBlock() == last
    marks = [document.findBlockByNumber(number).userState() for number in range(len(EARLIER))]
    assert marks == list(range(len(EARLIER)))  # the same blocks: nothing before was rebuilt
    assert changes and min(changes) >= last.position()  # every change was in the new paragraph
    assert view.toPlainText() == "\n".join([*EARLIER, "Open the browser."])
    assert view.committed_text() == "\n".join([*EARLIER, "Open the browser."])
    assert document.availableUndoSteps() == 0  # partials pile up nowhere


def test_partials_and_finals_show_as_the_html_transcript_did(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    for utterance in (
        Utterance(1, provisional="Open"),
        Utterance(1, committed="Open the", provisional="brow ser"),
        Utterance(1, committed="  Open  the\tbrowser. ", final=True),
        Utterance(2, committed="Set a timer", provisional="for"),
        Utterance(3),  # opened, no words yet
        Utterance(2, committed="Set a timer for 5 minutes.", final=True),
    ):
        view.show_utterance(utterance)
    view.show_action(timer_record(ActionStatus.WAITING))  # under utterance 2, after utterance 3 opened
    view.show_utterance(Utterance(3, committed="Search", provisional="for"))
    view.show_action(timer_record(ActionStatus.DONE))
    view.show_utterance(Utterance(3))  # retracted: the engine transcribes it again
    view.show_utterance(Utterance(4, committed="gone soon"))
    view.show_utterance(Utterance(3, provisional="Search for"))
    view.show_utterance(Utterance(4))

    grey = view.provisional_colour().name()
    shaded = view.palette().color(QPalette.ColorRole.AlternateBase).name()
    expected = QTextBrowser()
    expected.setHtml(
        "<p>Open the browser.</p>"
        "<p>Set a timer for 5 minutes.</p>"
        f'<table cellpadding="4" bgcolor="{shaded}" style="margin-left:18px"><tr><td>'
        '&#9656; <b>timer (n: 5)</b> — <span style="color:#1e7b34">done</span></td></tr></table>'
        f'<p><i style="color:{grey}">Search for</i></p>'
    )
    assert layout_of(view.document()) == layout_of(expected.document())
    assert view.toPlainText() == "Open the browser.\nSet a timer for 5 minutes.\n▸ timer (n: 5) — done\n\nSearch for"
    assert view.provisional_text() == "Search for"


def test_a_new_palette_recolours_what_is_shown(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    view.show_utterance(Utterance(1, committed="Open the", provisional="browser"))
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#f0f0f0"))
    view.setPalette(dark)
    fragments = layout_of(view.document())[1][-1]
    assert fragments[-1][0] == "browser"
    assert fragments[-1][1][QTextFormat.Property.ForegroundBrush] == ("brush", view.provisional_colour().name())


def layout_of(document: QTextDocument) -> list[Any]:
    """Frames, blocks, text fragments and every format of a document, comparable with ``==``."""
    found: list[Any] = []

    def walk(frame: QTextFrame) -> None:
        found.append(("frame", type(frame).__name__, formats(frame.frameFormat())))
        children = frame.begin()
        while not children.atEnd():
            if (child := children.currentFrame()) is not None:
                walk(child)
            else:
                block = children.currentBlock()
                fragments = []
                pieces = block.begin()
                while not pieces.atEnd():
                    fragments.append((pieces.fragment().text(), formats(pieces.fragment().charFormat())))
                    pieces += 1
                char_format = formats(block.charFormat())
                char_format.pop(QTextFormat.Property.ObjectIndex, None)  # which table; numbered as made
                found.append(("block", formats(block.blockFormat()), char_format, fragments))
            children += 1

    walk(document.rootFrame())
    return found


def formats(text_format: QTextFormat) -> dict[int, Any]:
    return {key: comparable(value) for key, value in text_format.properties().items()}


def comparable(value: Any) -> Any:
    if isinstance(value, QBrush):
        return ("brush", value.color().name())
    if isinstance(value, QTextLength):
        return ("length", value.type(), value.rawValue())
    if isinstance(value, list):
        return [comparable(item) for item in value]
    return value


def test_the_empty_transcript_says_how_to_start_and_each_example_is_a_command(qtbot: QtBot, tmp_path: Path) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    assert view.toPlainText() == "" and view.placeholderText() == EMPTY_HINT
    examples = re.findall(r"“([^”]+)”", EMPTY_HINT)
    commands = CommandSource(user_path=tmp_path / "commands.toml").commands()
    assert len(examples) == 4
    assert [example for example in examples if match_utterance(example, commands) is None] == []
