"""Qt widget tests: offscreen (set in tests/conftest.py), with asyncio on the Qt loop."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from PySide6.QtWidgets import QApplication


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop on pytest-qt's QApplication, marked running: asyncio tasks advance
    whenever qtbot spins Qt (waitUntil, waitSignal, wait)."""
    import qasync

    loop = qasync.QEventLoop(qapp, already_running=True)
    # qasync's own default executor runs QThreads, which abort the process if still alive at
    # exit; the loop is never closed here (closing a running loop is refused), so own the pool.
    threads = ThreadPoolExecutor(thread_name_prefix="qloop")
    loop.set_default_executor(threads)
    asyncio.set_event_loop(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    qapp.processEvents()
    threads.shutdown(wait=True)
    asyncio.events._set_running_loop(None)  # detach; loop.stop() would call app.exit()
    asyncio.set_event_loop(None)
