"""``--mode``, ``--vocabulary`` and ``--llm-*`` of ``voxdesk transcribe``: the transcript written
by a mode, and cleaned up by the LLM where the mode asks for that."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from voxdesk.app.api_keys import KeyStore
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.llm.cleanup import cleaned_report
from voxdesk.app.llm.client import Llm, LlmError
from voxdesk.app.llm.runtime import llm_for
from voxdesk.app.settings import LLM_RUNTIMES, load_settings
from voxdesk.app.writing.modes import DEFAULT_MODES, CleanupStyle, Mode, mode_named
from voxdesk.app.writing.reports import written_report
from voxdesk.app.writing.user_mode import user_mode
from voxdesk.app.writing.vocabulary import VocabularyEntry, read_vocabulary_file

__all__ = [
    "add_llm_arguments",
    "add_writing_arguments",
    "decoder_vocabulary",
    "mode_argument",
    "transcript_llm",
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
    add_llm_arguments(parser)


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """``--llm-runtime``, ``--llm-url``, ``--llm-model`` and ``--llm-api-key``: the LLM one run asks
    (default: the settings')."""
    llm = parser.add_argument_group("the LLM (for modes that clean up their text, such as clean)")
    llm.add_argument(
        "--llm-runtime",
        choices=LLM_RUNTIMES,
        help="server: an OpenAI-compatible server at --llm-url; vllm: --llm-model loaded by vLLM in this process",
    )
    llm.add_argument("--llm-url", metavar="URL", help="an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1")
    llm.add_argument(
        "--llm-model",
        metavar="NAME",
        help="the server's model (default: its only one); with --llm-runtime vllm, a folder or hub id to load",
    )
    llm.add_argument("--llm-api-key", metavar="KEY", help="its API key (default: the one kept by the settings)")


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


def transcript_writer(
    mode: Mode | None, args: argparse.Namespace
) -> Callable[[TranscriptionReport], Coroutine[Any, Any, TranscriptionReport]] | None:
    """What writes a finished report in ``mode`` and has the LLM clean it up where the mode
    asks for that (an utterance it could not clean up is written as heard, with a warning);
    ``None`` for no mode."""
    if mode is None:
        return None

    async def write(report: TranscriptionReport) -> TranscriptionReport:
        written = written_report(report, mode)
        if mode.cleanup is CleanupStyle.NONE:
            return written
        llm, budget_s = transcript_llm(args)
        try:
            await llm.prepare()
        except LlmError as error:
            print(f"voxdesk: warning: {error}; written as heard", file=sys.stderr)
            return written
        cleaned, notes = await cleaned_report(written, mode, llm, budget_s)
        for note in notes:
            print(f"voxdesk: warning: {note}; written as heard", file=sys.stderr)
        return cleaned

    return write


def transcript_llm(args: argparse.Namespace) -> tuple[Llm, float]:
    """The LLM the ``--llm-*`` options name, else the ``[actions]`` settings' (the key from the
    system keyring where it is kept), and its time budget."""
    actions = load_settings()[0].actions
    chosen = dataclasses.replace(
        actions,
        llm_runtime=args.llm_runtime or actions.llm_runtime,
        llm_url=args.llm_url or actions.llm_url,
        llm_model=args.llm_model or actions.llm_model,
        llm_api_key=args.llm_api_key or actions.llm_api_key or _stored_key(),
    )
    return llm_for(chosen), actions.llm_timeout_s


def _stored_key() -> str:
    store = KeyStore()
    if not store.available:
        return ""
    try:
        return store.get("actions.llm_api_key")
    except Exception:  # a keyring that fails costs only the key: the server may not need one
        return ""
