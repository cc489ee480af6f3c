"""An action is done only when its effect happened: an opener or a program that fails is a
failed action in its own words, run for real (xdg-open with no browser that works, a program
that exits 1)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingLauncher, RecordingOpener
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.launcher import SystemAppLauncher, SystemUrlOpener
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings


def center_with(tmp_path: Path, services: Services) -> ActionCenter:
    return ActionCenter(ActionSettings(), services, commands=CommandSource(user_path=tmp_path / "commands.toml"))


@pytest.mark.skipif(shutil.which("xdg-open") is None, reason="xdg-open is not installed (scripts/setup.sh installs it)")
def test_a_search_with_no_browser_that_works_fails_in_the_openers_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A desktop where the one browser xdg-open may use exits at once (and no display to find another).
    monkeypatch.setenv("BROWSER", "false")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP"):
        monkeypatch.delenv(name, raising=False)
    center = center_with(tmp_path, Services(open_url=SystemUrlOpener("linux"), launcher=RecordingLauncher()))
    record = asyncio.run(center.handle_utterance("search for weather in Paris"))
    assert record is not None and record.status is ActionStatus.FAILED, record
    url = "https://duckduckgo.com/?q=weather+in+Paris"
    assert record.message == (
        f"no web browser opened {url} (xdg-open failed (exit status 3): xdg-open: no method available for "
        f"opening '{url}'); install one or choose the default"
    )


def test_an_application_whose_program_exits_1_fails_with_what_it_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    programs = tmp_path / "bin"
    programs.mkdir()
    browser = programs / "x-www-browser"
    browser.write_text("#!/bin/sh\necho 'x-www-browser: no display to open a window on' >&2\nexit 1\n")
    browser.chmod(0o755)
    monkeypatch.setenv("PATH", f"{programs}{os.pathsep}{os.environ['PATH']}")
    center = center_with(tmp_path, Services(open_url=RecordingOpener(), launcher=SystemAppLauncher("linux")))
    record = asyncio.run(center.handle_utterance("open the browser"))
    assert record is not None and record.status is ActionStatus.FAILED, record
    assert record.message == "x-www-browser failed (exit status 1): x-www-browser: no display to open a window on"


def test_an_opener_that_is_missing_says_what_to_install() -> None:
    opener = SystemUrlOpener("linux", which=lambda name: None)
    with pytest.raises(Exception, match=r"xdg-open is missing \(install xdg-utils\)"):
        asyncio.run(opener("https://example.com"))
