"""Shared fixtures for the voice action tests; the recording fakes are in ``fakes.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxdesk.app.actions.commands import CommandSource


@pytest.fixture
def command_source(tmp_path: Path) -> CommandSource:
    """The shipped default commands, with an (absent) user file in a temporary folder."""
    return CommandSource(user_path=tmp_path / "commands.toml")
