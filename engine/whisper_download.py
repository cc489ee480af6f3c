"""Downloading a Whisper model into the standard hub cache, once, with progress.

A faster-whisper model name (``base.en``, ``large-v3``, ...) or a hub repository id is
fetched through huggingface_hub, which resumes a cut download from its ``.incomplete``
file. Afterwards the model is opened with ``local_files_only`` and never touches the network.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
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

    ``show_bar`` draws tqdm bars (size and rate) on stderr; ``progress`` gets the same
    figures as one line. Raises ``EngineUnavailable`` with one line on any failure."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

    repo = repo_id(name)
    try:
        folder = snapshot_download(repo, allow_patterns=ALLOW_PATTERNS, tqdm_class=_bar_class(name, progress, show_bar))
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
        raise EngineUnavailable(f"Whisper model {name!r}: download failed: {exc}") from None
    return Path(str(folder))


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _bar_class(name: str, progress: DownloadProgress | None, show_bar: bool) -> type[tqdm]:  # type: ignore[type-arg]
    """A tqdm class that draws only when ``show_bar`` and reports bytes to ``progress``."""

    class _Bar(tqdm):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)  # huggingface_hub's own tqdm takes a logger name
            kwargs["disable"] = not show_bar
            self._bytes = kwargs.get("unit") == "B"
            self._size = float(kwargs.get("total") or 0)
            self._done = float(kwargs.get("initial") or 0)  # a resumed file starts part-way
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            self._done += n or 0
            if progress is not None and self._bytes and self._size:
                done = min(self._done / self._size, 1.0)
                size = tqdm.format_sizeof(self._size, "B", 1024)
                progress(f"downloading Whisper {name}: {done:.0%} of {size}", done)
            return super().update(n)

    return _Bar
