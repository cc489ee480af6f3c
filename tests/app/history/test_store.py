"""The history store: recording, listing, search, deletion and privacy."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from voxdesk.app.history.schema import SCHEMA_VERSION
from voxdesk.app.history.store import NOT_RECORDED, HistoryError, HistoryStore, default_path


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    opened = HistoryStore.open(tmp_path / "history.sqlite3")
    yield opened
    opened.close()


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_default_path_follows_the_data_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_DATA_DIR", str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "history.sqlite3"
    with HistoryStore.open() as opened:
        assert opened.path == default_path()
    assert default_path().exists()


def test_file_is_wal_with_foreign_keys_and_the_latest_schema(store: HistoryStore, tmp_path: Path) -> None:
    connection = raw(tmp_path / "history.sqlite3")
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert store._db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000


def test_sessions_and_utterances_round_trip(store: HistoryStore) -> None:
    first = store.start_session("file", "builtin", "whisper-tiny.en", "/tmp/a.wav")
    second = store.start_session("live", "remote", "voxdesk-builtin", "USB microphone")
    u1 = store.add_utterance(first, "Open the browser.", 0.5, 1.7, 0.31, 0.62)
    u2 = store.add_utterance(first, "What time is it?", 3.0, 4.2, action=None)
    store.set_action(u1, "open browser")
    store.add_utterance(second, "Take a screenshot.", 0.4, 1.5)
    store.end_session(first)

    summaries = store.sessions()
    assert [s.id for s in summaries] == [second, first]  # newest first
    assert [s.utterance_count for s in summaries] == [1, 2]
    assert summaries[1].preview == "Open the browser. What time is it?"
    assert summaries[1].ended_at is not None and summaries[0].ended_at is None
    assert summaries[1].kind == "file" and summaries[1].source == "/tmp/a.wav"
    assert store.sessions(limit=1, offset=1)[0].id == first

    session = store.session(first)
    assert (session.engine, session.model) == ("builtin", "whisper-tiny.en")
    rows = store.utterances(first)
    assert [(u.id, u.text, u.start_s, u.end_s) for u in rows] == [
        (u1, "Open the browser.", 0.5, 1.7),
        (u2, "What time is it?", 3.0, 4.2),
    ]
    assert rows[0].first_partial_latency_s == 0.31 and rows[0].final_latency_s == 0.62
    assert rows[0].action == "open browser" and rows[1].action is None
    assert rows[0].created_at.tzinfo is not None


def test_long_preview_is_cut(store: HistoryStore) -> None:
    session = store.start_session("live", "builtin", "m", "mic")
    store.add_utterance(session, "word " * 60, 0, 1)
    preview = store.sessions()[0].preview
    assert len(preview) <= 80 and preview.endswith("…")


def test_unknown_sessions_raise(store: HistoryStore) -> None:
    with pytest.raises(HistoryError):
        store.session(42)
    with pytest.raises(HistoryError):
        store.delete_session(42)
    with pytest.raises(HistoryError):
        store.add_utterance(42, "orphan", 0, 1)


def test_search_finds_words_across_sessions_newest_first(store: HistoryStore) -> None:
    old = store.start_session("file", "builtin", "m", "a.wav")
    store.add_utterance(old, "The weather today is sunny.", 0, 2)
    store.add_utterance(old, "Play some music.", 3, 4)
    new = store.start_session("live", "builtin", "m", "mic")
    store.add_utterance(new, "Search for weather in Paris.", 0, 2)

    hits = store.search("weather")
    assert [(h.session.id, h.utterance.text) for h in hits] == [
        (new, "Search for weather in Paris."),
        (old, "The weather today is sunny."),
    ]
    assert [h.utterance.text for h in store.search("WEATHER paris")] == ["Search for weather in Paris."]
    assert [h.utterance.text for h in store.search("mus")] == ["Play some music."]  # prefixes match
    assert store.search("snow") == []
    assert len(store.search("weather", limit=1)) == 1


def test_deleted_sessions_are_gone_from_search(store: HistoryStore) -> None:
    keep = store.start_session("file", "builtin", "m", "a.wav")
    store.add_utterance(keep, "the zebra crossing", 0, 1)
    gone = store.start_session("file", "builtin", "m", "b.wav")
    store.add_utterance(gone, "a zebra in the zoo", 0, 1)
    store.add_utterance(gone, "the zoo keeper", 1, 2)
    store.delete_session(gone)

    assert [h.session.id for h in store.search("zebra")] == [keep]
    assert store.search("zoo") == []
    assert store.utterances(gone) == []
    assert [s.id for s in store.sessions()] == [keep]
    check = store._db.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('integrity-check')")
    assert check.fetchall() == []


@pytest.mark.parametrize(
    "words",
    ['"', '""', "'", "*", "zebra*", "NEAR(zebra crossing)", "NEAR", "-zebra", "zebra -crossing", "(", ")", "((",
     "zebra OR", "AND", "NOT zebra", "text:zebra", "^zebra", "{text}: zebra", "+", "zebra:", "", "   ", "\x00", "é"],
)  # fmt: skip
def test_fts_syntax_in_user_input_does_not_raise(store: HistoryStore, words: str) -> None:
    session = store.start_session("file", "builtin", "m", "a.wav")
    store.add_utterance(session, "the zebra crossing near the zoo", 0, 1)
    hits = store.search(words)
    assert all("zebra" in h.utterance.text for h in hits)


def test_fts_syntax_characters_are_searched_as_plain_words(store: HistoryStore) -> None:
    session = store.start_session("file", "builtin", "m", "a.wav")
    store.add_utterance(session, "the zebra crossing near the zoo", 0, 1)
    assert len(store.search('"zebra" (crossing)')) == 1
    assert len(store.search("NEAR zoo")) == 1  # NEAR is a word here, not an operator
    assert store.search("zebra -giraffe") == []  # "-" does not mean NOT


def test_a_file_that_is_not_a_database_is_kept_aside_and_a_new_one_started(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(b"this is not a database at all" * 100)
    with HistoryStore.open(path) as store:
        [kept] = tmp_path.glob("history.sqlite3.damaged-*")
        assert kept.read_bytes() == b"this is not a database at all" * 100
        assert store.counts() == (0, 0) and str(path) in store.notice and kept.name in store.notice


def test_database_failures_are_history_errors(store: HistoryStore, tmp_path: Path) -> None:
    session = store.start_session("live", "builtin", "m", "mic")
    store._db.execute("PRAGMA busy_timeout = 50")
    blocker = raw(tmp_path / "history.sqlite3")
    blocker.execute("BEGIN IMMEDIATE")  # another writer that does not let go
    try:
        with pytest.raises(HistoryError, match="database is locked"):
            store.add_utterance(session, "waiting in vain", 0, 1)
        assert store.counts() == (1, 0)  # reading still works
    finally:
        blocker.execute("ROLLBACK")
    store.add_utterance(session, "through at last", 0, 1)
    assert store.counts() == (1, 1)


def test_keep_false_writes_nothing_and_creates_no_file(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore.open(path, keep=False) as store:
        session = store.start_session("live", "builtin", "m", "mic")
        assert session == NOT_RECORDED
        assert store.add_utterance(session, "secret words", 0, 1) == NOT_RECORDED
        store.end_session(session)
        assert store.sessions() == [] and store.search("secret") == []
    assert not path.exists()


def test_keep_false_leaves_an_existing_file_unchanged_but_readable(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore.open(path) as store:
        store.add_utterance(store.start_session("live", "builtin", "m", "mic"), "kept from before", 0, 1)
    with HistoryStore.open(path, keep=False) as store:
        session = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(session, "private thought", 0, 1)
        store.add_utterance(1, "private thought", 0, 1)  # even into an existing session
        assert [s.utterance_count for s in store.sessions()] == [1]
    connection = raw(path)
    assert connection.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
    assert connection.execute("SELECT text FROM utterances").fetchall() == [("kept from before",)]


def test_retention_purges_old_sessions_on_open_and_on_start(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    day = 86_400
    with HistoryStore.open(path) as store:
        old = store.start_session("file", "builtin", "m", "old.wav")
        store.add_utterance(old, "ancient history", 0, 1)
        recent = store.start_session("file", "builtin", "m", "new.wav")
        store.add_utterance(recent, "fresh news", 0, 1)
    raw(path).execute("UPDATE sessions SET started_at = started_at - ? WHERE id = ?", (40 * day, old))

    with HistoryStore.open(path, retention_days=30) as store:  # purged on open
        assert [s.id for s in store.sessions()] == [recent]
        assert store.search("ancient") == []
        assert store.purge_expired(now=time.time() + 31 * day) == 1  # "recent" ages out later
        assert store.sessions() == []

    with HistoryStore.open(path) as store:
        aging = store.start_session("file", "builtin", "m", "x.wav")
    raw(path).execute("UPDATE sessions SET started_at = started_at - ? WHERE id = ?", (8 * day, aging))
    with HistoryStore.open(path, retention_days=0) as store:  # 0 keeps everything
        assert [s.id for s in store.sessions()] == [aging]
    with HistoryStore.open(path, retention_days=30) as store:
        store.retention_days = 7  # settings changed while open: the next session start purges
        store.start_session("live", "builtin", "m", "mic")
        assert aging not in [s.id for s in store.sessions()]


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_delete_all_removes_the_words_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    secret = "xylophonequartz"
    with HistoryStore.open(path) as store:
        for n in range(3):
            session = store.start_session("live", "builtin", "m", "mic")
            for i in range(50):
                store.add_utterance(session, f"{secret} number {n} {i} and some more padding words", i, i + 1)
        assert secret.encode() in _file_bytes(path)
        store.delete_all()
        assert store.sessions() == [] and store.search(secret) == []
        assert store.counts() == (0, 0)
        assert secret.encode() not in _file_bytes(path)
        # Still usable afterwards.
        store.add_utterance(store.start_session("live", "builtin", "m", "mic"), "a new start", 0, 1)
        assert len(store.search("new")) == 1


def test_delete_session_leaves_no_words_in_the_database_file(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    secret = "zanzibarpelican"
    with HistoryStore.open(path) as store:
        keep = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(keep, "ordinary words", 0, 1)
        gone = store.start_session("live", "builtin", "m", "mic")
        for i in range(20):
            store.add_utterance(gone, f"{secret} {i}", i, i + 1)
        store.delete_session(gone)
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert secret.encode() not in _file_bytes(path)
        assert b"ordinary words" in _file_bytes(path)
