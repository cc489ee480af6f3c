"""Qt implementations of the action services: the clipboard and desktop notifications."""

from __future__ import annotations

import logging

from PySide6.QtGui import QClipboard, QGuiApplication
from PySide6.QtWidgets import QSystemTrayIcon

__all__ = ["QtClipboard", "TrayNotifier"]

logger = logging.getLogger("voxdesk.actions")


class QtClipboard:
    """The system clipboard through QClipboard (``voxdesk.app.actions.Clipboard``); use on the Qt thread."""

    def __init__(self, mode: QClipboard.Mode = QClipboard.Mode.Clipboard) -> None:
        self._mode = mode

    def text(self) -> str:
        return QGuiApplication.clipboard().text(self._mode)

    def set_text(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text, self._mode)


class TrayNotifier:
    """Desktop notifications as tray balloon messages (``voxdesk.app.actions.Notifier``).

    Without a tray icon (or a system tray) the notification goes to the log instead, so a
    timer still leaves a trace.
    """

    def __init__(self, tray: QSystemTrayIcon | None, timeout_ms: int = 10_000) -> None:
        self._tray = tray
        self._timeout_ms = timeout_ms

    def notify(self, title: str, message: str) -> None:
        if self._tray is not None and QSystemTrayIcon.isSystemTrayAvailable() and self._tray.isVisible():
            self._tray.showMessage(title, message, QSystemTrayIcon.MessageIcon.Information, self._timeout_ms)
        else:
            logger.warning("%s: %s (no system tray to show it)", title, message)
