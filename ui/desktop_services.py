"""The desktop's implementations of the action services: the clipboard (Qt) and notifications."""

from __future__ import annotations

import logging
import shutil
import subprocess

from PySide6.QtGui import QClipboard, QGuiApplication
from PySide6.QtWidgets import QSystemTrayIcon

__all__ = ["DesktopNotifier", "QtClipboard"]

logger = logging.getLogger("voxdesk.actions")


class QtClipboard:
    """The system clipboard through QClipboard (``voxdesk.app.actions.Clipboard``); use on the Qt thread."""

    def __init__(self, mode: QClipboard.Mode = QClipboard.Mode.Clipboard) -> None:
        self._mode = mode

    def text(self) -> str:
        return QGuiApplication.clipboard().text(self._mode)

    def set_text(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text, self._mode)


class DesktopNotifier:
    """Desktop notifications (``voxdesk.app.actions.Notifier``): the desktop's notification
    service over D-Bus (``notify-send``: GNOME, KDE, dunst, mako...) where it answers, else the
    tray's balloon, else the log, so an alarm still leaves a trace.
    """

    def __init__(self, tray: QSystemTrayIcon | None, timeout_ms: int = 10_000) -> None:
        self._tray = tray
        self._timeout_ms = timeout_ms

    def notify(self, title: str, message: str) -> None:
        if self._notify_send(title, message):
            return
        if self._tray is not None and QSystemTrayIcon.isSystemTrayAvailable() and self._tray.isVisible():
            self._tray.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, self._timeout_ms)
        else:
            logger.warning("%s: %s (no notification service or system tray to show it)", title, message)

    def _notify_send(self, title: str, message: str) -> bool:
        """Whether the notification service took the notification (``notify-send`` exits 0)."""
        program = shutil.which("notify-send")
        if program is None:
            return False
        try:
            sent = subprocess.run(
                [program, "--app-name=Voxdesk", f"--expire-time={self._timeout_ms}", "--", title, message],
                capture_output=True,
                timeout=5,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
        if sent.returncode != 0:
            logger.info("notify-send failed: %s", sent.stderr.decode(errors="replace").strip())
        return sent.returncode == 0
