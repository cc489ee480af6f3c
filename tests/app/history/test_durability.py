"""The history under a crash and under concurrent use: a killed writer, readers during writes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from voxdesk.app.history.store import HistoryStore

pytestmark = pytest.mark.integration  # kills writer processes mid-write

REPO = Path(__file__).resolve().parents[3]


def _wait_for_utterances(reader: HistoryStore, at_least: int, process: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        count = reader.counts()[1]
        if count >= at_least:
            return count
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.01)
    raise AssertionError(f"the writer did not reach {at_least} utterances")


def test_a_killed_live_session_keeps_every_final_utterance(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore.open(path) as reader:
        for round_ in range(3):  # three kills land at three different moments of a write
            before = reader.counts()[1]
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.app.history.writer", str(path)],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                seen = _wait_for_utterances(reader, before + 150 * (round_ + 1), process)
            finally:
                os.kill(process.pid, signal.SIGKILL)
                output, _ = process.communicate(timeout=30)
            assert process.returncode == -signal.SIGKILL
            lines = output.splitlines()
            session = int(lines[0].split()[1])
            finalized = [int(line) for line in lines[1:] if line.strip()]  # printed after add_utterance returned
            assert len(finalized) >= seen - before - 1

            stored = {u.id: u for u in reader.utterances(session)}
            assert set(finalized) <= set(stored)
            assert len(set(stored) - set(finalized)) <= 1  # at most the one committed as the kill came
            for number, utterance in enumerate(sorted(stored.values(), key=lambda u: u.id)):
                assert utterance.text == f"utterance number {number} says word{number}"
            last = len(stored) - 1
            assert [h.utterance.id for h in reader.search(f"word{last}")] == [max(stored)]
            assert reader.session(session).ended_at is None  # it never ended

    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert connection.execute("INSERT INTO utterances_fts (utterances_fts) VALUES ('integrity-check')").fetchall() == []
    connection.close()
    with HistoryStore.open(path) as store:
        session = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(session, "life goes on after the crash", 0, 1)
        store.end_session(session)
        assert [h.session.id for h in store.search("crash")] == [session]
        assert len(store.sessions()) == 4


def test_readers_complete_while_a_write_transaction_is_open(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    writer_ready, reader_done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    with HistoryStore.open(path) as setup:
        session = setup.start_session("live", "builtin", "m", "mic")
        setup.add_utterance(session, "committed before the reader came", 0, 1)

    def write() -> None:
        try:
            with HistoryStore.open(path) as writer, writer._transaction():
                writer.add_utterance(session, "written but not yet committed", 1, 2)
                writer_ready.set()
                # Hold the write transaction open until the reader has finished.
                assert reader_done.wait(timeout=60), "the reader never finished"
        except BaseException as error:
            errors.append(error)
            writer_ready.set()

    thread = threading.Thread(target=write)
    thread.start()
    assert writer_ready.wait(timeout=60)
    try:
        with HistoryStore.open(path) as reader:
            assert [u.text for u in reader.utterances(session)] == ["committed before the reader came"]
            assert [h.utterance.text for h in reader.search("committed")] == ["committed before the reader came"]
            assert reader.sessions()[0].utterance_count == 1
            version = reader.data_version()
            reader_done.set()
            thread.join(timeout=60)
            assert not errors, errors
            assert [u.text for u in reader.utterances(session)][-1] == "written but not yet committed"
            assert reader.data_version() != version  # what the history panel polls
    finally:
        reader_done.set()
        thread.join(timeout=60)


def test_a_writer_commits_while_a_reader_holds_a_snapshot(tmp_path: Path) -> None:
    # The other direction: in rollback-journal mode this commit would wait for the reader and
    # then fail with "database is locked"; in WAL mode it goes through at once.
    path = tmp_path / "history.sqlite3"
    with HistoryStore.open(path) as reader, HistoryStore.open(path) as writer:
        session = writer.start_session("live", "builtin", "m", "mic")
        writer.add_utterance(session, "first words", 0, 1)
        reader._db.execute("BEGIN")
        assert reader.counts() == (1, 1)  # the read transaction now holds a snapshot
        try:
            writer.add_utterance(session, "second words", 1, 2)  # another connection: no waiting
            assert reader.counts() == (1, 1)  # still its own consistent snapshot
        finally:
            reader._db.execute("COMMIT")
        assert reader.counts() == (1, 2)


def test_concurrent_writers_and_a_reader_never_see_database_is_locked(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    per_writer = 300
    errors: list[BaseException] = []
    HistoryStore.open(path).close()

    def write(name: str) -> None:
        try:
            with HistoryStore.open(path) as writer:
                session = writer.start_session("live", "builtin", "m", name)
                for number in range(per_writer):
                    utterance = writer.add_utterance(session, f"{name} says hello number {number}", number, number + 1)
                    if number % 10 == 0:
                        writer.set_action(utterance, "noted")
                writer.end_session(session)
        except BaseException as error:
            errors.append(error)

    writers = [threading.Thread(target=write, args=(f"writer{n}",)) for n in range(2)]
    for thread in writers:
        thread.start()
    counts: list[int] = []
    with HistoryStore.open(path) as reader:
        while any(t.is_alive() for t in writers):
            try:
                counts.append(reader.counts()[1])
                reader.search("hello")
                reader.sessions()
            except BaseException as error:
                errors.append(error)
                break
        for thread in writers:
            thread.join(timeout=120)
        assert not errors, errors
        assert counts == sorted(counts)  # each read sees a consistent, growing history
        assert len(counts) > 1
        assert reader.counts() == (2, 2 * per_writer)
        assert len(reader.search("hello", limit=10_000)) == 2 * per_writer
        assert all(s.ended_at is not None for s in reader.sessions())
