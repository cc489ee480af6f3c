"""The vLLM engine's model on disk: a folder as it is; a hub id from the hub cache, or
downloaded there first with progress, so that vLLM loads a local snapshot.

Only the files vLLM reads for the engine's ``load_format`` are fetched: a repository with
weights in both Mistral's and Hugging Face's format downloads one of them.
"""

from __future__ import annotations

import re
import sys
from fnmatch import fnmatch
from pathlib import Path

from voxdesk.engine.downloads import DownloadProgress, download_snapshot, hub_file_sizes
from voxdesk.engine.errors import EngineUnavailable

__all__ = ["is_hub_id", "model_files", "resolve_vllm_model", "weight_bytes"]

_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".onnx", ".npz")
_CONFIGS = ("params.json", "config.json")
_SHARD = re.compile(r"-(\d+)-of-(\d+)\.safetensors$")


def is_hub_id(model: str) -> bool:
    """Whether ``model`` names a hub repository (``owner/name``) rather than a folder."""
    return not Path(model).expanduser().exists() and re.fullmatch(r"[\w.-]+/[\w.-]+", model) is not None


def model_files(names: list[str], load_format: str) -> list[str]:
    """The files of a repository vLLM reads for ``load_format``: all but weights, and the
    top-level weights in that format (``consolidated*.safetensors`` for ``mistral``; otherwise
    the other safetensors files, or PyTorch ``.bin`` files when there are none). Empty when the
    repository has no such weights."""
    top = [name for name in names if "/" not in name]
    if load_format == "mistral":
        weights = [name for name in top if fnmatch(name, "consolidated*.safetensors")]
    else:
        weights = [name for name in top if name.endswith(".safetensors") and not name.startswith("consolidated")]
        weights = weights or [name for name in top if name.endswith(".bin")]
    return [name for name in names if not name.endswith(_WEIGHT_SUFFIXES)] + weights if weights else []


def resolve_vllm_model(model: str, load_format: str, progress: DownloadProgress | None = None) -> str:
    """The model to hand vLLM: a folder as it is, a hub id as the folder of its cached snapshot,
    downloaded first when it is not fully in the hub cache (``progress`` gets the bytes; bars on
    a terminal's stderr). Raises ``EngineUnavailable`` with one line."""
    if not is_hub_id(model):
        return model
    cached = _cached_snapshot(model, load_format)
    if cached is not None:
        return str(cached)

    def choose(names: list[str]) -> list[str]:
        files = model_files(names, load_format)
        if not files:
            raise EngineUnavailable(f"model {model!r}: no weights vLLM loads with load_format {load_format!r}")
        return files

    folder = download_snapshot(
        model, choose, label=model, subject=f"model {model!r}", progress=progress, show_bar=sys.stderr.isatty()
    )
    return str(folder)


def weight_bytes(model: str, load_format: str) -> int | None:
    """The size of the weights vLLM loads for ``model`` (a folder, or a hub id from its cached
    snapshot or else the hub's file list); ``None`` when it cannot be told (no such folder, the
    hub unreachable)."""
    if is_hub_id(model):
        cached = _cached_snapshot(model, load_format)
        if cached is None:
            try:
                sizes = hub_file_sizes(model)
            except Exception:  # the hub's errors, or no network: the size is unknown, not fatal
                return None
            return sum(sizes[name] for name in _weights(list(sizes), load_format))
        model = str(cached)
    folder = Path(model).expanduser()
    if not folder.is_dir():
        return None
    names = [path.name for path in folder.iterdir() if path.is_file()]
    return sum((folder / name).stat().st_size for name in _weights(names, load_format))


def _weights(names: list[str], load_format: str) -> list[str]:
    """The weight files among ``model_files``."""
    return [name for name in model_files(names, load_format) if name.endswith(_WEIGHT_SUFFIXES)]


def _cached_snapshot(repo: str, load_format: str) -> Path | None:
    """The snapshot of ``repo`` in the hub cache when it holds a whole model, without the network."""
    from huggingface_hub import try_to_load_from_cache

    for config in _CONFIGS:
        found = try_to_load_from_cache(repo, config)
        if isinstance(found, str):
            folder = Path(found).parent
            return folder if _complete(folder, load_format) else None
    return None


def _complete(folder: Path, load_format: str) -> bool:
    """Whether ``folder`` has a config, weights in ``load_format`` and every shard of them."""
    names = [path.name for path in folder.iterdir() if path.is_file()]
    files = model_files(names, load_format)
    shards = [match for match in map(_SHARD.search, files) if match is not None]
    whole = all(
        len({shard.group(1) for shard in shards if shard.group(2) == last}) == int(last)
        for last in {match.group(2) for match in shards}
    )
    return bool(files) and whole and any(name in names for name in _CONFIGS)
