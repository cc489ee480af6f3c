"""The long form of the soaks (``make soak``): ``python -m tests.soak [--minutes N] [--audio-minutes N]
[--sessions N] [--which controller,serve,vllm]``. Prints each soak's slopes and bounds; exits 1 if any failed."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from tests.soak.controller import soak_controller
from tests.soak.sampling import SoakResult
from tests.soak.serve import CONCURRENT, soak_builtin
from tests.soak.vllm import soak_vllm

SOAKS = ("controller", "serve", "vllm")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=30.0, help="wall minutes of each serve soak (%(default)s)")
    parser.add_argument(
        "--audio-minutes", type=float, default=60.0, help="minutes of speech the controller soak is fed (%(default)s)"
    )
    parser.add_argument(
        "--sessions", type=int, default=CONCURRENT, help="sessions open at once in the serve soaks (%(default)s)"
    )
    parser.add_argument("--which", default=",".join(SOAKS), help="soaks to run, comma-separated (%(default)s)")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.which.split(",") if name.strip()]
    if unknown := sorted(set(chosen) - set(SOAKS)):
        parser.error(f"--which: unknown soak {', '.join(unknown)}; choose from {', '.join(SOAKS)}")
    results = [asyncio.run(_run(name, args)) for name in chosen]
    for result in results:
        print(result.report(), flush=True)
    return 0 if all(result.passed for result in results) else 1


async def _run(name: str, args: argparse.Namespace) -> SoakResult:
    def progress(line: str) -> None:
        print(f"[{name}] {line}", flush=True)

    if name == "controller":
        with tempfile.TemporaryDirectory() as folder:
            return await soak_controller(args.audio_minutes, Path(folder) / "history.sqlite3", progress)
    if name == "serve":
        return await soak_builtin(args.minutes, progress, args.sessions)
    return await soak_vllm(args.minutes, progress, args.sessions)


if __name__ == "__main__":
    sys.exit(main())
