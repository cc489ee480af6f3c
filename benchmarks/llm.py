"""What the assistant's LLM adds: ``python -m benchmarks.llm`` (in ``.venv-vllm``).

The tiny chat model (tests/llm_support.py) on this machine, in each runtime: vLLM's
OpenAI-compatible server, reached as Voxdesk reaches any server (the official SDK, streamed),
and vLLM in this process (``AsyncLLM``, ``[actions] llm_runtime = "vllm"``). For a dictated
utterance, end of speech to text in the app: the clean mode (written, then cleaned up by the
LLM) beside the prose mode (written only), so the difference is what cleanup adds; then the LLM
picking a command (one tool per command). Per use: median and p90 of the whole time, of the
first token, and the tokens in and out.

On another server: ``--url http://127.0.0.1:11434/v1 --model llama3.2`` (nothing is started,
and only that server is measured).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, StaticProbe
from voxdesk.app.actions.center import ActionCenter
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.llm_fallback import SYSTEM_PROMPT, build_tools
from voxdesk.app.actions.services import Services
from voxdesk.app.llm.cleanup import CLEANUP_SCHEMA, cleanup_messages
from voxdesk.app.llm.client import Llm, LlmReply, OpenAiCompatibleLlm
from voxdesk.app.settings import ActionSettings, WritingSettings
from voxdesk.app.writing.modes import CleanupStyle

UTTERANCES = [
    "um so I think we should uh meet at three thirty pm comma not four",
    "send the report to Priya by Friday I mean Thursday",
    "so basically the build is green again after the fix",
    "can you uh remind everyone that the office is closed on Monday",
]
ROUNDS = 10


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"{statistics.median(ordered) * 1000:6.0f} {p90 * 1000:6.0f}"


async def _dictation_ms(llm: Llm, mode: str) -> list[float]:
    """Seconds from a final utterance to its keys, each utterance ROUNDS times, in ``mode``."""
    keyboard = RecordingKeyboard()
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard, focus=StaticProbe(None)
    )
    settings = ActionSettings(mode="dictation", llm_timeout_s=30)
    with tempfile.TemporaryDirectory() as folder:
        center = ActionCenter(
            settings,
            services,
            commands=CommandSource(user_path=Path(folder) / "c.toml"),
            writing=WritingSettings(mode=mode),
            llm=llm,
        )
        times = []
        for _ in range(ROUNDS):
            for text in UTTERANCES:
                started = time.perf_counter()
                record = await center.handle_utterance(text)
                times.append(time.perf_counter() - started)
                if record is None or "not cleaned up" in record.message:
                    raise SystemExit(f"benchmarks.llm: {mode}: {record.message if record else 'no record'}")
    return times


async def _replies(llm: Llm, tools: bool) -> list[LlmReply]:
    with tempfile.TemporaryDirectory() as folder:
        commands = CommandSource(user_path=Path(folder) / "c.toml").commands()
    replies = []
    for _ in range(ROUNDS):
        for text in UTTERANCES:
            if tools:
                messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
                replies.append(await llm.chat(messages, 30, tools=build_tools(commands)))
            else:
                messages = cleanup_messages(text, CleanupStyle.LIGHT)
                replies.append(await llm.chat(messages, 30, schema=CLEANUP_SCHEMA, max_tokens=64 + 2 * len(text)))
    return replies


def _reply_row(name: str, replies: list[LlmReply]) -> str:
    firsts = [r.first_token_s for r in replies if r.first_token_s is not None]
    tokens_in = statistics.median(r.tokens_in or 0 for r in replies)
    tokens_out = statistics.median(r.tokens_out or 0 for r in replies)
    totals = _quantiles([r.total_s for r in replies])
    return f"| {name} | {totals} | {_quantiles(firsts)} | {tokens_in:.0f} | {tokens_out:.0f} |"


async def measure(name: str, llm: Llm) -> None:
    """Print one runtime's figures."""
    await llm.chat([{"role": "user", "content": "hello"}], 600)  # warm up: the first grammar use compiles
    prose, clean = await _dictation_ms(llm, "prose"), await _dictation_ms(llm, "clean")
    print(f"\n## {name}: {llm.where}")
    print(f"\nEnd of speech to keys, {len(prose)} utterances each (median, p90 in ms):")
    print(f"  prose (no LLM):      {_quantiles(prose)}")
    print(f"  clean (LLM cleanup): {_quantiles(clean)}")
    print(f"  added by cleanup:    {(statistics.median(clean) - statistics.median(prose)) * 1000:6.0f} (medians)")
    print("\n| use | total ms (median p90) | first token ms (median p90) | tokens in | tokens out |")
    print("|---|---|---|---|---|")
    print(_reply_row("cleanup (JSON schema)", await _replies(llm, tools=False)))
    print(_reply_row("pick a command (tools)", await _replies(llm, tools=True)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.llm", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--url", help="an OpenAI-compatible server already running (default: start vLLM's on the tiny model)"
    )
    parser.add_argument("--model", default="", help="its model (default: the server's only one)")
    args = parser.parse_args(argv)
    if args.url:
        asyncio.run(measure("server", OpenAiCompatibleLlm(args.url, args.model)))
        return 0
    from tests.llm_support import start_llm_server, tiny_text_model
    from tests.vllm_support import stop
    from voxdesk.app.llm.in_process import InProcessLlm

    started = time.perf_counter()
    process, url = start_llm_server()
    print(f"vLLM's server on the tiny chat model, healthy after {time.perf_counter() - started:.0f} s", file=sys.stderr)
    try:
        asyncio.run(measure("server", OpenAiCompatibleLlm(url)))
    finally:
        stop(process)
    # The environment the tests load it in (tests/conftest.py in_process_llm): its own KV cache size.
    os.environ.pop("VLLM_CPU_KVCACHE_SPACE", None)
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"

    async def in_process() -> None:
        llm = InProcessLlm(tiny_text_model())
        started = time.perf_counter()
        await llm.prepare()
        print(f"vLLM in this process on the tiny chat model, loaded in {time.perf_counter() - started:.0f} s")
        try:
            await measure("in-process", llm)
        finally:
            await llm.aclose()

    asyncio.run(in_process())
    return 0


if __name__ == "__main__":
    sys.exit(main())
