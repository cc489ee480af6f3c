"""``--log-level`` and ``VOXDESK_LOG`` on the command line, and the server's per-connection log lines."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import subprocess
import sys

import pytest
from websockets.asyncio.client import connect

from tests.serve_process import REPO, start_serve
from voxdesk.cli.main import main

pytestmark = pytest.mark.integration  # runs voxdesk as a process


def test_log_level_debug_sets_the_voxdesk_logger() -> None:
    assert main(["--log-level", "debug", "history", "list"]) == 0
    assert logging.getLogger("voxdesk").level == logging.DEBUG


def test_log_level_is_checked() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "voxdesk.cli.main", "--log-level", "chatty", "history", "list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "invalid choice" in result.stderr


def test_serve_logs_each_connection_under_its_own_id(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXDESK_LOG", "debug")
    process, port = start_serve()

    async def visit() -> None:
        async with connect(f"ws://127.0.0.1:{port}/v1/realtime") as socket:
            await socket.recv()  # session.created

    try:
        asyncio.run(visit())
        asyncio.run(visit())
    finally:
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors[-2000:]
    opened = re.findall(r"voxdesk\.server\.realtime\.server: conn (\d+): opened from", errors)
    assert len(opened) == 2
    for connection in opened:
        assert re.search(rf"conn {connection}: closed after [\d.]+ s", errors)
    assert "INFO voxdesk.cli: serve: shutting down" in errors
