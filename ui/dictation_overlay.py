"""The dictation overlay: a small frameless box near the bottom of the screen, on top of every
window, that never takes the focus from the application being dictated into. It shows the
level, the writing mode, the live text (provisional tail greyed) and the action, and fades out
when told to."""

from __future__ import annotations

import html

from PySide6.QtCore import QPropertyAnimation, Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from voxdesk.app.listening.level import MeterReading
from voxdesk.app.listening.overlay import OverlayState
from voxdesk.ui.level_meter import LevelMeter

__all__ = ["DictationOverlay"]

HOLD_MS = 1500  # the final text stays readable this long before fading
FADE_MS = 600
STOPPED_LIMIT_MS = 8000  # fade this long after a stop even if a final never came


class DictationOverlay(QWidget):
    """Show with :meth:`show_state`; it places itself, never activates, and fades when asked."""

    def __init__(self) -> None:
        flags = (
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.WindowDoesNotAcceptFocus
        )
        super().__init__(None, flags)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWindowTitle("Voxdesk dictation")
        self.setAccessibleName("Dictation overlay")
        box = QFrame()
        box.setObjectName("box")
        box.setStyleSheet(
            "#box { background: rgba(32, 33, 36, 235); border-radius: 10px; }"
            "QLabel { color: #f1f3f4; } QLabel#action { color: #9ad0a5; } QLabel#mode { color: #bdc1c6; }"
        )
        self.meter = LevelMeter()
        dark = self.meter.palette()
        for role, colour in (("Base", "#3c4043"), ("Mid", "#5f6368"), ("PlaceholderText", "#bdc1c6")):
            dark.setColor(getattr(QPalette.ColorRole, role), QColor(colour))
        self.meter.setPalette(dark)
        self.mode = QLabel()
        self.mode.setObjectName("mode")
        self.mode.setAccessibleName("Writing mode")
        self.text = QLabel()
        self.text.setAccessibleName("Dictated text")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.action = QLabel()
        self.action.setObjectName("action")
        self.action.setAccessibleName("Action")
        self.action.setWordWrap(True)
        inner = QVBoxLayout(box)
        inner.setContentsMargins(14, 10, 14, 10)
        for widget in (self.meter, self.mode, self.text, self.action):
            inner.addWidget(widget)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(box)
        self.setFixedWidth(560)
        self._fade = QPropertyAnimation(self, b"windowOpacity", self)
        self._fade.setDuration(FADE_MS)
        self._fade.setStartValue(1.0)
        self._fade.setEndValue(0.0)
        self._fade.finished.connect(self.hide)
        self._hold = QTimer(self, singleShot=True, interval=HOLD_MS)
        self._hold.timeout.connect(self._fade.start)
        self._stopped = QTimer(self, singleShot=True, interval=STOPPED_LIMIT_MS)
        self._stopped.timeout.connect(self._fade.start)

    def show_state(self, state: OverlayState, listening: bool) -> None:
        """Show (or fade) what ``state`` says; ``listening`` arms the limit after a stop."""
        if not state.shown:
            self._cancel_fade()
            self.hide()
            return
        provisional = html.escape(state.provisional)
        tail = f' <i style="color:#9aa0a6">{provisional}</i>' if provisional else ""
        self.text.setText(f"{html.escape(state.committed)}{tail}" or '<i style="color:#9aa0a6">listening…</i>')
        self.action.setText(state.action)
        self.action.setVisible(bool(state.action))
        if not self.isVisible():
            self._cancel_fade()
        self.adjustSize()
        self._place()
        self.show()
        if state.fade and not self._hold.isActive() and self._fade.state() != QPropertyAnimation.State.Running:
            self._hold.start()
        elif not state.fade:
            self._hold.stop()
            if listening:
                self._stopped.stop()
            elif not self._stopped.isActive():
                self._stopped.start()

    def show_mode(self, label: str) -> None:
        """The mode dictation is written in now, in a few words (as the window's chip)."""
        self.mode.setText(f"Writing: {label}")

    def show_reading(self, reading: MeterReading) -> None:
        if self.isVisible():
            self.meter.show_reading(reading)

    def fading(self) -> bool:
        """True from the final text until it is gone."""
        return self._hold.isActive() or self._fade.state() == QPropertyAnimation.State.Running

    def _cancel_fade(self) -> None:
        self._hold.stop()
        self._stopped.stop()
        self._fade.stop()
        self.setWindowOpacity(1.0)

    def _place(self) -> None:
        screen = QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        self.move(area.center().x() - self.width() // 2, area.bottom() - self.height() - area.height() // 12)
