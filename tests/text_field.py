"""A real text field in another process on an X11 display (``tests/x11_text_field.py``), what it
holds, and the desktop app set up to type into it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.app.actions.fakes import RecordingLauncher, RecordingNotifier, RecordingOpener, RecordingRunner
from voxdesk.app.actions.focus import X11Focus
from voxdesk.app.actions.keyboard import XdotoolKeyboard
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import Settings


class TextField:
    """The text field process and what it currently holds."""

    def __init__(
        self, display: str, out: Path, title: str = "voxdesk-test-field", wm_class: tuple[str, str] | None = None
    ) -> None:
        self.out = out
        self.title = title
        self.env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        script = Path(__file__).with_name("x11_text_field.py")
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(out), title],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == b"READY"
        if wm_class is not None:  # the application it poses as, for picking a mode by it
            self._xdotool("set_window", "--classname", wm_class[0], "--class", wm_class[1])
        self.focus()

    def focus(self) -> None:
        """Give the field the input focus (no window manager runs under Xvfb to do it)."""
        self._xdotool("windowfocus", "--sync")

    def _xdotool(self, *command: str) -> None:
        subprocess.run(
            ["xdotool", "search", "--sync", "--name", f"^{self.title}$", *command], env=self.env, check=True, timeout=10
        )

    def text(self) -> str:
        return self.out.read_text(encoding="utf-8") if self.out.exists() else ""

    def wait_for(self, expected: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self.text() != expected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.text() == expected

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def dictation_settings() -> Settings:
    """Dictation mode, without global shortcuts (they would listen on the keyboard xdotool types on)."""
    settings = Settings()
    settings.actions.mode = "dictation"
    settings.listening.toggle_shortcut = settings.listening.hold_to_talk_key = ""
    return settings


def typing_services() -> Services:
    """Real typing (xdotool) and the real focus probe; the rest records."""
    return Services(
        notifier=RecordingNotifier(),
        open_url=RecordingOpener(),
        launcher=RecordingLauncher(),
        keyboard=XdotoolKeyboard(),
        focus=X11Focus(),
        run_process=RecordingRunner(),
    )
