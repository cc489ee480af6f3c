"""What C libraries write straight to file descriptor 2, captured instead of reaching the terminal."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator

__all__ = ["native_stderr"]

_LOCK = threading.Lock()  # one capture of file descriptor 2 at a time


@contextlib.contextmanager
def native_stderr() -> Iterator[list[str]]:
    """Capture what is written to file descriptor 2 inside the block: C code that bypasses
    ``sys.stderr`` (mpg123's notes through libsndfile, libxcb's reason for a refused display).
    The yielded list holds the lines written, stripped and without empty ones, once the block ends.

    Anything else written to stderr meanwhile, from another thread, is captured too.
    """
    lines: list[str] = []
    with _LOCK, tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode(errors="replace")
            lines.extend(line.strip() for line in text.splitlines() if line.strip())
