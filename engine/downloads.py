"""Downloading a model snapshot from the model hub into the standard hub cache, with progress.

huggingface_hub fetches only the files asked for and resumes a cut file from its
``.incomplete`` file; the Whisper models (:mod:`voxdesk.engine.whisper.download`) and the vLLM
engine's models (:mod:`voxdesk.engine.vllm.download`) come through here.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from voxdesk.engine.errors import EngineUnavailable

__all__ = ["DownloadProgress", "FileChoice", "download_snapshot", "hub_file_sizes"]

DownloadProgress = Callable[[str, float], None]
"""Called with a status line and the fraction done (0..1) while bytes arrive."""

FileChoice = Callable[[list[str]], list[str]]
"""Picks the files to download from a repository's file names."""


def download_snapshot(
    repo: str,
    choose: FileChoice,
    *,
    label: str,
    subject: str,
    progress: DownloadProgress | None = None,
    show_bar: bool = False,
) -> Path:
    """Download the files ``choose`` picks from hub repository ``repo`` (or find them in the
    cache); its snapshot folder.

    ``progress`` gets the bytes done against the chosen files' size as one line,
    ``downloading {label}: 42% of 1.2 GiB``; ``show_bar`` draws tqdm bars (size and rate) on
    stderr. Raises ``EngineUnavailable`` with one line that starts with ``subject``."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

    try:
        sizes = hub_file_sizes(repo)
        files = choose(list(sizes))
        bar = _bar_class(label, progress, show_bar, sum(sizes[name] for name in files))
        folder = snapshot_download(repo, allow_patterns=files, tqdm_class=bar)
    except GatedRepoError:
        raise EngineUnavailable(
            f"{subject}: the model hub asks to accept the model's terms on its page and a token "
            "(hf auth login, or HF_TOKEN)"
        ) from None
    except RepositoryNotFoundError:
        raise EngineUnavailable(f"{subject}: no repository {repo!r} on the model hub") from None
    except LocalEntryNotFoundError:
        raise EngineUnavailable(
            f"{subject} is not downloaded and the model hub cannot be reached (no network?)"
        ) from None
    except HfHubHTTPError as exc:
        raise EngineUnavailable(f"{subject}: download failed: {_first_line(exc)}") from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise EngineUnavailable(f"{subject}: the disk is full ({exc.filename or 'hub cache'})") from None
        raise EngineUnavailable(f"{subject}: download failed: {_first_line(exc)}") from None
    return Path(str(folder))


def hub_file_sizes(repo: str) -> dict[str, int]:
    """Each file of ``repo`` and its size, from the hub (a dry run of the download).

    Raises the hub's HTTP error, or ``LocalEntryNotFoundError`` when the hub cannot be reached."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import DryRunError, HfHubHTTPError, LocalEntryNotFoundError

    try:
        files = snapshot_download(repo, dry_run=True)
    except DryRunError as exc:
        if isinstance(exc.__cause__, HfHubHTTPError):
            raise exc.__cause__ from None
        raise LocalEntryNotFoundError(f"{repo}: the model hub cannot be reached") from None
    return {file.filename: file.file_size or 0 for file in files}


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _bar_class(label: str, progress: DownloadProgress | None, show_bar: bool, size: int) -> type[tqdm]:  # type: ignore[type-arg]
    """A tqdm class that draws only when ``show_bar`` and reports the bytes of all files to ``progress``.

    huggingface_hub sums its files into one byte bar (older releases: one bar per file) and
    adds a second for network transfer; counting every file byte bar but the transfer one
    gives the bytes on disk, a resumed file's head included."""
    done = 0.0
    lock = threading.Lock()
    total = tqdm.format_sizeof(size, "B", 1024)

    def count(n: float) -> None:
        nonlocal done
        with lock:
            done += n
            fraction = min(done / size, 1.0)
        if progress is not None:
            progress(f"downloading {label}: {fraction:.0%} of {total}", fraction)

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
