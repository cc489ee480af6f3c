"""``--mode`` and ``--vocabulary`` of ``voxdesk transcribe``: the transcript written by a mode."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.settings import load_settings
from voxdesk.app.writing.modes import DEFAULT_MODES, Mode, mode_named
from voxdesk.app.writing.reports import written_report
from voxdesk.app.writing.user_mode import user_mode
from voxdesk.app.writing.vocabulary import VocabularyEntry, read_vocabulary_file

__all__ = [
    "add_writing_arguments",
    "decoder_vocabulary",
    "mode_argument",
    "transcript_mode",
    "transcript_writer",
    "vocabulary_file",
]


def mode_argument(text: str) -> Mode:
    """A built-in mode by name."""
    mode = mode_named(text)
    if mode is None:
        known = ", ".join(m.name for m in DEFAULT_MODES)
        raise argparse.ArgumentTypeError(f"unknown mode {text!r} (the modes: {known})")
    return mode


def vocabulary_file(text: str) -> list[VocabularyEntry]:
    """The entries of a vocabulary file; a file that cannot be read, is not UTF-8 or has a bad line is refused."""
    try:
        entries, problems = read_vocabulary_file(Path(text))
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"{text}: no such file") from None
    except UnicodeDecodeError as error:
        where = f"byte 0x{error.object[error.start]:02x} at offset {error.start}"
        raise argparse.ArgumentTypeError(f"{text}: not UTF-8 text ({where})") from None
    except OSError as error:
        raise argparse.ArgumentTypeError(f"{text}: cannot be read ({error.strerror})") from None
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise argparse.ArgumentTypeError(problems[0] + more)
    return entries


def add_writing_arguments(parser: argparse.ArgumentParser) -> None:
    """``--mode NAME`` and ``--vocabulary FILE`` for ``voxdesk transcribe``."""
    group = parser.add_argument_group("writing (the transcript printed and saved)")
    names = ", ".join(mode.name for mode in DEFAULT_MODES)
    group.add_argument(
        "--mode",
        type=mode_argument,
        metavar="NAME",
        help=f"write each utterance as this mode does ({names}), with the vocabulary and replacements "
        "of settings.toml's [writing]",
    )
    group.add_argument(
        "--vocabulary",
        type=vocabulary_file,
        metavar="FILE",
        help="write these words and phrases right (one a line: 'Xochitl = so chee tl, ...'): the built-in "
        "engine is biased towards them as it streams the file, and near misses are corrected after; "
        "without --mode, in the plain mode",
    )


def transcript_mode(args: argparse.Namespace) -> Mode | None:
    """The mode ``--mode`` and ``--vocabulary`` ask for (the settings' vocabulary and
    replacements in it); ``None`` when neither is given."""
    if args.mode is None and args.vocabulary is None:
        return None
    settings, warnings = load_settings()
    mode, problems = user_mode(settings.writing, args.mode.name if args.mode else "plain")
    for warning in warnings + problems:
        print(f"voxdesk: warning: {warning}", file=sys.stderr)
    return mode.adding(args.vocabulary or ())


def decoder_vocabulary(args: argparse.Namespace, mode: Mode | None) -> tuple[str, ...]:
    """The words the engine is biased towards: ``--vocabulary``'s first (the most relevant to
    this run), then the rest of the mode's."""
    if mode is None:
        return ()
    given = [entry.text for entry in args.vocabulary or ()]
    return tuple(given + [entry.text for entry in mode.vocabulary if entry.text not in given])


def transcript_writer(mode: Mode | None) -> Callable[[TranscriptionReport], TranscriptionReport] | None:
    """What writes a finished report in ``mode``; ``None`` for no mode."""
    if mode is None:
        return None
    return lambda report: written_report(report, mode)
