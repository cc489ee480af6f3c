"""The transcript history: sessions and their final utterances in one SQLite file.

Every utterance is committed the moment it is final, so a crash loses at most the utterance in
progress. The file is in WAL mode: readers (the history panel, ``voxdesk history``) never wait
for the writer (a live session) and the writer never waits for readers. Each thread or process
opens its own :class:`HistoryStore`; one store must not be shared between threads.

The schema and its migrations live in :mod:`~voxdesk.app.history.schema`; a file is upgraded on open.
A file that fails SQLite's quick check on open is set aside and what still reads of it recovered
(:mod:`~voxdesk.app.history.repair`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, ParamSpec, TypeVar
from urllib.parse import quote

from voxdesk.app import settings
from voxdesk.app.history.records import SearchHit, SessionKind, SessionRecord, SessionSummary, UtteranceRecord
from voxdesk.app.history.repair import is_damage, put_back, salvage, set_aside
from voxdesk.app.history.schema import SCHEMA_VERSION, migrate, schema_version
from voxdesk.engine.errors import VoxdeskError

__all__ = ["NOT_RECORDED", "HistoryError", "HistoryStore", "default_path", "fts_query"]

NOT_RECORDED = 0
"""The session id :meth:`HistoryStore.start_session` returns when history is off; never stored."""

BUSY_TIMEOUT_MS = 5000
PREVIEW_CHARS = 80

logger = logging.getLogger("voxdesk.history")


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
            path = getattr(args[0], "path", None)  # the store's file, named so the user knows which
            raise HistoryError(f"{path or 'the history database'}: {error}") from error

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
        self.notice = ""
        """What opening the file found and did, in one line for the user (a damaged file recovered,
        a folder that cannot be written); ``""`` when all was well."""

    @classmethod
    def open(cls, path: Path | None = None, *, keep: bool = True, retention_days: int = 0) -> HistoryStore:
        """Open (creating and upgrading as needed) the history file at ``path`` (default: :func:`default_path`).

        With ``keep=False`` the store records nothing: sessions and utterances are not written,
        and no file is created; an existing file can still be read and cleared. With
        ``retention_days > 0`` sessions that started longer ago are deleted now and whenever a
        session starts.

        A damaged file (not a database, or failing SQLite's quick check) is set aside as
        ``NAME.damaged-<time>`` and the rows that still read are copied into a new file; a file
        whose folder cannot be written is opened read-only and records nothing. :attr:`notice`
        says which. Anything else (a lock another program holds, no room for a new file) raises
        :class:`HistoryError`.
        """
        path = path or default_path()
        if not keep and not path.exists():
            return cls._ready(cls(_connect(":memory:"), None, keep, retention_days))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise HistoryError(f"cannot create the folder {path.parent} for the history: {error.strerror}") from error
        if path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
            return cls._open_read_only(path)  # SQLite would open it too, and fail at the first write
        try:
            connection = _checked(lambda: _connect(str(path)))
        except _Damaged as damage:
            return cls._recover(path, keep, retention_days, str(damage))
        except sqlite3.DatabaseError as error:
            raise HistoryError(f"cannot open the history at {path}: {_reason(error, path)}") from error
        return cls._ready(cls(connection, path, keep, retention_days))

    @classmethod
    def _ready(cls, store: HistoryStore) -> HistoryStore:
        """``store`` upgraded to this release's schema and purged of expired sessions."""
        try:
            store._migrate()
            store.purge_expired()
        except (sqlite3.DatabaseError, HistoryError) as error:
            store.close()
            raise HistoryError(f"cannot open the history at {store.path}: {error}") from error
        return store

    @classmethod
    def _recover(cls, path: Path, keep: bool, retention_days: int, reason: str) -> HistoryStore:
        try:
            kept = set_aside(path)
        except OSError as error:
            raise HistoryError(
                f"the history {path} is damaged ({reason}) and cannot be moved aside: {error.strerror}"
            ) from error
        store = None
        try:
            store = cls._ready(cls(_connect(str(path)), path, keep, 0))
            salvage(kept, store._db)
            store.retention_days = retention_days
            store.purge_expired()
            sessions, utterances = store.counts()
        except (sqlite3.Error, HistoryError) as error:
            if store is not None:
                store.close()
            with contextlib.suppress(OSError):
                put_back(kept, path)  # the next start tries again, with the damaged file where it was
            raise HistoryError(f"the history {path} is damaged ({reason}); recovering it failed: {error}") from error
        if sessions or utterances:
            what = f"the {utterances} utterances in {sessions} sessions that still read are in a new history"
        else:
            what = "nothing in it could be read, so a new history was started"
        store.notice = f"the history {path} was damaged ({reason}); it is kept as {kept.name}, and {what}"
        logger.warning("%s", store.notice)
        return store

    @classmethod
    def _open_read_only(cls, path: Path) -> HistoryStore:
        """The history in a folder that cannot be written: read as it is, nothing recorded."""
        # mode=ro reads the WAL a crash left but needs its -shm; with neither there, and none
        # creatable, immutable=1 reads the file alone (nothing can change it on a read-only disk).
        for mode in ("mode=ro", "immutable=1"):
            try:
                connection = _checked(functools.partial(sqlite3.connect, f"file:{quote(str(path))}?{mode}", uri=True))
                break
            except _Damaged as damage:
                raise HistoryError(
                    f"the history {path} is damaged ({damage}) and its folder {path.parent} cannot be written to"
                    " move it aside"
                ) from damage
            except sqlite3.DatabaseError as error:
                failed = error
        else:
            raise HistoryError(f"cannot open the history at {path}: {_reason(failed, path)}") from failed
        version = schema_version(connection)
        if version != SCHEMA_VERSION:
            connection.close()
            raise HistoryError(
                f"cannot open the history at {path}: it needs upgrading (schema {version}, this Voxdesk uses"
                f" {SCHEMA_VERSION}) and its folder {path.parent} cannot be written"
            )
        store = cls(connection, path, keep=False, retention_days=0)
        store.notice = (
            f"the history folder {path.parent} cannot be written: {path} is shown as it is, and nothing new"
            " is saved this run"
        )
        logger.warning("%s", store.notice)
        return store

    def wait_for_locks(self, seconds: float) -> None:
        """How long a statement waits for another connection's write lock before failing (5 s at first)."""
        self._db.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")

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


class _Damaged(Exception):
    """The file's bytes are wrong: SQLite reads it as no database, or its quick check fails."""


def _checked(connect: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
    """The connection ``connect`` makes, once it passed SQLite's quick check; :class:`_Damaged` otherwise.

    The check reads every page once (about 0.5 s for a 100 MB history, 500,000 utterances), and
    finds a truncated file or an overwritten page before a write lands on top of it.
    """
    try:
        connection = connect()
    except sqlite3.DatabaseError as error:
        if is_damage(error):
            raise _Damaged(str(error)) from error
        raise
    try:
        found = [str(row[0]) for row in connection.execute("PRAGMA quick_check")]
    except sqlite3.DatabaseError as error:
        connection.close()
        if is_damage(error):
            raise _Damaged(str(error)) from error
        raise
    if found != ["ok"]:
        connection.close()
        details = [line for row in found for line in row.splitlines() if not line.startswith("***")]
        more = f" and {len(details) - 1} more" if len(details) > 1 else ""
        raise _Damaged(f"database disk image is malformed: {details[0] if details else found[0]}{more}")
    return connection


def _reason(error: sqlite3.Error, path: Path) -> str:
    """``error`` in words that say what the user can do about it."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY) and not os.access(path.parent, os.W_OK):
        return f"its folder {path.parent} cannot be written ({error})"
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return f"another program holds it locked ({error})"
    return str(error)


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
