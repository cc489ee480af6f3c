"""Where the files in ``resources/`` (icons, default commands, sample audio) are."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["resource_path"]


def resource_path(*parts: str) -> Path:
    """A file under ``resources/``: next to the packages in a checkout, inside a PyInstaller
    bundle when frozen, or wherever ``VOXDESK_RESOURCES`` points."""
    if override := os.environ.get("VOXDESK_RESOURCES"):
        root = Path(override)
    elif bundle := getattr(sys, "_MEIPASS", None):
        root = Path(bundle) / "resources"
    else:
        root = Path(__file__).resolve().parent.parent / "resources"
    return root.joinpath(*parts)
