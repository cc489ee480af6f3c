"""The transcript history: sessions and their final utterances in one SQLite file.

Every utterance is committed the moment it is final, so a crash loses at most the utterance in
progress. The file is in WAL mode: readers (the history panel, ``voxdesk history``) never wait
for the writer (a live session) and the writer never waits for readers. Each thread or process
opens its own :class:`HistoryStore`; one store must not be shared between threads.

The schema is versioned with ``PRAGMA user_version`` and upgraded on open by the ordered
:data:`MIGRATIONS`.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, ParamSpec, TypeVar

from voxdesk.app import settings
from voxdesk.engine.errors import VoxdeskError

__all__ = [
    "MIGRATIONS",
    "NOT_RECORDED",
    "HistoryError",
    "HistoryStore",
    "SearchHit",
    "Session",
    "SessionKind",
    "SessionSummary",
    "Utterance",
    "default_path",
    "fts_query",
]

SessionKind = Literal["live", "file"]
NOT_RECORDED = 0
"""The session id :meth:`HistoryStore.start_session` returns when history is off; never stored."""

BUSY_TIMEOUT_MS = 5000
PREVIEW_CHARS = 80

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
)
"""Schema migrations in order; migration ``i`` takes the file from version ``i`` to ``i + 1``."""


class HistoryError(VoxdeskError):
    """A history request that failed: an unknown session, a file that is not ours, a database error."""


@dataclass(frozen=True)
class Session:
    """One recording session: a live listening session or one transcribed file."""

    id: int
    started_at: datetime  # UTC
    ended_at: datetime | None  # None while running, or if the app stopped without ending it
    kind: str
    engine: str
    model: str
    source: str


@dataclass(frozen=True)
class SessionSummary(Session):
    """A session with how many utterances it holds and the start of its text."""

    utterance_count: int
    preview: str


@dataclass(frozen=True)
class Utterance:
    """One final utterance; ``start_s``/``end_s`` are audio times within its session."""

    id: int
    session_id: int
    text: str
    start_s: float
    end_s: float
    first_partial_latency_s: float | None
    final_latency_s: float | None
    action: str | None
    created_at: datetime  # UTC


@dataclass(frozen=True)
class SearchHit:
    """An utterance that matched a search, and the session it belongs to."""

    utterance: Utterance
    session: Session


def default_path() -> Path:
    """``history.sqlite3`` in the data directory (``VOXDESK_DATA_DIR`` overrides)."""
    return settings.data_dir() / "history.sqlite3"


def fts_query(words: str) -> str:
    """An FTS5 query matching rows that contain every word of ``words`` (as word prefixes).

    Only runs of letters and digits survive, each quoted, so no user input can be read as FTS5
    syntax (quotes, ``*``, ``NEAR``, ``AND``/``OR``/``NOT``, ``-``, ``:``, parentheses).
    Returns ``""`` when nothing searchable is left.
    """
    return " ".join(f'"{term}"*' for term in re.findall(r"\w+", words))


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _translated(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Report SQLite failures (disk full, a lock held too long, a damaged file) as :class:`HistoryError`."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as error:
            raise HistoryError(f"the history database failed: {error}") from error

    return wrapper


def _utc(unix: float) -> datetime:
    return datetime.fromtimestamp(unix, UTC)


def _optional_utc(unix: float | None) -> datetime | None:
    return None if unix is None else _utc(unix)


_SESSION_COLUMNS = "s.id, s.started_at, s.ended_at, s.kind, s.engine, s.model, s.source"
_UTTERANCE_COLUMNS = (
    "u.id, u.session_id, u.text, u.start_s, u.end_s, u.first_partial_latency_s, u.final_latency_s, u.action,"
    " u.created_at"
)


def _session(row: Sequence[Any]) -> Session:
    id_, started, ended, kind, engine, model, source = row[:7]
    return Session(int(id_), _utc(started), _optional_utc(ended), kind, engine, model, source)


def _utterance(row: Sequence[Any]) -> Utterance:
    id_, session_id, text, start_s, end_s, first, final, action, created = row[:9]
    return Utterance(int(id_), int(session_id), text, start_s, end_s, first, final, action, _utc(created))


class HistoryStore:
    """One connection to the history file. Open with :meth:`open`; close when done."""

    def __init__(self, connection: sqlite3.Connection, path: Path | None, keep: bool, retention_days: int) -> None:
        self._db = connection
        self.path = path
        """The file, or ``None`` when history is off and there was no file to read."""
        self.keep = keep
        self.retention_days = retention_days

    @classmethod
    def open(cls, path: Path | None = None, *, keep: bool = True, retention_days: int = 0) -> HistoryStore:
        """Open (creating and upgrading as needed) the history file at ``path`` (default: :func:`default_path`).

        With ``keep=False`` the store records nothing: sessions and utterances are not written,
        and no file is created; an existing file can still be read and cleared. With
        ``retention_days > 0`` sessions that started longer ago are deleted now and whenever a
        session starts.
        """
        path = path or default_path()
        in_memory = not keep and not path.exists()
        if not in_memory:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            store = cls(
                _connect(":memory:" if in_memory else str(path)), None if in_memory else path, keep, retention_days
            )
        except sqlite3.DatabaseError as error:
            raise HistoryError(f"cannot open the history at {path}: {error}") from error
        try:
            store._migrate()
            store.purge_expired()
        except (sqlite3.DatabaseError, HistoryError) as error:
            store.close()
            raise HistoryError(f"cannot open the history at {path}: {error}") from error
        return store

    def close(self) -> None:
        """Close the connection; the store cannot be used afterwards."""
        self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    # Writing ---------------------------------------------------------------------------------

    @_translated
    def start_session(self, kind: SessionKind, engine: str, model: str, source: str) -> int:
        """Record a new session and return its id (:data:`NOT_RECORDED` when history is off)."""
        if not self.keep:
            return NOT_RECORDED
        self.purge_expired()
        cursor = self._db.execute(
            "INSERT INTO sessions (started_at, kind, engine, model, source) VALUES (?, ?, ?, ?, ?)",
            (time.time(), kind, engine, model, source),
        )
        return int(cursor.lastrowid or 0)

    @_translated
    def add_utterance(
        self,
        session_id: int,
        text: str,
        start_s: float,
        end_s: float,
        first_partial_latency_s: float | None = None,
        final_latency_s: float | None = None,
        action: str | None = None,
    ) -> int:
        """Commit one final utterance now; returns its id (:data:`NOT_RECORDED` when not recorded).

        Nothing is written when history is off or ``session_id`` is :data:`NOT_RECORDED`.
        """
        if not self.keep or session_id == NOT_RECORDED:
            return NOT_RECORDED
        try:
            cursor = self._db.execute(
                "INSERT INTO utterances (session_id, text, start_s, end_s, first_partial_latency_s, final_latency_s,"
                " action, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, text, start_s, end_s, first_partial_latency_s, final_latency_s, action, time.time()),
            )
        except sqlite3.IntegrityError as error:
            raise HistoryError(f"no session {session_id} in the history") from error
        return int(cursor.lastrowid or 0)

    @_translated
    def set_action(self, utterance_id: int, action: str | None) -> None:
        """Record what an utterance did (e.g. ``"open browser"``), once the action is known."""
        if self.keep and utterance_id != NOT_RECORDED:
            self._db.execute("UPDATE utterances SET action = ? WHERE id = ?", (action, utterance_id))

    @_translated
    def end_session(self, session_id: int) -> None:
        """Mark a session as ended now."""
        if self.keep and session_id != NOT_RECORDED:
            self._db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (time.time(), session_id))

    # Reading ---------------------------------------------------------------------------------

    @_translated
    def sessions(self, limit: int = 100, offset: int = 0) -> list[SessionSummary]:
        """Sessions newest first, with their utterance counts and a text preview."""
        rows = self._db.execute(
            f"SELECT {_SESSION_COLUMNS},"
            " (SELECT count(*) FROM utterances u WHERE u.session_id = s.id),"
            " (SELECT group_concat(text, ' ') FROM"
            "   (SELECT text FROM utterances u WHERE u.session_id = s.id ORDER BY start_s, id LIMIT 5))"
            " FROM sessions s ORDER BY s.started_at DESC, s.id DESC LIMIT ? OFFSET ?",
            (limit, offset),
        ).fetchall()
        return [self._summary(row) for row in rows]

    @staticmethod
    def _summary(row: Sequence[Any]) -> SessionSummary:
        base = _session(row)
        preview = str(row[8] or "")
        if len(preview) > PREVIEW_CHARS:
            preview = preview[: PREVIEW_CHARS - 1].rstrip() + "…"
        return SessionSummary(**base.__dict__, utterance_count=int(row[7]), preview=preview)

    @_translated
    def session(self, session_id: int) -> Session:
        """One session; raises :class:`HistoryError` if there is none with that id."""
        row = self._db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no session {session_id} in the history")
        return _session(row)

    @_translated
    def utterances(self, session_id: int) -> list[Utterance]:
        """A session's utterances in spoken order."""
        rows = self._db.execute(
            f"SELECT {_UTTERANCE_COLUMNS} FROM utterances u WHERE u.session_id = ? ORDER BY u.start_s, u.id",
            (session_id,),
        ).fetchall()
        return [_utterance(row) for row in rows]

    @_translated
    def search(self, words: str, limit: int = 100) -> list[SearchHit]:
        """Utterances containing every word of ``words`` (prefixes match), newest first.

        Any text is accepted: FTS5 syntax in ``words`` is searched for as plain words.
        """
        query = fts_query(words)
        if not query:
            return []
        # Ids only grow (AUTOINCREMENT), so the highest is the newest, and FTS5 can walk its
        # index in rowid order and stop at the limit instead of sorting every match.
        rows = self._db.execute(
            f"SELECT {_UTTERANCE_COLUMNS}, {_SESSION_COLUMNS} FROM utterances_fts"
            " JOIN utterances u ON u.id = utterances_fts.rowid JOIN sessions s ON s.id = u.session_id"
            " WHERE utterances_fts MATCH ? ORDER BY utterances_fts.rowid DESC LIMIT ?",
            (query, limit),
        ).fetchall()
        return [SearchHit(_utterance(row), _session(row[9:])) for row in rows]

    @_translated
    def counts(self) -> tuple[int, int]:
        """How many sessions and utterances the history holds."""
        sessions, utterances = self._db.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM utterances)"
        ).fetchone()
        return int(sessions), int(utterances)

    @_translated
    def data_version(self) -> int:
        """A number that changes whenever another connection commits: cheap to poll for news."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    # Deleting --------------------------------------------------------------------------------

    @_translated
    def delete_session(self, session_id: int) -> None:
        """Delete a session and its utterances (also from search); raises :class:`HistoryError` if unknown."""
        with self._transaction():
            deleted = self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount
            if not deleted:
                raise HistoryError(f"no session {session_id} in the history")
            # Merge the search index so the deleted words leave its pages, not just its results.
            self._db.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('optimize')")

    @_translated
    def delete_all(self) -> None:
        """Delete every session, then rewrite the file so no deleted words remain in it."""
        with self._transaction():
            self._db.execute("DELETE FROM sessions")
            self._db.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('delete-all')")
        self._db.execute("VACUUM")
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @_translated
    def purge_expired(self, now: float | None = None) -> int:
        """Delete sessions that started more than ``retention_days`` before ``now``; returns how many."""
        if self.retention_days <= 0:
            return 0
        cutoff = (time.time() if now is None else now) - self.retention_days * 86_400
        with self._transaction():
            deleted = self._db.execute("DELETE FROM sessions WHERE started_at < ?", (cutoff,)).rowcount
            if deleted:
                self._db.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('optimize')")
        return int(deleted)

    # Internals -------------------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _migrate(self) -> None:
        if self._schema_version() == len(MIGRATIONS):
            return  # the common case takes no write lock
        with self._transaction():
            version = self._schema_version()  # again: another process may have upgraded meanwhile
            if version > len(MIGRATIONS):
                raise HistoryError(
                    f"the history file is from a newer Voxdesk (schema {version}, this one knows {len(MIGRATIONS)})"
                )
            for number in range(version, len(MIGRATIONS)):
                for statement in _statements(MIGRATIONS[number]):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {number + 1}")

    def _schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])


def _statements(script: str) -> list[str]:
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


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on an exception."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


def _connect(database: str) -> sqlite3.Connection:
    # Autocommit: every statement outside an explicit BEGIN is its own committed transaction.
    connection = sqlite3.connect(database, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA journal_mode = WAL")
    # In WAL mode NORMAL does not sync the WAL at each commit, only at checkpoints: a commit
    # that returned survives the process being killed (its pages are in the OS's cache), and
    # only an OS crash or power loss can lose the last commits. That is the trade we want for
    # a transcript: cheap commits per utterance, nothing lost when the app crashes.
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("PRAGMA foreign_keys = ON")
    # Freed pages are overwritten with zeros, so deleted transcripts do not linger in the file.
    connection.execute("PRAGMA secure_delete = ON")
    return connection
