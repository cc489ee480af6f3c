"""Downloading a Whisper model into the standard hub cache, once, with progress.

A faster-whisper model name (``base.en``, ``large-v3``, ...) or a hub repository id is
fetched through huggingface_hub (:mod:`voxdesk.engine.downloads`), which resumes a cut
download from its ``.incomplete`` file. Afterwards the model is opened with
``local_files_only`` and never touches the network.
"""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

from voxdesk.engine.downloads import DownloadProgress, download_snapshot
from voxdesk.engine.errors import EngineUnavailable

__all__ = ["ALLOW_PATTERNS", "DownloadProgress", "download_model", "repo_id"]

ALLOW_PATTERNS = ["config.json", "preprocessor_config.json", "model.bin", "tokenizer.json", "vocabulary.*"]


def repo_id(name: str) -> str:
    """The hub repository of a faster-whisper model name or repository id.

    Raises ``EngineUnavailable`` for a name that is neither."""
    from faster_whisper.utils import _MODELS

    if "/" in name:
        return name
    if name in _MODELS:
        return str(_MODELS[name])
    raise EngineUnavailable(
        f"unknown Whisper model {name!r}: use tiny.en, a local CTranslate2 model folder, "
        f"a hub repository id, or one of {', '.join(_MODELS)}"
    )


def download_model(name: str, progress: DownloadProgress | None = None, *, show_bar: bool = False) -> Path:
    """Download ``name`` into the hub cache (or find it there); its snapshot folder.

    ``show_bar`` draws tqdm bars (size and rate) on stderr; ``progress`` gets the bytes done
    against the model's whole size as one line. Raises ``EngineUnavailable`` with one line."""
    return download_snapshot(
        repo_id(name),
        _model_files,
        label=f"Whisper {name}",
        subject=f"Whisper model {name!r}",
        progress=progress,
        show_bar=show_bar,
    )


def _model_files(names: list[str]) -> list[str]:
    """The files faster-whisper reads (``ALLOW_PATTERNS``)."""
    return [name for name in names if any(fnmatch(name, pattern) for pattern in ALLOW_PATTERNS)]
