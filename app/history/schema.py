"""The history file's schema: its tables, the search index and the migrations that build them.

The schema is versioned with ``PRAGMA user_version``: a file at version ``n`` has had the first
``n`` of :data:`MIGRATIONS` applied. Migrations are only ever appended; an existing one never
changes, since files written by earlier releases were built by it.
"""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "schema_version", "split_statements"]

MIGRATIONS: tuple[str, ...] = (
    # 1: sessions and their utterances.
    """
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- ids are never reused, even after deletion
        started_at REAL NOT NULL,             -- unix seconds, UTC
        ended_at REAL,                        -- NULL while running, or after a crash
        kind TEXT NOT NULL CHECK (kind IN ('live', 'file')),
        engine TEXT NOT NULL,
        model TEXT NOT NULL,
        source TEXT NOT NULL                  -- input device name or file path
    );
    CREATE INDEX sessions_started_at ON sessions (started_at);
    CREATE TABLE utterances (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        start_s REAL NOT NULL,                -- audio time within the session
        end_s REAL NOT NULL,
        first_partial_latency_s REAL,
        final_latency_s REAL,
        action TEXT,
        created_at REAL NOT NULL              -- unix seconds, UTC
    );
    CREATE INDEX utterances_session ON utterances (session_id, start_s);
    """,
    # 2: full-text search over utterance text (external content, kept in sync by triggers; the
    # delete trigger also fires for rows removed by ON DELETE CASCADE).
    """
    CREATE VIRTUAL TABLE utterances_fts USING fts5(
        text, content='utterances', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER utterances_ai AFTER INSERT ON utterances BEGIN
        INSERT INTO utterances_fts (rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER utterances_ad AFTER DELETE ON utterances BEGIN
        INSERT INTO utterances_fts (utterances_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER utterances_au AFTER UPDATE OF text ON utterances BEGIN
        INSERT INTO utterances_fts (utterances_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO utterances_fts (rowid, text) VALUES (new.id, new.text);
    END;
    INSERT INTO utterances_fts (utterances_fts) VALUES ('rebuild');
    """,
    # 3: the language each utterance was decoded in (NULL where the engine did not say).
    """
    ALTER TABLE utterances ADD COLUMN language TEXT;
    """,
)
"""Schema migrations in order; migration ``i`` takes the file from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The version of a file this release has created or upgraded."""


def schema_version(connection: sqlite3.Connection) -> int:
    """The version of the file ``connection`` has open (0 for a new, empty file)."""
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection, version: int) -> None:
    """Apply the migrations after ``version``, recording each new version as it is reached.

    The caller holds the write transaction, so a failed upgrade leaves the file as it was.
    """
    for number in range(version, SCHEMA_VERSION):
        for statement in split_statements(MIGRATIONS[number]):
            connection.execute(statement)
        connection.execute(f"PRAGMA user_version = {number + 1}")


def split_statements(script: str) -> list[str]:
    """The SQL statements of ``script`` (trigger bodies kept whole), comments and all."""
    statements, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement in a migration: {pending.strip()[:60]!r}")
    return statements
