"""The history under real faults of its disk and of other programs: a full filesystem, a folder
on a read-only filesystem, a lock another process holds, a WAL left by a writer killed with
SIGKILL. Each time Voxdesk goes on: the fault is said once, in one line naming the file, the
words still reach the transcript, and nothing it had saved is lost.

The small filesystems are tmpfs mounts the test makes (tests run as root, and chmod does not
stop root), unmounted afterwards even when the test fails.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import pytest

from tests.app.listening.test_controller import Events, say
from tests.conftest import fixture_path
from tests.desktop_rig import VirtualMic
from tests.recognition import assert_heard_in, assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.history.live import LOCK_WAIT_S, LiveHistory
from voxdesk.app.history.store import NOT_RECORDED, HistoryError, HistoryStore
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import ControllerEvent, ListeningChanged, Problem, UtteranceFinal
from voxdesk.app.listening.transcript import Transcript
from voxdesk.app.settings import Settings

pytestmark = pytest.mark.integration  # mounts filesystems, starts and kills processes

REPO = Path(__file__).resolve().parents[3]

_HOLD_LOCK = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
for pragma in sys.argv[2:]:
    connection.execute(pragma)
connection.execute("BEGIN EXCLUSIVE")
connection.execute("SELECT count(*) FROM sessions").fetchone()
print("locked", flush=True)
sys.stdin.read()  # held until the test closes our stdin
"""


@contextmanager
def small_filesystem(folder: Path, size: str = "1m") -> Iterator[Path]:
    """A tmpfs of ``size`` on ``folder`` for the test; unmounted afterwards, even on failure."""
    folder.mkdir(parents=True, exist_ok=True)
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "voxdesk-test", str(folder)], capture_output=True, text=True
    )
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here (mount needs root): {mount.stderr.strip()}")
    try:
        yield folder
    finally:
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], check=True)  # a connection a failed test left open


def remount_read_only(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)


def fill(folder: Path) -> Path:
    """Fill the filesystem ``folder`` is on to its last byte; the file that fills it."""
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    block = 65536
    try:
        while block:
            try:
                os.write(descriptor, b"\0" * block)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                block //= 2
    finally:
        os.close(descriptor)
    assert os.statvfs(folder).f_bavail == 0
    return filler


@contextmanager
def locked_by_another_process(path: Path, *pragmas: str) -> Iterator[None]:
    """Another process holding ``BEGIN EXCLUSIVE`` on ``path`` while the block runs."""
    command = [sys.executable, "-c", _HOLD_LOCK, str(path), *pragmas]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline() == "locked\n", "the locking process did not start"
        yield
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Heard:
    """What a listener subscribed after the history (as the window is) saw: finals and problems."""

    def __init__(self, controller: Controller) -> None:
        self.finals: list[str] = []
        self.problems: list[str] = []
        controller.subscribe(self._on_event)

    def _on_event(self, event: ControllerEvent) -> None:
        if isinstance(event, UtteranceFinal):
            self.finals.append(event.utterance.committed)
        elif isinstance(event, Problem):
            self.problems.append(event.message)


def finals(controller: Controller, transcript: Transcript, texts: list[str]) -> None:
    """Each of ``texts`` becomes final, as the engine would report it."""
    for number, text in enumerate(texts):
        final = transcript.finish(transcript.open().id, text, number, number + 0.8)
        assert final is not None
        controller.report(UtteranceFinal(final))


def listen(controller: Controller, transcript: Transcript, texts: list[str]) -> None:
    """One listening session in which each of ``texts`` becomes final."""
    controller.report(ListeningChanged(True))
    finals(controller, transcript, texts)
    controller.report(ListeningChanged(False))


def saved_rows(live: LiveHistory) -> set[int]:
    """The history rows LiveHistory was told were written (``add_utterance`` returned their ids)."""
    return {row for row in live.utterance_ids.values() if row != NOT_RECORDED}


def texts_in(path: Path) -> dict[int, str]:
    with HistoryStore.open(path) as store:
        return {u.id: u.text for s in store.sessions(limit=1000) for u in store.utterances(s.id)}


def assert_intact(path: Path) -> None:
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        check = "INSERT INTO utterances_fts (utterances_fts) VALUES ('integrity-check')"
        assert connection.execute(check).fetchall() == []
    finally:
        connection.close()


# A full disk -------------------------------------------------------------------------------------


def test_a_full_disk_is_said_once_and_every_saved_utterance_stays(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "disk") as disk:
        path = disk / "history.sqlite3"
        controller, transcript = Controller(Settings()), Transcript()
        with HistoryStore.open(path) as store:
            live = LiveHistory(controller, store)
            heard = Heard(controller)
            controller.report(ListeningChanged(True))
            finals(controller, transcript, [f"said before the disk filled {n}" for n in range(5)])
            before = saved_rows(live)
            assert len(before) == 5
            filler = fill(disk)  # in the middle of the session
            finals(controller, transcript, [f"said while the disk was full {n}" for n in range(20)])
            controller.report(ListeningChanged(False))
            listen(controller, transcript, ["said in the next session, the disk still full"])
            assert len(heard.finals) == 26  # every utterance reached the listeners after the history
            assert len(heard.problems) == 2  # once per listening session: each tries again
            heard.problems.pop()
            [problem] = heard.problems
            assert problem.startswith(f"could not save to the history ({path}: database or disk is full)")
            assert set(texts_in(path)) >= saved_rows(live)  # readable on the full disk too

            filler.unlink()
            listen(controller, transcript, ["said once there was room again"])  # the next session saves again
            assert len(heard.problems) == 1
            saved = saved_rows(live)
        stored = texts_in(path)  # the next start
        assert set(stored) >= saved > before
        assert all(stored[row].startswith("said before the disk filled") for row in before)
        assert stored[max(saved)] == "said once there was room again"
        assert_intact(path)


# A read-only folder ---------------------------------------------------------------------------


def test_a_history_on_a_read_only_disk_is_shown_and_nothing_is_written(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "disk", size="64m") as disk:  # room for what the writer does before its kill
        path, damaged = disk / "history.sqlite3", disk / "damaged.sqlite3"
        acknowledged = _kill_a_writer(path, utterances=40)  # leaves its WAL: read-only must still read it
        damaged.write_bytes(b"not a database " * 300)
        remount_read_only(disk)

        store = HistoryStore.open(path)
        try:
            assert store.notice == (
                f"the history folder {disk} cannot be written: {path} is shown as it is, and nothing new is saved"
                " this run"
            )
            stored = {u.id for s in store.sessions() for u in store.utterances(s.id)}
            assert set(acknowledged) <= stored
            controller, transcript = Controller(Settings()), Transcript()
            LiveHistory(controller, store)
            heard = Heard(controller)
            listen(controller, transcript, ["nothing of this is written", "nor this"])
            assert len(heard.finals) == 2 and heard.problems == []  # the notice said it once, at the start
            assert store.counts()[1] == len(stored)
        finally:
            store.close()

        with pytest.raises(HistoryError, match=f"cannot open the history at {disk}/new.sqlite3: its folder {disk}"):
            HistoryStore.open(disk / "new.sqlite3")
        with pytest.raises(HistoryError, match=f"the history {damaged} is damaged .* its folder {disk} cannot be"):
            HistoryStore.open(damaged)
        assert damaged.read_bytes() == b"not a database " * 300


# A lock another process holds ----------------------------------------------------------------------


def test_a_write_lock_another_process_holds_is_said_once_and_listening_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    controller, transcript = Controller(Settings()), Transcript()
    with HistoryStore.open(path) as store:
        live = LiveHistory(controller, store)
        heard = Heard(controller)
        controller.report(ListeningChanged(True))
        finals(controller, transcript, ["said before the lock"])
        before = saved_rows(live)
        with locked_by_another_process(path):  # in the middle of the session
            started = time.monotonic()
            finals(controller, transcript, [f"said while locked {n}" for n in range(5)])
            controller.report(ListeningChanged(False))
            waited = time.monotonic() - started
        assert len(heard.finals) == 6
        [problem] = heard.problems
        assert problem.startswith(f"could not save to the history ({path}: database is locked)")
        assert waited < 2 * LOCK_WAIT_S  # one short wait for the lock, not one per utterance, nor a long one
        listen(controller, transcript, ["said after the lock was gone"])
        assert len(heard.problems) == 1
        after = saved_rows(live)
    stored = texts_in(path)
    assert set(stored) >= after > before and stored[max(after)] == "said after the lock was gone"
    assert list(tmp_path.glob("*.damaged-*")) == []  # locked is not damaged


def test_a_history_another_process_holds_exclusively_is_one_line_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore.open(path) as store:
        session = store.start_session("live", "builtin", "whisper-tiny.en", "microphone")
        row = store.add_utterance(session, "said before the lock", 0, 1)
    with locked_by_another_process(path, "PRAGMA locking_mode = EXCLUSIVE"):
        with pytest.raises(HistoryError) as refused:
            HistoryStore.open(path)
        assert str(refused.value) == (
            f"cannot open the history at {path}: another program holds it locked (database is locked)"
        )
    assert list(tmp_path.glob("*.damaged-*")) == []
    assert texts_in(path) == {row: "said before the lock"}


# A writer killed with SIGKILL -------------------------------------------------------------------


def _kill_a_writer(path: Path, utterances: int) -> list[int]:
    """Start ``tests.app.history.writer`` on ``path``, SIGKILL it once it has saved ``utterances``;
    the ids it printed (each printed after ``add_utterance`` returned)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.app.history.writer", str(path)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline().startswith("session ")
        acknowledged = [int(process.stdout.readline()) for _ in range(utterances)]
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    lines = process.stdout.read().split("\n")  # read(), not communicate(): it would skip what readline buffered
    process.stdout.close()
    return acknowledged + [int(line) for line in lines[:-1]]  # the last, unfinished or empty, is no promise


def test_a_wal_left_by_a_killed_writer_keeps_every_acknowledged_utterance(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    acknowledged = _kill_a_writer(path, utterances=100)
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0  # no one checkpointed: what was said after the last checkpoint is only there
    alone = tmp_path / "without-its-wal.sqlite3"
    shutil.copy(path, alone)

    with HistoryStore.open(path) as store:  # the next start, nothing else having the file open
        assert store.notice == ""
        [session] = store.sessions()
        stored = [u.id for u in store.utterances(session.id)]
        assert set(acknowledged) <= set(stored) and len(stored) - len(acknowledged) <= 1
        assert session.ended_at is None  # it never ended
        store.add_utterance(session.id, "life goes on after the kill", 0, 1)
    assert_intact(path)


# Listening from a microphone while the history fails ----------------------------------------------


@pytest.mark.parametrize("fault", ["full-disk", "locked"])
def test_listening_from_the_microphone_goes_on_while_the_history_fails(
    virtual_mic: VirtualMic, speech: dict[str, Fixture], tmp_path: Path, fault: str
) -> None:
    first, second, third = (speech[name] for name in ("command00-slt", "command01-slt", "command02-slt"))
    folder: AbstractContextManager[Path] = (
        small_filesystem(tmp_path / "disk") if fault == "full-disk" else nullcontext(tmp_path)
    )
    with folder as disk:
        path = disk / "history.sqlite3"
        store = HistoryStore.open(path)
        controller = Controller(Settings())
        if fault == "locked":  # subscribed before the history: the third phrase plays while it waits on the second
            controller.subscribe(_play_on_final(virtual_mic, 2, third))
        live = LiveHistory(controller, store)
        events = Events(controller)
        filler: Path | None = None

        async def scenario() -> None:
            nonlocal filler
            assert await controller.load_engine()
            controller.start_listening()
            assert_recognized(first, await say(virtual_mic, events, first))
            assert len(saved_rows(live)) == 1
            if fault == "full-disk":
                filler = fill(disk)
                assert_recognized(second, await say(virtual_mic, events, second))
                assert_recognized(third, await say(virtual_mic, events, third))
            else:
                with locked_by_another_process(path):
                    assert_recognized(second, await say(virtual_mic, events, second))
                    await events.until(lambda: len(events.finals()) >= 3)
            await controller.aclose()

        try:
            asyncio.run(scenario())
        finally:
            store.close()
        for phrase in (first, second, third):
            assert_heard_in(phrase, controller.transcript.text())
        [problem] = [p for p in events.problems() if "history" in p]
        assert problem.startswith(f"could not save to the history ({path}: ")
        if filler is not None:
            filler.unlink()
        stored = texts_in(path)
        assert set(stored) >= saved_rows(live) and len(stored) >= 1


def _play_on_final(mic: VirtualMic, count: int, fixture: Fixture) -> Callable[[ControllerEvent], None]:
    """A listener that plays ``fixture`` into the microphone when the ``count``-th final arrives."""
    finals = 0

    def on_event(event: ControllerEvent) -> None:
        nonlocal finals
        if isinstance(event, UtteranceFinal):
            finals += 1
            if finals == count:
                mic.play(fixture_path(fixture))

    return on_event
