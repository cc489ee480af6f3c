"""The X11 clipboard (the CLIPBOARD selection) through ``xclip``, for tests whose process has no
Qt on the display (pytest-qt's is offscreen): the same X selection the window's ``QtClipboard``
reads, from another client. It implements ``voxdesk.app.actions.ports.Clipboard``."""

from __future__ import annotations

import os
import subprocess


class XclipClipboard:
    """The clipboard of the X display ``display``; ``set_text`` leaves an xclip serving it."""

    def __init__(self, display: str) -> None:
        self._env = {**os.environ, "DISPLAY": display}

    def text(self) -> str:
        result = subprocess.run(
            ["xclip", "-o", "-selection", "clipboard"], env=self._env, capture_output=True, timeout=10
        )
        return result.stdout.decode("utf-8") if result.returncode == 0 else ""  # no owner: empty

    def set_text(self, text: str) -> None:
        # xclip forks and serves the selection until another client takes it.
        subprocess.run(
            ["xclip", "-i", "-selection", "clipboard"],
            input=text.encode("utf-8"),
            env=self._env,
            check=True,
            timeout=10,
        )
