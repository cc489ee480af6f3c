"""Abrupt disconnects against the ``voxdesk serve`` servers, in-process on real loopback
sockets: ``VOXDESK_DISCONNECTS`` per dialect (50 in ``make test``, 1,000 in ``make soak``),
spread over the moments a client can vanish (mid-handshake, mid-append, mid-commit, while
deltas flush, mid-TLS-handshake), 50 at a time.

After each batch of 50: no crash (nothing logged at ERROR, nothing reached the event loop's
exception handler), the servers hold no connection or session, their gauges read zero, and the
process's asyncio tasks and open descriptors are back to what they were before the first cut.
Then one real session on each server still gets its text. The engine is FakeTickEngine (one
"tick " per 80 ms of audio): the test is about the server, and thousands of sessions on
Whisper would take hours on two cores.
"""

from __future__ import annotations

import asyncio
import random
import ssl
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.fuzz.counts import DISCONNECTS, SEED
from tests.fuzz.cuts import CUTS, run_cut
from tests.fuzz.rig import (
    OPENAI_PATH,
    VLLM_PATH,
    CrashWatch,
    LeakWatch,
    openai_session,
    running,
    self_signed,
    vllm_session,
    wyoming_session,
)
from voxdesk.engine.testing import FakeTickEngine

BATCH = 50
TICKS = "tick " * 12  # one second of audio


@pytest.mark.parametrize("dialect", ["vllm", "openai", "wyoming"])
def test_abrupt_disconnects_leave_nothing_behind_and_the_server_still_transcribes(dialect: str, tmp_path: Path) -> None:
    cuts = CUTS[dialect]
    kinds = list(cuts)
    rng = random.Random(f"{SEED}:disconnects:{dialect}")
    plan = [kinds[index % len(kinds)] for index in range(DISCONNECTS)]
    rng.shuffle(plan)
    tls_files = self_signed(tmp_path)
    client_tls = ssl.create_default_context(cafile=str(tls_files.cert))

    async def scenario() -> tuple[list[str], list[str], float, list[str]]:
        watch = CrashWatch()
        with watch.watching():
            async with (
                running(dialect, FakeTickEngine()) as plain,
                running(dialect, FakeTickEngine(), None if dialect == "wyoming" else tls_files) as secure,
            ):
                leaks = LeakWatch()
                leaks.baseline()
                settle = 0.0
                failures = []
                for start in range(0, len(plan), BATCH):
                    batch = plan[start : start + BATCH]
                    outcomes = await asyncio.gather(
                        *(
                            run_cut(
                                cuts[kind],
                                secure.port if kind == "mid-TLS-handshake" else plain.port,
                                random.Random(f"{SEED}:{dialect}:{start + index}"),
                                client_tls,
                            )
                            for index, kind in enumerate(batch)
                        ),
                        return_exceptions=True,
                    )
                    failures += [f"{kind}: {o!r}" for kind, o in zip(batch, outcomes, strict=True) if o is not None]
                    settle = max(settle, await leaks.settled(plain, secure))
                texts = await _sessions(dialect, plain.port, secure.port, client_tls)
                await leaks.settled(plain, secure)
        return failures, watch.crashes, settle, texts

    started = time.perf_counter()
    failures, crashes, settle, texts = asyncio.run(scenario())
    seconds = time.perf_counter() - started
    by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted(Counter(plan).items()))
    print(
        f"\n{dialect}: {len(plan)} abrupt disconnects ({by_kind}) in {seconds:.1f} s: {len(crashes)} crashes, "
        f"{len(failures)} failed cuts, no leak (back to baseline within {settle:.2f} s of each batch of {BATCH}); "
        f"then {len(texts)} real sessions gave {texts}"
    )
    assert not crashes, "\n".join(crashes[:5])
    assert not failures, "\n".join(failures[:5])
    assert texts and all(text == TICKS for text in texts), texts


async def _sessions(dialect: str, port: int, tls_port: int, tls: ssl.SSLContext) -> list[str]:
    """One real session on the plain server and one on the TLS server (Wyoming: the plain one twice)."""
    if dialect == "wyoming":
        return [await wyoming_session(port), await wyoming_session(tls_port)]
    if dialect == "openai":
        return [
            await openai_session(f"ws://127.0.0.1:{port}{OPENAI_PATH}"),
            await openai_session(f"wss://localhost:{tls_port}{OPENAI_PATH}", tls),
        ]
    return [
        await vllm_session(f"ws://127.0.0.1:{port}{VLLM_PATH}"),
        await vllm_session(f"wss://localhost:{tls_port}{VLLM_PATH}", tls),
    ]
