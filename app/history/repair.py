"""A damaged history file: set aside under a ``.damaged-<time>`` name, and its rows that still read
copied into a new, empty history.

SQLite's own ``.recover`` lives in its command-line shell, not in Python's ``sqlite3``, so rows
are read back through SQL: each table in rowid order, stepping past the rowids whose pages no
longer read. A row that reads but breaks the schema is left behind; an utterance whose session
was lost gets a stand-in session, so no readable words are dropped.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from voxdesk.app.settings import damaged_copy_path

__all__ = ["DAMAGE_CODES", "SIDE_FILES", "is_damage", "put_back", "salvage", "set_aside"]

DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes for a file whose bytes are wrong (not busy, not read-only)."""

SIDE_FILES = ("-wal", "-shm")
"""The files SQLite keeps beside a database in WAL mode; they belong to it and move with it."""

_MAX_ROWID = 2**63 - 1
_LOST_SESSION = "unknown (recovered from a damaged history)"


def is_damage(error: sqlite3.Error) -> bool:
    """Whether ``error`` says the file's bytes are damaged (malformed, or not a database at all)."""
    return (getattr(error, "sqlite_errorcode", 0) & 0xFF) in DAMAGE_CODES


def set_aside(path: Path) -> Path:
    """Rename ``path`` and its WAL files to a free ``NAME.damaged-<time>``; the new name.

    Renaming needs no free space, so this works on a full disk too. On failure nothing is left
    half moved, and the :class:`OSError` is raised.
    """
    kept = damaged_copy_path(path)
    _move(path, kept)
    for side in (Path(f"{kept}{suffix}") for suffix in SIDE_FILES):
        with contextlib.suppress(OSError):
            if side.name.endswith("-shm") or side.stat().st_size == 0:
                side.unlink()  # an index SQLite rebuilds, or a WAL with nothing in it: no part of the damage
    return kept


def put_back(kept: Path, path: Path) -> None:
    """Undo :func:`set_aside`: whatever was made at ``path`` since is removed, ``kept`` moved back."""
    for suffix in (*SIDE_FILES, ""):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    _move(kept, path)


def _move(source: Path, target: Path) -> None:
    moved: list[tuple[Path, Path]] = []
    try:
        for suffix in (*SIDE_FILES, ""):  # the database itself last, so a failure leaves it in place
            origin = Path(f"{source}{suffix}")
            if suffix and not origin.exists():
                continue
            os.rename(origin, f"{target}{suffix}")
            moved.append((origin, Path(f"{target}{suffix}")))
    except OSError:
        for origin, destination in reversed(moved):
            os.rename(destination, origin)
        raise


def salvage(damaged: Path, into: sqlite3.Connection) -> None:
    """Copy the sessions and utterances that still read in ``damaged`` into ``into``.

    ``into`` is a new history at the current schema, with no transaction open. ``damaged`` is
    opened read-only and never written: a read-only connection does not checkpoint its WAL.
    """
    made = [side for side in (Path(f"{damaged}{suffix}") for suffix in SIDE_FILES) if not side.exists()]
    try:
        # No waiting for locks: a program still holding the damaged file costs its rows, not minutes.
        source = sqlite3.connect(f"file:{quote(str(damaged))}?mode=ro", uri=True, timeout=0)
        # A file shorter than its header says is refused whole, unless the schema is "writable":
        # then SQLite reads the pages that are there (nothing is written: the connection is read-only).
        source.execute("PRAGMA writable_schema = ON")
    except sqlite3.Error:
        return
    try:
        into.execute("BEGIN IMMEDIATE")
        try:
            # The search index built once at the end, not row by row by its insert trigger
            # (schema.py): 2.5 times faster for a big history. In the transaction, as the rows are.
            (trigger,) = into.execute("SELECT sql FROM sqlite_master WHERE name = 'utterances_ai'").fetchone()
            into.execute("DROP TRIGGER utterances_ai")
            _copy(source, into, "sessions")
            _copy(source, into, "utterances")
            into.execute(trigger)
            into.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('rebuild')")
        except BaseException:
            into.execute("ROLLBACK")
            raise
        into.execute("COMMIT")
    finally:
        source.close()
        for side in made:  # the empty WAL files a reader makes: the kept copy stays as it was found
            side.unlink(missing_ok=True)


def _copy(source: sqlite3.Connection, into: sqlite3.Connection, table: str) -> None:
    columns = {row[1] for row in into.execute(f"PRAGMA table_info({table})")}
    for row in _readable_rows(source, table):
        values = {name: value for name, value in row.items() if name in columns}
        try:
            _insert(into, table, values)
        except sqlite3.IntegrityError:
            if table != "utterances" or not _stand_in_session(into, values):
                continue  # a row that reads but breaks the schema (a NULL text, a wrong kind)
            with contextlib.suppress(sqlite3.IntegrityError):
                _insert(into, table, values)


def _insert(into: sqlite3.Connection, table: str, values: dict[str, Any]) -> None:
    names = ", ".join(values)
    into.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(values))})", tuple(values.values()))


def _stand_in_session(into: sqlite3.Connection, utterance: dict[str, Any]) -> bool:
    """A session for an utterance whose own session did not read; whether one was added."""
    session_id, created = utterance.get("session_id"), utterance.get("created_at")
    if not isinstance(session_id, int) or into.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
        return False
    started = created if isinstance(created, int | float) else 0.0
    into.execute(
        "INSERT INTO sessions (id, started_at, kind, engine, model, source) VALUES (?, ?, 'live', ?, ?, ?)",
        (session_id, started, _LOST_SESSION, _LOST_SESSION, _LOST_SESSION),
    )
    return True


def _readable_rows(source: sqlite3.Connection, table: str) -> Iterator[dict[str, Any]]:
    """``table``'s rows in rowid order, stepping past those that do not read."""
    after = -_MAX_ROWID - 1
    while True:
        try:
            cursor = source.execute(f"SELECT rowid, * FROM {table} WHERE rowid > ? ORDER BY rowid", (after,))
            names = [column[0] for column in cursor.description][1:]
            for row in cursor:
                after = row[0]
                yield dict(zip(names, row[1:], strict=True))
            return
        except sqlite3.DatabaseError:
            resume = _next_readable(source, table, after + 1)  # the row after ``after`` did not read
            if resume is None:
                return
            after = resume - 1


def _next_readable(source: sqlite3.Connection, table: str, unreadable: int) -> int | None:
    """The first rowid past ``unreadable`` that can be found, probing ever further; ``None`` if none."""
    step = 1
    while unreadable + step <= _MAX_ROWID:
        try:
            row = source.execute(
                f"SELECT rowid FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 1", (unreadable + step,)
            ).fetchone()
        except sqlite3.DatabaseError:
            step *= 2
            continue
        return None if row is None else int(row[0])
    return None
