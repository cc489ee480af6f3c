"""``voxdesk models list|download NAME|remove NAME``: the Whisper models on disk."""

from __future__ import annotations

import argparse

from tqdm import tqdm

from voxdesk.engine.whisper.cache import remove_model, stored_models
from voxdesk.engine.whisper.models import resolve_model

__all__ = ["add_models_parser", "run_models"]


def add_models_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` command to ``commands``."""
    models = commands.add_parser(
        "models",
        help="list, download or remove Whisper models for the built-in engine",
        description="Whisper models live in the standard model hub cache (HF_HOME, by default "
        "~/.cache/huggingface/hub); once downloaded they are used offline.",
    )
    actions = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    actions.add_parser("list", help="the bundled tiny.en and every Whisper model in the hub cache")
    download = actions.add_parser("download", help="download a model name (base.en, large-v3, ...) or repo id")
    download.add_argument("name", metavar="NAME")
    remove = actions.add_parser("remove", help="delete a downloaded model from the hub cache")
    remove.add_argument("name", metavar="NAME")


def run_models(args: argparse.Namespace) -> int:
    """Run ``voxdesk models``; errors propagate as ``VoxdeskError`` for ``main`` to print."""
    if args.models_command == "list":
        for model in stored_models():
            size = tqdm.format_sizeof(model.size, "B", 1024)
            print(f"{model.name:<28} {size:>9}  {model.languages:<12}  {model.path}")
    elif args.models_command == "download":
        path = resolve_model(args.name)
        print(f"{args.name}: {path}")
    else:
        print(f"removed {args.name}: {remove_model(args.name)}")
    return 0
