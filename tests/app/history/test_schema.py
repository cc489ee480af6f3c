"""The history schema: splitting migrations into statements, and upgrading files on open."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from voxdesk.app.history.schema import MIGRATIONS, SCHEMA_VERSION, split_statements
from voxdesk.app.history.store import HistoryError, HistoryStore


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_statements_keep_trigger_bodies_whole() -> None:
    statements = split_statements(MIGRATIONS[1])
    triggers = [s for s in statements if s.startswith("CREATE TRIGGER")]
    assert len(triggers) == 3 and all(s.endswith("END;") for s in triggers)
    assert statements[-1] == "INSERT INTO utterances_fts (utterances_fts) VALUES ('rebuild');"


def test_an_incomplete_statement_is_refused() -> None:
    with pytest.raises(ValueError, match="incomplete"):
        split_statements("CREATE TABLE t (x);\nCREATE TABLE u (y)")


def test_migrations_upgrade_an_empty_v0_file(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    raw(path).execute("PRAGMA user_version").fetchone()  # an empty SQLite file at version 0
    assert path.exists()
    with HistoryStore.open(path) as store:
        session = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(session, "hello there", 0, 1)
        assert len(store.search("hello")) == 1
    assert raw(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_migrations_upgrade_a_v1_file_and_index_its_old_rows(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    connection = raw(path)
    for statement in split_statements(MIGRATIONS[0]):
        connection.execute(statement)
    connection.execute("PRAGMA user_version = 1")
    connection.execute(
        "INSERT INTO sessions (id, started_at, kind, engine, model, source) VALUES (7, ?, 'file', 'e', 'm', 's')",
        (time.time(),),
    )
    connection.execute(
        "INSERT INTO utterances (session_id, text, start_s, end_s, created_at)"
        " VALUES (7, 'recorded before search', 0, 1, ?)",
        (time.time(),),
    )
    connection.close()

    with HistoryStore.open(path) as store:
        assert [h.session.id for h in store.search("before")] == [7]
        assert store.sessions()[0].utterance_count == 1
    assert raw(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    raw(path).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(HistoryError, match="newer"):
        HistoryStore.open(path)
