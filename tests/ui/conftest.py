"""Qt widget tests: offscreen (set in tests/conftest.py), with asyncio on the Qt loop."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop on pytest-qt's QApplication, marked running: asyncio tasks advance
    whenever qtbot spins Qt (waitUntil, waitSignal, wait)."""
    import qasync

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    qapp.processEvents()
    asyncio.events._set_running_loop(None)  # detach; loop.stop() would call app.exit()
    asyncio.set_event_loop(None)
