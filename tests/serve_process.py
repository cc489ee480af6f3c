"""Starting a real ``voxdesk serve`` process for tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def start_serve(*args: str) -> tuple[subprocess.Popen[str], int]:
    """``voxdesk serve`` on a free loopback port (extra ``args`` appended); the process and its port."""
    process = subprocess.Popen(
        [sys.executable, "-m", "voxdesk.cli.main", "serve", "--port", "0", *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "VOXDESK_API_KEY": ""},
    )
    assert process.stderr is not None
    for line in process.stderr:
        if match := re.search(r"listening on ws://[\d.]+:(\d+)/v1/realtime", line):
            return process, int(match.group(1))
    process.wait(timeout=10)
    raise AssertionError(f"voxdesk serve exited with {process.returncode} before listening")
