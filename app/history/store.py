"""The transcript history: sessions and their final utterances in one SQLite file.

Every utterance is committed the moment it is final, so a crash loses at most the utterance in
progress. The file is in WAL mode: readers (the history panel, ``voxdesk history``) never wait
for the writer (a live session) and the writer never waits for readers. Each thread or process
opens its own :class:`HistoryStore`; one store must not be shared between threads.

The schema and its migrations live in :mod:`~voxdesk.app.history.schema`; a file is upgraded on open.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from voxdesk.app import settings
from voxdesk.app.history.records import SearchHit, SessionKind, SessionRecord, SessionSummary, UtteranceRecord
from voxdesk.app.history.schema import SCHEMA_VERSION, migrate, schema_version
from voxdesk.engine.errors import VoxdeskError

__all__ = ["NOT_RECORDED", "HistoryError", "HistoryStore", "default_path", "fts_query"]

NOT_RECORDED = 0
"""The session id :meth:`HistoryStore.start_session` returns when history is off; never stored."""

BUSY_TIMEOUT_MS = 5000
PREVIEW_CHARS = 80


class HistoryError(VoxdeskError):
    """A history request that failed: an unknown session, a file that is not ours, a database error."""


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
    " u.created_at, u.language"
)


def _session(row: Sequence[Any]) -> SessionRecord:
    id_, started, ended, kind, engine, model, source = row[:7]
    return SessionRecord(int(id_), _utc(started), _optional_utc(ended), kind, engine, model, source)


def _utterance(row: Sequence[Any]) -> UtteranceRecord:
    id_, session_id, text, start_s, end_s, first, final, action, created, language = row[:10]
    return UtteranceRecord(
        int(id_), int(session_id), text, start_s, end_s, first, final, action, _utc(created), language
    )


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
        language: str | None = None,
    ) -> int:
        """Commit one final utterance now; returns its id (:data:`NOT_RECORDED` when not recorded).

        Nothing is written when history is off or ``session_id`` is :data:`NOT_RECORDED`.
        """
        if not self.keep or session_id == NOT_RECORDED:
            return NOT_RECORDED
        try:
            cursor = self._db.execute(
                "INSERT INTO utterances (session_id, text, start_s, end_s, first_partial_latency_s, final_latency_s,"
                " action, created_at, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    text,
                    start_s,
                    end_s,
                    first_partial_latency_s,
                    final_latency_s,
                    action,
                    time.time(),
                    language,
                ),
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
    def session(self, session_id: int) -> SessionRecord:
        """One session; raises :class:`HistoryError` if there is none with that id."""
        row = self._db.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no session {session_id} in the history")
        return _session(row)

    @_translated
    def utterances(self, session_id: int) -> list[UtteranceRecord]:
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
        return [SearchHit(_utterance(row), _session(row[10:])) for row in rows]

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
        if schema_version(self._db) == SCHEMA_VERSION:
            return  # the common case takes no write lock
        with self._transaction():
            version = schema_version(self._db)  # again: another process may have upgraded meanwhile
            if version > SCHEMA_VERSION:
                raise HistoryError(
                    f"the history file is from a newer Voxdesk (schema {version}, this one knows {SCHEMA_VERSION})"
                )
            migrate(self._db, version)


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
