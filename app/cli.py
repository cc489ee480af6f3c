"""The ``voxdesk`` command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from app.audio_file import read_audio
from app.terminal import LiveTranscriptPrinter, event_to_json, print_summary
from app.transcription import TimedEvent, transcribe_audio
from engine import ENGINE_NAMES, create_engine
from engine.errors import VoxdeskError

__all__ = ["main"]


def _version() -> str:
    try:
        return version("voxdesk")
    except PackageNotFoundError:
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``voxdesk`` and its subcommands."""
    parser = argparse.ArgumentParser(prog="voxdesk", description="Voxdesk, a streaming desktop voice assistant.")
    parser.add_argument("--version", action="version", version=f"voxdesk {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    transcribe = commands.add_parser(
        "transcribe",
        help="stream an audio file through an engine and print the text as it comes",
        description="Stream an audio file (WAV, FLAC, OGG, MP3; any rate and channel count) through an "
        "engine at real-time pace, showing committed and provisional text live, then the final "
        "transcript and latency figures.",
    )
    transcribe.add_argument("file", type=Path, help="audio file to transcribe")
    transcribe.add_argument(
        "--engine", choices=ENGINE_NAMES, default="builtin", help="speech engine (default: %(default)s)"
    )
    transcribe.add_argument(
        "--fast", action="store_true", help="feed audio as fast as possible instead of in real time"
    )
    transcribe.add_argument("--json", action="store_true", help="print one JSON event per line, then a summary line")
    return parser


async def _transcribe(args: argparse.Namespace) -> int:
    audio = read_audio(args.file)
    engine = create_engine(args.engine)
    await engine.load()
    try:
        if args.json:
            report = await transcribe_audio(engine, audio, not args.fast, _print_event)
            print(json.dumps({"type": "summary", "text": report.text, **report.summary()}), flush=True)
        else:
            printer = LiveTranscriptPrinter(sys.stdout, sys.stdout.isatty())
            report = await transcribe_audio(engine, audio, not args.fast, printer)
            print_summary(report, sys.stdout)
    finally:
        await engine.aclose()
    return 1 if report.errors else 0


def _print_event(timed: TimedEvent) -> None:
    print(event_to_json(timed), flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run ``voxdesk``; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        print("\nThe desktop window is not part of this build yet; use `voxdesk transcribe FILE`.")
        return 0
    try:
        return asyncio.run(_transcribe(args))
    except VoxdeskError as exc:
        print(f"voxdesk: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
