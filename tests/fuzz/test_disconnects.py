"""Abrupt disconnects against the ``voxdesk serve`` servers, in-process on real loopback
sockets, spread over the moments a client can vanish (mid-handshake, mid-append, mid-commit,
while deltas flush, mid-TLS-handshake):

- ``VOXDESK_DISCONNECTS`` per dialect (50 in ``make test``, 1,000 in ``make soak``), 50 at a
  time, on FakeTickEngine (one "tick " per 80 ms of audio): the server at a scale Whisper on
  two cores could not feed;
- a tenth as many (at least one of each moment) on the built-in engine with speech, 10 at a
  time, so Whisper's decodes and the speech gate are torn down mid-utterance too.

After each batch: no crash (nothing logged at ERROR, nothing reached the event loop's
exception handler), the servers hold no connection or session, their gauges read zero, and the
process's asyncio tasks and open descriptors are back to what they were before the first cut.
Then one real session on each server (plain and TLS) still gets its text.
"""

from __future__ import annotations

import asyncio
import random
import ssl
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.fuzz.counts import DISCONNECTS, SEED
from tests.fuzz.cuts import CUTS, run_cut
from tests.fuzz.rig import (
    OPENAI_PATH,
    TONE,
    VLLM_PATH,
    CrashWatch,
    LeakWatch,
    TlsFiles,
    openai_session,
    running,
    self_signed,
    vllm_session,
    wyoming_session,
)
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.engine.session import StreamingEngine
from voxdesk.engine.testing import FakeTickEngine

DIALECTS = ["vllm", "openai", "wyoming"]
TICKS = "tick " * 12  # FakeTickEngine's text for one second of audio
PHRASE = "command00-slt"  # "open the browser"


@dataclass(frozen=True)
class Figures:
    """What one dialect's disconnects did."""

    dialect: str
    plan: list[str]
    seconds: float
    settle: float
    crashes: list[str]
    failures: list[str]
    texts: list[str]

    def line(self, batch: int) -> str:
        """The figures in one line, for the log and the README."""
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(Counter(self.plan).items()))
        return (
            f"{self.dialect}: {len(self.plan)} abrupt disconnects ({kinds}) in {self.seconds:.1f} s: "
            f"{len(self.crashes)} crashes, {len(self.failures)} failed cuts, nothing left behind (back to "
            f"baseline within {self.settle:.2f} s of each batch of {batch}); then real sessions gave {self.texts}"
        )


def _plan(dialect: str, count: int) -> list[str]:
    """``count`` moments, each as often as the others, in a seeded order."""
    kinds = list(CUTS[dialect])
    plan = [kinds[index % len(kinds)] for index in range(count)]
    random.Random(f"{SEED}:disconnects:{dialect}:{count}").shuffle(plan)
    return plan


async def _disconnects(
    dialect: str, engine: StreamingEngine, plan: list[str], tls_files: TlsFiles, audio: np.ndarray, batch: int
) -> Figures:
    """The cuts of ``plan`` against a plain and a TLS server of ``dialect`` (Wyoming: two plain
    ones), ``batch`` at a time, each client sending ``audio``; then one real session on each."""
    cuts = CUTS[dialect]
    client_tls = ssl.create_default_context(cafile=str(tls_files.cert))
    watch = CrashWatch()
    started = time.perf_counter()
    with watch.watching():
        async with (
            running(dialect, engine) as plain,
            running(dialect, engine, None if dialect == "wyoming" else tls_files) as secure,
        ):
            leaks = LeakWatch()
            leaks.baseline()
            settle = 0.0
            failures = []
            for start in range(0, len(plan), batch):
                kinds = plan[start : start + batch]
                outcomes = await asyncio.gather(
                    *(
                        run_cut(
                            cuts[kind],
                            secure.port if kind == "mid-TLS-handshake" else plain.port,
                            random.Random(f"{SEED}:{dialect}:{start + index}"),
                            client_tls,
                            audio,
                        )
                        for index, kind in enumerate(kinds)
                    ),
                    return_exceptions=True,
                )
                failures += [f"{kind}: {o!r}" for kind, o in zip(kinds, outcomes, strict=True) if o is not None]
                settle = max(settle, await leaks.settled(plain, secure))
            texts = await _sessions(dialect, plain.port, secure.port, client_tls, audio)
            await leaks.settled(plain, secure)
    return Figures(dialect, plan, time.perf_counter() - started, settle, watch.crashes, failures, texts)


async def _sessions(dialect: str, port: int, tls_port: int, tls: ssl.SSLContext, audio: np.ndarray) -> list[str]:
    """One real session of ``audio`` on the plain server and one on the TLS server."""
    if dialect == "wyoming":
        return [await wyoming_session(port, audio), await wyoming_session(tls_port, audio)]
    session = openai_session if dialect == "openai" else vllm_session
    path = OPENAI_PATH if dialect == "openai" else VLLM_PATH
    return [
        await session(f"ws://127.0.0.1:{port}{path}", None, audio),
        await session(f"wss://localhost:{tls_port}{path}", tls, audio),
    ]


def _check(figures: Figures) -> None:
    assert not figures.crashes, "\n".join(figures.crashes[:5])
    assert not figures.failures, "\n".join(figures.failures[:5])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_abrupt_disconnects_leave_nothing_behind_and_the_server_still_transcribes(dialect: str, tmp_path: Path) -> None:
    batch = 50
    plan = _plan(dialect, DISCONNECTS)
    figures = asyncio.run(_disconnects(dialect, FakeTickEngine(), plan, self_signed(tmp_path), TONE, batch))
    print(f"\n{figures.line(batch)}")
    _check(figures)
    assert figures.texts == [TICKS, TICKS]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_abrupt_disconnects_mid_speech_leave_the_builtin_engine_transcribing(
    dialect: str,
    tmp_path: Path,
    engine: StreamingEngine,
    fixture_audio: dict[str, np.ndarray],
    speech: dict[str, Fixture],
) -> None:
    batch = 10
    plan = _plan(dialect, max(len(CUTS[dialect]), DISCONNECTS // 10))
    audio = fixture_audio[PHRASE]
    figures = asyncio.run(_disconnects(dialect, engine, plan, self_signed(tmp_path), audio, batch))
    print(f"\n{figures.line(batch)}")
    _check(figures)
    assert len(figures.texts) == 2
    for text in figures.texts:
        assert_recognized(speech[PHRASE], text)
