"""``voxdesk history …`` and the history options of ``voxdesk transcribe``."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from pathlib import Path
from typing import TextIO

from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.history.export import (
    FORMATS,
    ExportError,
    export_session,
    format_for_path,
    parse_format,
    vtt_time,
)
from voxdesk.app.history.recording import record_report, report_session, write_transcript
from voxdesk.app.history.store import NOT_RECORDED, HistoryStore
from voxdesk.app.llm.client import LlmError
from voxdesk.app.llm.rewrite import rewrite
from voxdesk.app.settings import load_settings
from voxdesk.app.writing.user_mode import user_mode
from voxdesk.cli.arg_types import COUNT
from voxdesk.cli.writing import add_llm_arguments, mode_argument, transcript_llm
from voxdesk.engine.errors import VoxdeskError

__all__ = [
    "OutputPlan",
    "add_history_parser",
    "add_transcribe_history_arguments",
    "open_store",
    "plan_outputs",
    "run_history",
    "save_transcription",
]

OutputPlan = list[tuple[Path, tuple[Path, str] | None]]
"""Each input file with where its transcript goes and in which format (``None``: nowhere)."""


def open_store(path: Path | None = None) -> HistoryStore:
    """The history store, honouring the user's ``[history]`` settings (keep, retention_days)."""
    settings, warnings = load_settings()
    for warning in warnings:
        print(f"voxdesk: warning: {warning}", file=sys.stderr)
    return HistoryStore.open(path, keep=settings.history.keep, retention_days=settings.history.retention_days)


# voxdesk transcribe ----------------------------------------------------------------------------


def add_transcribe_history_arguments(parser: argparse.ArgumentParser) -> None:
    """``--output FILE``, ``--output-dir DIR``, ``--format`` and ``--no-history`` for ``voxdesk transcribe``."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--output", "-o", type=Path, metavar="FILE", help="also write the transcript to FILE (.txt, .srt, .vtt, .json)"
    )
    where.add_argument(
        "--output-dir", type=Path, metavar="DIR", help="write one transcript per file into DIR, named after the file"
    )
    parser.add_argument(
        "--format", "-f", choices=FORMATS, help="transcript format (default: --output's extension, else txt)"
    )
    parser.add_argument("--no-history", action="store_true", help="do not record this transcription in the history")


def plan_outputs(args: argparse.Namespace) -> OutputPlan:
    """Where each file's transcript goes; fails before transcribing on an output we cannot write."""
    files: list[Path] = args.file
    if args.output is not None:
        if len(files) > 1:
            raise ExportError("--output takes one file; with several, use --output-dir")
        return [(files[0], (args.output, args.format or format_for_path(args.output)))]
    if args.output_dir is None:
        if args.format:
            raise ExportError("--format needs --output or --output-dir")
        return [(path, None) for path in files]
    format_ = args.format or "txt"
    targets = [args.output_dir / f"{path.stem}.{format_}" for path in files]
    clashes = sorted({str(t) for t in targets if targets.count(t) > 1})
    if clashes:
        raise ExportError(f"several files would be written to {clashes[0]}: give them different names")
    args.output_dir.mkdir(parents=True, exist_ok=True)
    return [(path, (target, format_)) for path, target in zip(files, targets, strict=True)]


def save_transcription(
    args: argparse.Namespace,
    path: Path,
    output: tuple[Path, str] | None,
    report: TranscriptionReport,
    *,
    engine: str,
    model: str,
) -> None:
    """Record the transcription in the history (unless ``--no-history`` or history is off) and write ``output``;
    ``engine`` and ``model`` name what transcribed it (:func:`voxdesk.app.engines.model_name`).

    A partial report (stopped early) is recorded as a session without an end time.
    """
    source = str(path.resolve())
    session_id = NOT_RECORDED
    if not args.no_history and report.utterances:
        try:
            with open_store() as store:
                session_id = record_report(store, report, engine=engine, model=model, source=source)
        except (VoxdeskError, sqlite3.Error, OSError) as error:  # the transcript itself is still good
            print(f"voxdesk: warning: not recorded in the history: {error}", file=sys.stderr)
    if output is not None:
        session, utterances = report_session(report, engine=engine, model=model, source=source, session_id=session_id)
        write_transcript(output[0], session, utterances, output[1])


# voxdesk history -------------------------------------------------------------------------------


def add_history_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``voxdesk history`` and its subcommands."""
    history = commands.add_parser(
        "history",
        help="list, search, export and delete past transcripts",
        description="The transcript history: every live session and transcribed file, stored on this computer.",
    )
    actions = history.add_subparsers(dest="history_command", metavar="ACTION")
    listing = actions.add_parser("list", help="sessions, newest first")
    listing.add_argument("--limit", type=COUNT, default=20, help="how many sessions (default: %(default)s)")
    search = actions.add_parser("search", help="utterances containing all WORDS, newest first")
    search.add_argument("words", nargs="+", metavar="WORDS")
    search.add_argument("--limit", type=COUNT, default=50, help="how many results (default: %(default)s)")
    export = actions.add_parser("export", help="one session as text, subtitles or JSON")
    export.add_argument("session", type=COUNT, metavar="SESSION", help="session id (see `voxdesk history list`)")
    export.add_argument("--format", "-f", choices=FORMATS, help="default: from --output's extension, else txt")
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help="write to FILE instead of standard output")
    rewrite = actions.add_parser(
        "rewrite",
        help="one session again through a mode's cleanup, or an edit, by the LLM (the history is left as it is)",
    )
    rewrite.add_argument("session", type=COUNT, metavar="SESSION", help="session id (see `voxdesk history list`)")
    rewrite.add_argument(
        "--mode", type=mode_argument, default=mode_argument("clean"), metavar="NAME", help="default: clean"
    )
    rewrite.add_argument(
        "--edit", metavar="INSTRUCTION", help='instead: rewrite each utterance so, e.g. "make it formal"'
    )
    rewrite.add_argument(
        "--utterance", type=COUNT, metavar="N", help="only the session's Nth utterance (from 1, as listed)"
    )
    add_llm_arguments(rewrite)
    delete = actions.add_parser("delete", help="delete one session, or everything with --all --yes")
    target = delete.add_mutually_exclusive_group(required=True)
    target.add_argument("session", type=COUNT, nargs="?", metavar="SESSION", help="session id")
    target.add_argument("--all", action="store_true", help="delete every session (needs --yes)")
    delete.add_argument("--yes", action="store_true", help="with --all: really delete everything")
    history.set_defaults(history_parser=history)


def run_history(args: argparse.Namespace) -> int:
    """Carry out a ``voxdesk history`` command; returns the exit status."""
    if args.history_command is None:
        args.history_parser.print_help()
        return 0
    try:
        with open_store() as store:
            return _HANDLERS[args.history_command](store, args, sys.stdout)
    except BrokenPipeError:
        raise  # the reader of the output went away: voxdesk's main ends quietly
    except (VoxdeskError, OSError) as error:
        print(f"voxdesk: error: {error}", file=sys.stderr)
        return 1
    except sqlite3.Error as error:
        print(f"voxdesk: error: the history database failed: {error}", file=sys.stderr)
        return 1


def _list(store: HistoryStore, args: argparse.Namespace, out: TextIO) -> int:
    summaries = store.sessions(limit=args.limit)
    if not summaries:
        out.write("No sessions in the history.\n")
        return 0
    out.write(f"{'ID':>5}  {'STARTED':16}  {'KIND':4}  {'UTTERANCES':>10}  TEXT\n")
    for summary in summaries:
        started = summary.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
        count = summary.utterance_count
        preview = f"(partial) {summary.preview}" if summary.partial else summary.preview
        out.write(f"{summary.id:>5}  {started:16}  {summary.kind:4}  {count:>10}  {preview}\n")
    return 0


def _search(store: HistoryStore, args: argparse.Namespace, out: TextIO) -> int:
    hits = store.search(" ".join(args.words), limit=args.limit)
    if not hits:
        out.write("No matches.\n")
        return 0
    for hit in hits:
        started = hit.session.started_at.astimezone().strftime("%Y-%m-%d %H:%M")
        out.write(f"session {hit.session.id:>4}  {started}  {vtt_time(hit.utterance.start_s)}  {hit.utterance.text}\n")
    return 0


def _export(store: HistoryStore, args: argparse.Namespace, out: TextIO) -> int:
    if args.format:
        format_ = parse_format(args.format)
    else:
        format_ = format_for_path(args.output) if args.output is not None else "txt"
    session = store.session(args.session)
    text = export_session(session, store.utterances(args.session), format_)
    if args.output is None:
        out.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


def _rewrite(store: HistoryStore, args: argparse.Namespace, out: TextIO) -> int:
    utterances = list(enumerate(store.utterances(args.session), start=1))
    if args.utterance is not None:
        if args.utterance > len(utterances):
            print(
                f"voxdesk: session {args.session} has {len(utterances)} utterances, no number {args.utterance}",
                file=sys.stderr,
            )
            return 2
        utterances = utterances[args.utterance - 1 : args.utterance]
    settings, _ = load_settings()
    mode, _ = user_mode(settings.writing, args.mode.name)
    llm, budget_s = transcript_llm(args)

    async def rewrite_all() -> None:
        # One loop for the whole run: an in-process model is bound to the loop it loaded on.
        try:
            await llm.prepare()
        except LlmError as error:
            print(f"voxdesk: warning: {error}; every utterance written as it was", file=sys.stderr)
        for number, utterance in utterances:
            written = await rewrite(llm, utterance.text, budget_s, mode, args.edit or "")
            if written.note:
                print(f"voxdesk: warning: utterance {number}: {written.note}; written as it was", file=sys.stderr)
            out.write(written.text + "\n")

    asyncio.run(rewrite_all())
    return 0


def _delete(store: HistoryStore, args: argparse.Namespace, out: TextIO) -> int:
    if not args.all:
        store.delete_session(args.session)
        out.write(f"Deleted session {args.session}.\n")
        return 0
    sessions, utterances = store.counts()
    where = store.path or "the history"
    if not args.yes:
        print(
            f"voxdesk: would delete all {sessions} sessions ({utterances} utterances) from {where}; "
            "run again with --all --yes to do it",
            file=sys.stderr,
        )
        return 1
    store.delete_all()
    out.write(f"Deleted all {sessions} sessions ({utterances} utterances).\n")
    return 0


_HANDLERS = {"list": _list, "search": _search, "export": _export, "delete": _delete, "rewrite": _rewrite}
