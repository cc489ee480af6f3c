"""``voxdesk serve --wyoming``: the command-line options and the server they describe."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from voxdesk.engine import EngineKind, StreamingEngine
from voxdesk.engine.vllm.engine import VllmSettings
from voxdesk.engine.wire.wyoming.address import parse_tcp_uri
from voxdesk.engine.wire.wyoming.info import AsrModel, ServiceInfo
from voxdesk.server.wyoming.config import WyomingConfig
from voxdesk.server.wyoming.info import whisper_info
from voxdesk.server.wyoming.server import WyomingServer, check_bind

__all__ = ["add_wyoming_arguments", "service_info", "wyoming_config", "wyoming_server"]

_VLLM = {"name": "vLLM", "url": "https://github.com/vllm-project/vllm"}


def add_wyoming_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``--wyoming`` options to ``voxdesk serve``."""
    group = parser.add_argument_group("Wyoming (Home Assistant speech-to-text)")
    group.add_argument(
        "--wyoming",
        metavar="tcp://HOST:PORT",
        help="also serve Wyoming speech-to-text there (e.g. tcp://127.0.0.1:10300). Wyoming has no "
        "authentication: a host beyond loopback needs --allow-insecure-no-api-key",
    )
    group.add_argument(
        "--wyoming-language",
        action="append",
        metavar="CODE",
        help="a language the engine transcribes, as told to Wyoming clients (repeat for more); "
        "default: those of the built-in engine's Whisper model, en for --engine vllm",
    )


def wyoming_config(args: argparse.Namespace) -> WyomingConfig | None:
    """The Wyoming server ``args`` ask for; ``None`` without ``--wyoming``. Call before loading
    the engine: it refuses bad addresses at once.

    Raises:
        WyomingAddressError: a ``--wyoming`` address that is not ``tcp://HOST:PORT``.
        InsecureBindError: a host beyond loopback without ``--allow-insecure-no-api-key``.
    """
    if not args.wyoming:
        return None
    host, port = parse_tcp_uri(args.wyoming)
    config = WyomingConfig(
        host=host,
        port=port,
        allow_insecure=args.allow_insecure_no_api_key,
        idle_timeout=args.idle_timeout,
        max_sessions=args.max_sessions,
        max_session_audio=args.max_session_audio,
        shutdown_grace=args.shutdown_grace,
    )
    check_bind(config)
    return config


async def wyoming_server(
    args: argparse.Namespace, config: WyomingConfig, engine: StreamingEngine, version: str
) -> WyomingServer:
    """The Wyoming server over the loaded ``engine``, started; says where clients connect."""
    server = WyomingServer(engine, service_info(args, version).to_event(), config)
    await server.start()
    # Always shown, whatever the log level: it says where to connect (and tests read the port from it).
    print(f"voxdesk serve: Wyoming on tcp://{config.host}:{server.port}", file=sys.stderr, flush=True)
    return server


def service_info(args: argparse.Namespace, version: str) -> ServiceInfo:
    """What ``describe`` tells clients about the engine ``args`` choose."""
    languages = tuple(args.wyoming_language or ())
    if args.engine == EngineKind.VLLM:
        model = AsrModel(args.served_model_name or args.model or VllmSettings.model, languages or ("en",))
        return ServiceInfo(model, version, _VLLM)
    info = whisper_info(args.whisper_model, args.language, version)
    return dataclasses.replace(info, model=dataclasses.replace(info.model, languages=languages)) if languages else info
