"""Opening web addresses and applications, per operating system, with argument lists only."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote_plus, urlsplit

from rapidfuzz import fuzz, process

from voxdesk.app.actions.ports import ActionError, ProcessRunner
from voxdesk.app.actions.process import run_process
from voxdesk.app.textnorm import normalize_text

__all__ = ["SystemAppLauncher", "SystemUrlOpener", "normalize_url", "search_url", "spoken_app_name"]

_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}$")
_SPOKEN_URL = {" dot ": ".", " slash ": "/", " colon ": ":", " dash ": "-", " hyphen ": "-"}


def normalize_url(spoken: str) -> str:
    """A web address from what was said: "example dot com" → "https://example.com".

    Only http and https addresses are opened; anything else (``file:``, ``javascript:``, a
    sentence) raises ActionError.
    """
    text = f" {spoken.strip()} "
    for said, written in _SPOKEN_URL.items():
        text = re.sub(re.escape(said), written, text, flags=re.IGNORECASE)
    text = text.strip().rstrip(".,!?")
    text = re.sub(r"\s*([./:-])\s*", r"\1", text)
    if "://" not in text:
        if ":" in text.split("/")[0] and not re.match(r"^[^:/]+:\d+", text):
            raise ActionError(f"only web addresses can be opened, not {spoken!r}")
        text = "https://" + text
    parts = urlsplit(text)
    host = (parts.hostname or "").removeprefix("www.")
    if parts.scheme not in ("http", "https") or " " in text:
        raise ActionError(f"only web addresses can be opened, not {spoken!r}")
    if not (_HOST.match(host) or host == "localhost"):
        raise ActionError(f"{spoken!r} does not look like a web address")
    return text


def search_url(template: str, query: str) -> str:
    """The search engine address for ``query`` (``{query}`` in ``template``, URL-encoded)."""
    if "{query}" not in template:
        raise ActionError("the search address in the settings has no {query} in it")
    return template.replace("{query}", quote_plus(query))


class _DesktopPrograms:
    """What the desktop's openers share: the platform, how programs run and are found."""

    def __init__(
        self,
        platform: str = sys.platform,
        runner: ProcessRunner = run_process,
        which: Callable[[str], str | None] = shutil.which,
    ) -> None:
        self.platform = platform
        self._runner = runner
        self._which = which


class SystemUrlOpener(_DesktopPrograms):
    """Opens web addresses in the default browser with the desktop's own opener: ``xdg-open``
    (Linux), ``open`` (macOS), ``os.startfile`` (Windows). An opener that fails within a second
    is an error in its own words (Python's ``webbrowser`` says it opened what it did not)."""

    async def __call__(self, url: str) -> None:
        """Open ``url``. Raises :class:`ActionError` saying why it did not open and what to do."""
        if self.platform == "win32":
            startfile: Callable[[str], None] = getattr(os, "startfile")  # noqa: B009 (Windows only)
            try:
                await asyncio.to_thread(startfile, url)
            except OSError as error:
                raise ActionError(f"no web browser opened {url}: {error.strerror or error}") from error
            return
        opener = "open" if self.platform == "darwin" else "xdg-open"
        if self.platform != "darwin" and self._which(opener) is None:
            raise ActionError("nothing opens web addresses here: xdg-open is missing (install xdg-utils)")
        try:
            await _start(self._runner, [opener, url])
        except ActionError as error:
            raise ActionError(f"no web browser opened {url} ({error}); install one or choose the default") from None


_ARTICLES = {"the", "a", "an", "my", "app", "application", "program"}
_ALIASES = {
    "web browser": "browser",
    "internet": "browser",
    "web": "browser",
    "file manager": "files",
    "file browser": "files",
    "file": "files",
    "editor": "text editor",
    "notepad": "text editor",
    "console": "terminal",
    "command line": "terminal",
    "shell": "terminal",
    "calculator": "calculator",
    "settings": "settings",
}
_LINUX: dict[str, list[list[str]]] = {
    "browser": [["x-www-browser"], ["sensible-browser"], ["firefox"], ["chromium"], ["google-chrome"]],
    "terminal": [["x-terminal-emulator"], ["gnome-terminal"], ["konsole"], ["xfce4-terminal"], ["xterm"]],
    "files": [["xdg-open", str(Path.home())]],
    "text editor": [["gnome-text-editor"], ["gedit"], ["kate"], ["mousepad"], ["xed"], ["featherpad"]],
    "calculator": [["gnome-calculator"], ["kcalc"], ["galculator"], ["xcalc"]],
    "settings": [["gnome-control-center"], ["systemsettings"], ["xfce4-settings-manager"]],
}
_MACOS = {
    "browser": "Safari",
    "terminal": "Terminal",
    "files": "Finder",
    "text editor": "TextEdit",
    "calculator": "Calculator",
    "settings": "System Settings",
}
_WINDOWS = {
    "browser": "microsoft-edge:",
    "terminal": "cmd.exe",
    "files": "explorer.exe",
    "text editor": "notepad.exe",
    "calculator": "calc.exe",
    "settings": "ms-settings:",
}


def spoken_app_name(spoken: str) -> str:
    """ "the Web Browser" → "browser": articles dropped, common synonyms mapped."""
    words = [w for w in normalize_text(spoken).split() if w not in _ARTICLES]
    name = " ".join(words)
    return _ALIASES.get(name, name)


def _desktop_entries() -> dict[str, str]:
    """Application names from .desktop files → their desktop ids (for gtk-launch)."""
    homes = [os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local/share")]
    homes += (os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    entries: dict[str, str] = {}
    for home in homes:
        folder = Path(home) / "applications"
        if not folder.is_dir():
            continue
        for path in folder.glob("*.desktop"):
            try:
                lines = path.read_text(errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                if line.startswith("Name="):
                    entries.setdefault(normalize_text(line[5:]), path.stem)
                    break
    return entries


class SystemAppLauncher(_DesktopPrograms):
    """Starts applications with ``xdg-open``/``gtk-launch``/known programs (Linux), ``open -a``
    (macOS) or ``os.startfile`` (Windows). Never through a shell."""

    def resolve(self, spoken: str) -> list[str]:
        """The argument list that starts the application (Linux and macOS)."""
        name = spoken_app_name(spoken)
        if not name:
            raise ActionError("which application? Say for example: open the terminal")
        if self.platform == "darwin":
            return ["open", "-a", _MACOS.get(name, spoken.strip().title())]
        for argv in _LINUX.get(name, []):
            if self._which(argv[0]):
                return argv
        if name in _LINUX:
            raise ActionError(f"no {name} application is installed")
        entries = _desktop_entries()
        if entries and self._which("gtk-launch"):
            found = process.extractOne(name, list(entries), scorer=fuzz.ratio, score_cutoff=80)
            if found:
                return ["gtk-launch", entries[found[0]]]
        program = name.replace(" ", "-")
        if self._which(program):
            return [program]
        raise ActionError(f"I don't know an application called {spoken.strip()!r}")

    async def launch(self, app: str) -> str:
        """Start ``app``; returns the program started."""
        if self.platform == "win32":
            name = spoken_app_name(app)
            target = _WINDOWS.get(name, name)
            startfile: Callable[[str], None] = getattr(os, "startfile")  # noqa: B009 (Windows only)
            try:
                await asyncio.to_thread(startfile, target)
            except OSError as error:
                raise ActionError(f"could not open {app!r}: {error.strerror or error}") from error
            return target
        argv = self.resolve(app)
        await _start(self._runner, argv)
        return " ".join(argv)


async def _start(runner: ProcessRunner, argv: Sequence[str]) -> None:
    """Start a program and fail only if it exits with an error within a second."""
    result = await runner(argv, wait_s=1.0)
    if result.returncode:
        detail = f": {result.stderr.splitlines()[-1]}" if result.stderr else ""
        raise ActionError(f"{argv[0]} failed (exit status {result.returncode}){detail}")
