"""The soaks' short form in ``make test``: each soak for a short time, held to the same bounds as the
long form (``make soak``); over so short a run the bounds' floors decide, so a leak per session or
utterance still fails here while a slow one needs the long form."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.soak.controller import soak_controller
from tests.soak.serve import soak_builtin
from tests.soak.vllm import soak_vllm
from tests.vllm_support import requires_vllm

pytestmark = pytest.mark.integration  # loads the built-in engine, starts voxdesk serve processes

CONTROLLER_AUDIO_MINUTES = 1.5  # about 25 s on a free 2-core machine: some 30 utterances
SERVE_MINUTES = 0.75  # some 10 sessions per dialect
VLLM_MINUTES = 0.5  # the vLLM start (a minute or more) is most of this test
DISTINCT_PHRASES = 6  # looped, so the warm-up (each once) is short; a leak per session still shows


def test_the_controller_stays_flat_over_minutes_of_speech(tmp_path: Path) -> None:
    result = asyncio.run(
        soak_controller(CONTROLLER_AUDIO_MINUTES, tmp_path / "history.sqlite3", distinct=DISTINCT_PHRASES)
    )
    assert result.passed, result.report()
    assert len(result.samples) >= 5, result.report()


def test_voxdesk_serve_stays_flat_under_rolling_sessions_in_three_dialects() -> None:
    result = asyncio.run(soak_builtin(SERVE_MINUTES, distinct=DISTINCT_PHRASES))
    assert result.passed, result.report()
    assert len(result.samples) >= 5, result.report()


@pytest.mark.vllm
@requires_vllm
def test_voxdesk_serve_on_vllm_stays_flat_under_continuous_sessions() -> None:
    result = asyncio.run(soak_vllm(VLLM_MINUTES, distinct=DISTINCT_PHRASES))
    assert result.passed, result.report()
    assert len(result.samples) >= 5, result.report()
