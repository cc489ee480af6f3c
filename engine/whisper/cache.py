"""The Whisper models on disk: the bundled tiny.en and those in the standard hub cache."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.whisper.download import repo_id
from voxdesk.engine.whisper.models import BUNDLED_MODEL, check_model_folder, model_directory

__all__ = ["StoredModel", "multilingual", "remove_model", "stored_models"]

_MULTILINGUAL_VOCABULARY = 51865
"""Whisper's English-only vocabulary has 51864 tokens; the multilingual ones have more."""


@dataclass(frozen=True)
class StoredModel:
    """One Whisper model on disk: its name, folder, size in bytes and languages."""

    name: str
    path: Path
    size: int
    multilingual: bool

    @property
    def languages(self) -> str:
        """``multilingual`` or ``English-only``."""
        return "multilingual" if self.multilingual else "English-only"


def multilingual(path: Path) -> bool:
    """Whether the CTranslate2 Whisper model in ``path`` is multilingual (from its vocabulary)."""
    if (path / "vocabulary.json").is_file():
        size = len(json.loads((path / "vocabulary.json").read_text()))
    elif (path / "vocabulary.txt").is_file():
        size = len((path / "vocabulary.txt").read_text().splitlines())
    else:
        size = len(json.loads((path / "tokenizer.json").read_text())["model"]["vocab"])
    return size >= _MULTILINGUAL_VOCABULARY


def stored_models() -> list[StoredModel]:
    """The bundled model, then every Whisper model in the hub cache."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    bundled = model_directory()
    found = [StoredModel(BUNDLED_MODEL, bundled, _folder_size(bundled), multilingual(bundled))]
    try:
        repos = scan_cache_dir(_hub_cache()).repos
    except CacheNotFound:
        return found
    for repo in sorted(repos, key=lambda repo: repo.repo_id):
        for revision in repo.revisions:
            try:
                check_model_folder(revision.snapshot_path)
            except EngineUnavailable:
                continue
            name = _short_name(repo.repo_id)
            found.append(
                StoredModel(name, revision.snapshot_path, repo.size_on_disk, multilingual(revision.snapshot_path))
            )
            break
    return found


def remove_model(name: str) -> Path:
    """Delete model ``name`` from the hub cache; the folder removed. Raises ``EngineUnavailable``."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    if name == BUNDLED_MODEL:
        raise EngineUnavailable("tiny.en is bundled with Voxdesk and cannot be removed")
    repo = repo_id(name)
    try:
        repos = {cached.repo_id: cached for cached in scan_cache_dir(_hub_cache()).repos if cached.repo_type == "model"}
    except CacheNotFound:
        repos = {}
    if repo not in repos:
        raise EngineUnavailable(f"Whisper model {name!r} is not in the hub cache")
    shutil.rmtree(repos[repo].repo_path)
    return repos[repo].repo_path


def _hub_cache() -> str:
    """The hub cache downloads go to now (``scan_cache_dir``'s default is fixed when it is first imported)."""
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def _short_name(repo: str) -> str:
    """``Systran/faster-whisper-base.en`` -> ``base.en``; other repositories keep their id."""
    from faster_whisper.utils import _MODELS

    names = {hub: name for name, hub in _MODELS.items()}
    return str(names.get(repo, repo))


def _folder_size(path: Path) -> int:
    return sum(file.stat().st_size for file in path.iterdir() if file.is_file())
