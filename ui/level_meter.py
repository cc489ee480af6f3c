"""A horizontal input level meter: RMS as a bar, peak as a tick, on a dB scale."""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

FLOOR_DB = -60.0


def level_fraction(linear: float) -> float:
    """0 to 1 on a dB scale from -60 dBFS to 0 dBFS."""
    if linear <= 0:
        return 0.0
    return min(1.0, max(0.0, 1 - 20 * math.log10(linear) / FLOOR_DB))


class LevelMeter(QWidget):
    """Shows the microphone level; ``set_level(rms, peak)`` with linear values."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rms = 0.0
        self.peak = 0.0
        self.setAccessibleName("Microphone level")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(160, 14)

    def set_level(self, rms: float, peak: float) -> None:
        self.rms, self.peak = rms, peak
        self.setAccessibleDescription(f"{20 * math.log10(max(rms, 1e-6)):.0f} dB")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        palette = self.palette()
        area = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(area, 3, 3)
        fill = level_fraction(self.rms)
        if fill > 0:
            bar = QRectF(area.left() + 1, area.top() + 1, (area.width() - 2) * fill, area.height() - 2)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(palette.color(QPalette.ColorRole.Highlight))
            painter.drawRoundedRect(bar, 2, 2)
        peak_x = area.left() + 1 + (area.width() - 2) * level_fraction(self.peak)
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawLine(int(peak_x), int(area.top() + 2), int(peak_x), int(area.bottom() - 2))
