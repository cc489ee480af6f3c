"""Where the files in ``resources/`` (icons, default commands, sample audio) are."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

__all__ = ["resource_path"]


def resource_path(*parts: str) -> Path:
    """A file of the ``voxdesk.resources`` package (in a checkout, a wheel or the installers'
    bundle), or under the folder ``VOXDESK_RESOURCES`` points to."""
    if override := os.environ.get("VOXDESK_RESOURCES"):
        return Path(override).joinpath(*parts)
    return Path(str(files("voxdesk.resources"))).joinpath(*parts)
