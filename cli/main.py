"""The ``voxdesk`` command line."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

import numpy as np

from voxdesk.app.engines import LOCAL_ENGINES, build_engine, model_name
from voxdesk.app.files.job import FileTranscription
from voxdesk.app.files.reading import AudioFileError, read_audio
from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport
from voxdesk.app.log import LEVELS, configure_logging
from voxdesk.app.settings import SERVER_DIALECTS, EngineSettings
from voxdesk.cli.arg_types import COUNT, NON_NEGATIVE_SECONDS, PORT, POSITIVE_SECONDS, readable_file, tls_problem
from voxdesk.cli.commands import add_commands_parser, run_commands
from voxdesk.cli.history import (
    add_history_parser,
    add_transcribe_history_arguments,
    plan_outputs,
    run_history,
    save_transcription,
)
from voxdesk.cli.models import add_models_parser, run_models
from voxdesk.cli.server_urls import ServerUrls
from voxdesk.cli.speech import add_speech_parsers, run_say, run_voices
from voxdesk.cli.terminal import LiveTranscriptPrinter, ProgressBar, event_to_json, print_summary
from voxdesk.cli.vllm_options import add_vllm_arguments, unrecognized, vllm_settings, wants_vllm
from voxdesk.cli.writing import (
    add_writing_arguments,
    decoder_vocabulary,
    transcript_mode,
    transcript_writer,
    vocabulary_file,
)
from voxdesk.cli.wyoming import add_wyoming_arguments, wyoming_config, wyoming_server
from voxdesk.engine import EngineKind, StreamingEngine
from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.session import SessionOptions, TakesSessionOptions
from voxdesk.engine.vllm.engine import VllmSettings
from voxdesk.engine.whisper.models import BUNDLED_MODEL, DEVICES
from voxdesk.server.health import EngineStopped
from voxdesk.server.listener import Listener
from voxdesk.server.realtime.server import RealtimeServer, ServerConfig

__all__ = ["main"]

logger = logging.getLogger("voxdesk.cli")


def _version() -> str:
    try:
        return version("voxdesk")
    except PackageNotFoundError:
        return "0+unknown"


def build_parser(vllm: bool = False) -> argparse.ArgumentParser:
    """The argument parser of ``voxdesk`` and its subcommands; with ``vllm``, ``serve`` and
    ``transcribe`` take all of vLLM's engine arguments (this imports vllm).

    Raises:
        EngineUnavailable: ``vllm`` and vllm is not installed.
    """
    parser = argparse.ArgumentParser(
        prog="voxdesk",
        description="Voxdesk, a streaming desktop voice assistant. Without a command it opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"voxdesk {_version()}")
    parser.add_argument(
        "--log-level",
        type=str.lower,
        choices=LEVELS,
        help="what to log on stderr (or VOXDESK_LOG; default: info for serve and the window, else warning)",
    )
    parser.add_argument(
        "--engine",
        choices=(*LOCAL_ENGINES, EngineKind.REMOTE),
        help="window: speech engine for this run (overrides settings)",
    )
    parser.add_argument(
        "--server",
        metavar="URL",
        action=ServerUrls,
        help="window: use the /v1/realtime server at URL for this run (several: comma-separated or repeated)",
    )
    parser.add_argument("--device", metavar="NAME", help="window: microphone for this run (as listed in Settings)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    transcribe = commands.add_parser(
        "transcribe",
        help="transcribe audio or video files, as fast as the engine goes",
        description="Transcribe audio files (WAV, FLAC, OGG, MP3, m4a/AAC, Opus; any rate and channel count) "
        "or the audio track of videos (MP4, MKV, WebM) as fast as the engine can, with a progress bar on "
        "a terminal; print each file's transcript and speed. With --realtime the audio is fed at the pace "
        "it would be spoken, showing text live and the latency figures. Ctrl-C stops and keeps what was "
        "transcribed so far (printed, written and recorded as partial).",
    )
    transcribe.add_argument("file", type=Path, nargs="+", metavar="FILE", help="files to transcribe")
    transcribe.add_argument(
        "--engine", choices=LOCAL_ENGINES, default=EngineKind.BUILTIN, help="speech engine (default: %(default)s)"
    )
    pace = transcribe.add_mutually_exclusive_group()
    pace.add_argument(
        "--realtime", action="store_true", help="feed audio at real-time pace, as from a microphone, and show latencies"
    )
    pace.add_argument("--fast", action="store_true", help="as fast as possible (the default; kept for old scripts)")
    transcribe.add_argument("--json", action="store_true", help="print one JSON event per line, then a summary line")
    transcribe.add_argument(
        "--server",
        metavar="URL",
        action=ServerUrls,
        help="use the /v1/realtime server at URL (ws:// or wss://), or a Wyoming one (tcp://); several "
        "servers of one kind (comma-separated or --server repeated) are failed over in that order",
    )
    transcribe.add_argument("--model", default="", help="model to ask the server for, or for --engine vllm to load")
    transcribe.add_argument("--api-key", default=os.environ.get("VOXDESK_API_KEY"), help="bearer key for the server")
    transcribe.add_argument(
        "--dialect",
        choices=SERVER_DIALECTS,
        default="vllm",
        help="the ws:// server's protocol: vLLM's /v1/realtime (voxdesk serve, vllm serve) or an OpenAI Realtime "
        "transcription session (OpenAI's API, voxdesk serve); default: %(default)s",
    )
    add_transcribe_history_arguments(transcribe)
    add_writing_arguments(transcribe)
    _add_whisper_arguments(transcribe)
    add_vllm_arguments(transcribe, server=False, engine_args=vllm)
    _add_serve_parser(commands, vllm)
    add_history_parser(commands)
    add_models_parser(commands)
    add_speech_parsers(commands)
    add_commands_parser(commands)
    return parser


def _add_whisper_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("built-in engine (--engine builtin)")
    group.add_argument(
        "--whisper-model",
        default=BUNDLED_MODEL,
        metavar="MODEL",
        help="tiny.en (bundled, the default), a faster-whisper model name (base.en, small, large-v3, ...) or hub "
        "repository id, downloaded once into the hub cache, or a CTranslate2 Whisper model folder",
    )
    group.add_argument(
        "--device", dest="whisper_device", choices=DEVICES, default="auto", help="where Whisper runs (default: auto)"
    )
    group.add_argument("--language", default="auto", help="Whisper language code, or auto (default: %(default)s)")
    group.add_argument(
        "--task",
        choices=("transcribe", "translate"),
        default="transcribe",
        help="translate: English text from any language (multilingual models; default: %(default)s)",
    )


def _engine_choice(args: argparse.Namespace) -> EngineSettings:
    """The engine ``transcribe`` or ``serve`` runs on: its options as engine settings."""
    whisper = {"whisper_model": args.whisper_model, "device": args.whisper_device, "language": args.language}
    choice = EngineSettings(kind=EngineKind(args.engine), vllm_model=args.model or VllmSettings.model, **whisper)
    if args.command == "transcribe" and args.server:
        server = {"server_url": args.server, "server_dialect": args.dialect, "server_model": args.model}
        choice = dataclasses.replace(choice, kind=EngineKind.REMOTE, api_key=args.api_key or "", **server)
    return choice


def _create_engine(args: argparse.Namespace) -> StreamingEngine:
    """The engine of :func:`_engine_choice`, built by the app's factory."""
    choice = _engine_choice(args)
    vllm = vllm_settings(args, server=args.command == "serve") if choice.kind == EngineKind.VLLM else None
    return build_engine(choice, task=args.task, vllm=vllm)


def _add_serve_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser], vllm: bool) -> None:
    serve = commands.add_parser(
        "serve",
        help="run a headless /v1/realtime server (wire-compatible with vLLM)",
        description="Serve an engine over vLLM's /v1/realtime WebSocket protocol, plus /health, "
        "/v1/models and /metrics. SIGTERM drains open transcriptions before exiting.",
    )
    defaults = ServerConfig()
    serve.add_argument(
        "--engine", choices=LOCAL_ENGINES, default=EngineKind.BUILTIN, help="speech engine (default: %(default)s)"
    )
    serve.add_argument("--model", default="", help="model for --engine vllm (a folder or a model hub id)")
    serve.add_argument(
        "--served-model-name", help="model name clients ask for (default: voxdesk-builtin, or the vLLM model)"
    )
    serve.add_argument("--host", default=defaults.host, help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=PORT, default=defaults.port, help="port, 0-65535 (default: %(default)s)")
    serve.add_argument(
        "--api-key", default=os.environ.get("VOXDESK_API_KEY"), help="require this bearer key (or VOXDESK_API_KEY)"
    )
    serve.add_argument("--ssl-certfile", type=readable_file, help="TLS certificate (PEM) to serve wss://")
    serve.add_argument("--ssl-keyfile", type=readable_file, help="TLS private key (PEM)")
    serve.add_argument(
        "--idle-timeout", type=POSITIVE_SECONDS, default=defaults.idle_timeout, help="seconds (default: %(default)s)"
    )
    serve.add_argument("--max-sessions", type=COUNT, default=defaults.max_sessions, help="concurrent connections")
    serve.add_argument(
        "--max-session-audio",
        type=POSITIVE_SECONDS,
        default=defaults.max_session_audio,
        help="seconds of audio per connection",
    )
    serve.add_argument(
        "--drain-timeout",
        type=NON_NEGATIVE_SECONDS,
        default=defaults.drain_timeout,
        help="on SIGTERM, seconds the running transcriptions may take to end by themselves while /health "
        "answers 503 and no new session is taken (default: %(default)s)",
    )
    serve.add_argument(
        "--shutdown-grace",
        type=NON_NEGATIVE_SECONDS,
        default=defaults.shutdown_grace,
        help="then, seconds to finish the transcriptions still open with the audio received",
    )
    serve.add_argument(
        "--allow-insecure-no-api-key",
        action="store_true",
        help="listen beyond loopback without an API key, and serve --wyoming there (only on a trusted network)",
    )
    serve.add_argument(
        "--vocabulary",
        type=vocabulary_file,
        metavar="FILE",
        help="bias every session of the built-in engine towards these words and phrases (one a line); "
        "an OpenAI-dialect session's transcription prompt adds its own before them",
    )
    add_wyoming_arguments(serve)
    _add_whisper_arguments(serve)
    add_vllm_arguments(serve, server=True, engine_args=vllm)


def _server_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (it comes with vLLM, whose server runs on it):
    socket reads and writes, futures and callbacks in C. Else asyncio's own."""
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        return None
    return cast("Callable[[], asyncio.AbstractEventLoop]", uvloop.new_event_loop)


async def _serve(args: argparse.Namespace) -> int:
    default_name = (
        (args.model or VllmSettings.model) if args.engine == EngineKind.VLLM else ServerConfig.served_model_name
    )
    config = ServerConfig(
        served_model_name=args.served_model_name or default_name,
        host=args.host,
        port=args.port,
        api_key=args.api_key or None,
        ssl_certfile=args.ssl_certfile,
        ssl_keyfile=args.ssl_keyfile,
        allow_insecure_no_api_key=args.allow_insecure_no_api_key,
        idle_timeout=args.idle_timeout,
        max_sessions=args.max_sessions,
        max_session_audio=args.max_session_audio,
        drain_timeout=args.drain_timeout,
        shutdown_grace=args.shutdown_grace,
    )
    engine = _create_engine(args)
    if args.vocabulary:
        if isinstance(engine, TakesSessionOptions):
            engine.session_options = SessionOptions(tuple(entry.text for entry in args.vocabulary))
        else:
            print(
                f"voxdesk serve: warning: the {args.engine} engine takes no vocabulary; --vocabulary is ignored",
                file=sys.stderr,
            )
    server = RealtimeServer(engine, config, loaded=False)  # refuses insecure binds before loading anything
    wyoming = wyoming_config(args)  # the same for Wyoming, which has no authentication at all
    await server.start()  # /health answers 503 until the engine is loaded
    print(
        f"voxdesk serve: loading the engine; port {server.port} answers /health with 503 until ready",
        file=sys.stderr,
        flush=True,
    )
    try:
        await server.load_engine(lambda step, _: logger.info("serve: %s", step))
    except BaseException:
        await server.shutdown()
        raise
    scheme = "wss" if config.ssl_certfile else "ws"
    # Always shown, whatever the log level: it says where to connect (and tests read the port from it).
    print(
        f"voxdesk serve: listening on {scheme}://{config.host}:{server.port}/v1/realtime "
        f"(model {config.served_model_name!r}, engine {args.engine})",
        file=sys.stderr,
        flush=True,
    )
    wyoming_listener = None if wyoming is None else await wyoming_server(args, wyoming, engine, _version())
    stop = asyncio.Event()
    signalled: list[int] = []

    def on_signal(number: int) -> None:
        signalled.append(number)
        stop.set()

    loop = asyncio.get_running_loop()
    for signal_number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signal_number, on_signal, signal_number)
    watch = asyncio.create_task(server.until_engine_stops())
    watch.add_done_callback(lambda _: stop.set())
    await stop.wait()
    stopped = watch.result() if watch.done() and not watch.cancelled() else None
    watch.cancel()
    listeners: list[Listener[Any, Any]] = [server] if wyoming_listener is None else [server, wyoming_listener]
    if stopped is not None:  # its sessions' clients were told: they may leave first (/health answers 503)
        logger.error("serve: %s", stopped)
        await asyncio.gather(*(listener.until_clients_leave() for listener in listeners))
    elif signalled[0] == signal.SIGTERM:  # a load balancer's or an orchestrator's stop: drain first
        logger.info("serve: draining (/health answers 503, no new sessions)")
        await server.drain()
    logger.info("serve: shutting down")
    await asyncio.gather(*(listener.shutdown() for listener in listeners))
    await engine.aclose()
    if stopped is not None:
        raise EngineStopped(f"{stopped}; exiting so that voxdesk serve is restarted")
    return 0


async def _transcribe(args: argparse.Namespace) -> int:
    plan = plan_outputs(args)  # fails on bad --output/--format before loading anything
    mode = transcript_mode(args)
    write, vocabulary = transcript_writer(mode, args), decoder_vocabulary(args, mode)
    engine, model = _create_engine(args), model_name(_engine_choice(args))
    await engine.load()
    status = 0
    try:
        for path, output in plan:
            try:
                audio = read_audio(path, whole=True)  # a file cut short is an error here, not a short transcript
            except AudioFileError as error:
                print(f"voxdesk: error: {error}", file=sys.stderr)
                status = 1
                continue
            if len(plan) > 1 and not args.json:
                print(f"\n==> {path} <==", flush=True)
            report = await _transcribe_file(engine, audio, path, args, write, vocabulary)
            save_transcription(args, path, output, report, engine=engine.name, model=model)
            if report.lost_words:
                status = 1
            if report.partial:
                return 130
    finally:
        await engine.aclose()
    return status


async def _transcribe_file(
    engine: StreamingEngine,
    audio: np.ndarray,
    path: Path,
    args: argparse.Namespace,
    write: Callable[[TranscriptionReport], Coroutine[Any, Any, TranscriptionReport]] | None,
    vocabulary: tuple[str, ...],
) -> TranscriptionReport:
    """One file; Ctrl-C (SIGINT) stops it and returns what was transcribed so far, marked partial.
    With ``write``, the report printed and returned has each final text written by the mode;
    the engine is biased towards ``vocabulary`` where it can be."""
    interactive = sys.stdout.isatty() and not args.json
    bar = ProgressBar(sys.stdout, path.name, enabled=interactive and not args.realtime)
    on_event = _print_event if args.json else LiveTranscriptPrinter(bar, interactive and args.realtime)
    job = FileTranscription(
        engine, audio, realtime=args.realtime, on_progress=bar, on_event=on_event, vocabulary=vocabulary
    )
    loop = asyncio.get_running_loop()

    def interrupt() -> None:
        job.cancel()
        loop.remove_signal_handler(signal.SIGINT)  # a second Ctrl-C quits at once

    loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        report = await job.run()
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        bar.close()
    if write is not None:
        report = await write(report)
    if args.json:
        print(json.dumps({"type": "summary", "text": report.text, **report.summary()}), flush=True)
    else:
        print_summary(report, sys.stdout)
    return report


def _print_event(timed: TimedEvent) -> None:
    print(event_to_json(timed), flush=True)


def main(argv: list[str] | None = None, open_window: Callable[[argparse.Namespace], int] | None = None) -> int:
    """Run ``voxdesk``; returns the process exit status.

    ``open_window`` runs the desktop window (given by ``ui``, which depends on ``app`` and not
    the other way round); without it, ``voxdesk`` with no command prints help. When standard
    output is closed early (``voxdesk history list | head -2``) the rest of the output goes
    nowhere and the status is 141, as for a Unix tool that SIGPIPE ended.
    """
    try:
        try:
            return _main(argv, open_window)
        finally:
            sys.stdout.flush()  # a closed pipe shows here rather than at exit
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        return 128 + signal.SIGPIPE


def _main(argv: list[str] | None, open_window: Callable[[argparse.Namespace], int] | None) -> int:
    try:
        parser = build_parser(vllm=wants_vllm(sys.argv[1:] if argv is None else argv))
    except VoxdeskError as exc:
        print(f"voxdesk: error: {exc}", file=sys.stderr)
        return 1
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _command_parser(parser, args).error(unrecognized(unknown, args))
    if args.command == "serve" and (problem := tls_problem(args.ssl_certfile, args.ssl_keyfile)):
        _command_parser(parser, args).error(problem)  # before the engine loads, naming the file
    if args.command is None:
        if open_window is not None:
            return open_window(args)  # the window sets up its own logging, with a log file
        parser.print_help()
        return 0
    configure_logging(args.log_level, default="INFO" if args.command == "serve" else "WARNING")
    if args.command == "history":
        return run_history(args)
    try:
        if args.command == "models":
            return run_models(args)
        if args.command == "commands":
            return run_commands(args)
        if args.command == "say":
            return run_say(args)
        if args.command == "voices":
            return run_voices(args)
        if args.command == "serve":
            with asyncio.Runner(loop_factory=_server_loop_factory()) as runner:
                return runner.run(_serve(args))
        return asyncio.run(_transcribe(args))
    except BrokenPipeError:
        raise  # not an error of the command: main ends quietly
    except (VoxdeskError, OSError) as exc:
        print(f"voxdesk: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` ran, for its usage line."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                return _command_parser(action.choices[chosen], args)
    return parser


if __name__ == "__main__":
    sys.exit(main())
