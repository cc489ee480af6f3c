"""The random-weight Whisper models of ``scripts/make_random_whisper.py``, for tests.

``make test`` builds them into ``build/random-whisper`` before pytest (``scripts/random-whisper.sh``,
cached). A test that needs one is skipped when they are not built, unless
``REQUIRE_RANDOM_WHISPER=1`` (as ``make test`` sets) makes that a failure. Their text is
meaningless: tests assert the mechanics (events, errors, language tokens), never words.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MODELS_DIR = Path(__file__).resolve().parents[1] / "build" / "random-whisper"


def random_whisper(name: str) -> Path:
    """The folder of the random model ``name`` (``base.en``, ``small.en`` or multilingual ``tiny``)."""
    path = MODELS_DIR / name
    if not (path / "model.bin").is_file():
        reason = f"random-weight Whisper {name} not built: run scripts/random-whisper.sh"
        if os.environ.get("REQUIRE_RANDOM_WHISPER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path
