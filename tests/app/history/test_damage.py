"""A damaged history file, damaged for real: random bytes over it, cut short, one page overwritten.

Opening it keeps the damaged bytes as ``history.sqlite3.damaged-<time>``, says so in one line
naming the file, and gives a working history holding every row that still read, each exactly
as it was saved.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from voxdesk.app.history.store import HistoryStore

SESSIONS, PER_SESSION = 20, 40


def _saved_history(path: Path) -> dict[int, tuple[int, str]]:
    """A history of 20 ended sessions of 40 utterances; each utterance id with its session and text."""
    saved: dict[int, tuple[int, str]] = {}
    with HistoryStore.open(path) as store:
        for number in range(SESSIONS):
            session = store.start_session("live", "builtin", "whisper-tiny.en", f"microphone {number}")
            for line in range(PER_SESSION):
                text = f"session {number} line {line} says word{number}x{line}"
                saved[store.add_utterance(session, text, line, line + 0.8)] = (session, text)
            store.end_session(session)
    assert not Path(f"{path}-wal").exists()  # all of it is in the file itself now
    return saved


def _page_offset(path: Path, table: str, which: float) -> int:
    """Where one of ``table``'s leaf pages starts in the file: ``which`` 0.0 is its first, 0.5 a middle one."""
    with sqlite3.connect(path) as connection:
        pages = [
            row[0]
            for row in connection.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno", (table,)
            )
        ]
        page_size = int(connection.execute("PRAGMA page_size").fetchone()[0])
    connection.close()
    return (int(pages[int(which * (len(pages) - 1))]) - 1) * page_size  # pages count from 1


def _random_bytes(path: Path, raw: bytes) -> bytes:
    return random.Random(1).randbytes(len(raw))


def _truncated(path: Path, raw: bytes) -> bytes:
    return raw[: len(raw) * 2 // 3]


def _overwrite(table: str) -> Callable[[Path, bytes], bytes]:
    def damage(path: Path, raw: bytes) -> bytes:
        offset = _page_offset(path, table, 0.5)
        return raw[:offset] + random.Random(2).randbytes(4096) + raw[offset + 4096 :]

    return damage


@pytest.mark.parametrize(
    ("damage", "least", "most"),
    [
        (_random_bytes, 0, 0),
        (_truncated, 1, SESSIONS * PER_SESSION - 1),
        (_overwrite("utterances"), SESSIONS * PER_SESSION - 100, SESSIONS * PER_SESSION - 1),
        (_overwrite("sessions"), SESSIONS * PER_SESSION, SESSIONS * PER_SESSION),
    ],
    ids=["random-bytes", "truncated", "utterances-page-overwritten", "sessions-page-overwritten"],
)
def test_a_damaged_history_is_kept_and_what_still_reads_recovered(
    tmp_path: Path, damage: Callable[[Path, bytes], bytes], least: int, most: int
) -> None:
    path = tmp_path / "history.sqlite3"
    saved = _saved_history(path)
    damaged = damage(path, path.read_bytes())
    path.write_bytes(damaged)

    with HistoryStore.open(path) as store:
        [kept] = tmp_path.glob("history.sqlite3.damaged-*")
        assert kept.read_bytes() == damaged  # kept byte for byte, for the user or a better tool
        assert store.notice.startswith(f"the history {path} was damaged (")
        assert kept.name in store.notice and "\n" not in store.notice
        recovered = {u.id: u for s in store.sessions(limit=1000) for u in store.utterances(s.id)}
        assert least <= len(recovered) <= most, store.notice
        for row, utterance in recovered.items():
            assert (utterance.session_id, utterance.text) == saved[row]  # nothing read back wrong
        if recovered:
            assert f"{len(recovered)} utterances in {len(store.sessions(limit=1000))} sessions" in store.notice
            last = max(recovered)
            assert [h.utterance.id for h in store.search(recovered[last].text)] == [last]  # searchable again
        else:
            assert "nothing in it could be read, so a new history was started" in store.notice
        session = store.start_session("live", "builtin", "whisper-tiny.en", "microphone")
        store.add_utterance(session, "life goes on after the repair", 0, 1)

    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert connection.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('integrity-check')").fetchall() == []
    connection.close()
    with HistoryStore.open(path) as again:  # repaired once: the next start is a plain one
        assert again.notice == "" and [h.utterance.text for h in again.search("repair")] == [
            "life goes on after the repair"
        ]
    assert len(list(tmp_path.glob("history.sqlite3.damaged-*"))) == 1


def test_utterances_whose_session_was_lost_keep_their_words_under_a_stand_in(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    saved = _saved_history(path)
    path.write_bytes(_overwrite("sessions")(path, path.read_bytes()))
    with HistoryStore.open(path) as store:
        sessions = store.sessions(limit=1000)
        assert {s.id for s in sessions} == {session for session, _ in saved.values()}
        assert {s.source for s in sessions} == {"unknown (recovered from a damaged history)"}
        assert all(s.utterance_count == PER_SESSION for s in sessions)
