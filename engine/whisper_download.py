"""Downloading a Whisper model into the standard hub cache, once, with progress.

A faster-whisper model name (``base.en``, ``large-v3``, ...) or a hub repository id is
fetched through huggingface_hub, which resumes a cut download from its ``.incomplete``
file. Afterwards the model is opened with ``local_files_only`` and never touches the network.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from voxdesk.engine.errors import EngineUnavailable

__all__ = ["ALLOW_PATTERNS", "DownloadProgress", "download_model", "repo_id"]

ALLOW_PATTERNS = ["config.json", "preprocessor_config.json", "model.bin", "tokenizer.json", "vocabulary.*"]

DownloadProgress = Callable[[str, float], None]
"""Called with a status line and the fraction done (0..1) while bytes arrive."""


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
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

    repo = repo_id(name)
    try:
        bar = _bar_class(name, progress, show_bar, _model_size(HfApi(), repo) if progress else 0)
        folder = snapshot_download(repo, allow_patterns=ALLOW_PATTERNS, tqdm_class=bar)
    except RepositoryNotFoundError:
        raise EngineUnavailable(f"Whisper model {name!r}: no repository {repo!r} on the model hub") from None
    except LocalEntryNotFoundError:
        raise EngineUnavailable(
            f"Whisper model {name!r} is not downloaded and the model hub cannot be reached (no network?)"
        ) from None
    except HfHubHTTPError as exc:
        raise EngineUnavailable(f"Whisper model {name!r}: download failed: {_first_line(exc)}") from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise EngineUnavailable(
                f"Whisper model {name!r}: the disk is full ({exc.filename or 'hub cache'})"
            ) from None
        raise EngineUnavailable(f"Whisper model {name!r}: download failed: {_first_line(exc)}") from None
    return Path(str(folder))


def _model_size(api: Any, repo: str) -> int:
    """Bytes of the files a download fetches (``ALLOW_PATTERNS``), from the hub's model info."""
    info = api.model_info(repo, files_metadata=True)
    return sum(
        sibling.size or 0
        for sibling in info.siblings or []
        if any(fnmatch(sibling.rfilename, pattern) for pattern in ALLOW_PATTERNS)
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _bar_class(name: str, progress: DownloadProgress | None, show_bar: bool, size: int) -> type[tqdm]:  # type: ignore[type-arg]
    """A tqdm class that draws only when ``show_bar`` and reports the bytes of all files to ``progress``.

    huggingface_hub sums its files into one byte bar (older releases: one bar per file) and
    adds a second for network transfer; counting every file byte bar but the transfer one
    gives the bytes on disk, a resumed file's head included."""
    done = 0.0
    lock = threading.Lock()
    label = tqdm.format_sizeof(size, "B", 1024)

    def count(n: float) -> None:
        nonlocal done
        with lock:
            done += n
            fraction = min(done / size, 1.0)
        if progress is not None:
            progress(f"downloading Whisper {name}: {fraction:.0%} of {label}", fraction)

    class _Bar(tqdm):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._counts = kwargs.get("unit") == "B" and not str(kwargs.pop("name", "")).endswith(".transfer")
            self._counts = self._counts and size > 0
            kwargs["disable"] = not show_bar
            super().__init__(*args, **kwargs)
            if self._counts and kwargs.get("initial"):
                count(float(kwargs["initial"]))

        def update(self, n: float | None = 1) -> bool | None:
            if self._counts and n:
                count(n)
            return super().update(n)

    return _Bar
