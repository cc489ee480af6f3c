"""A horizontal VU-style input meter: the RMS level as a bar coloured green, yellow and red by
dBFS, the held peak as a tick, a dB scale underneath, and a CLIP lamp that lights red."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QLinearGradient, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

from voxdesk.app.listening.level import FLOOR_DB, MeterReading

__all__ = ["CLIP_COLOUR", "LevelMeter", "level_fraction"]

SCALE_DB = (-60, -40, -30, -20, -12, -6, -3, 0)
GREEN, YELLOW, CLIP_COLOUR = QColor("#2e9d47"), QColor("#e0b400"), QColor("#d7261e")
_RED_FROM_DB = -6.0
_ZONES = ((FLOOR_DB, -18.0, GREEN), (-18.0, _RED_FROM_DB, YELLOW), (_RED_FROM_DB, 0.0, CLIP_COLOUR))
_LAMP_WIDTH = 34


def level_fraction(db: float) -> float:
    """0 to 1 along the scale, from :data:`FLOOR_DB` to 0 dBFS."""
    return min(1.0, max(0.0, 1 - db / FLOOR_DB))


class LevelMeter(QWidget):
    """Shows a :class:`MeterReading`; ``show_reading`` repaints it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reading = MeterReading()
        self.setAccessibleName("Microphone level")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        return QSize(220, 30)

    def minimumSizeHint(self) -> QSize:
        return QSize(140, 30)

    def show_reading(self, reading: MeterReading) -> None:
        self.reading = reading
        clip = ", clipping" if reading.clipping else ""
        self.setAccessibleDescription(f"{reading.rms_db:.0f} dB, peak {reading.held_peak_db:.0f} dB{clip}")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        bar_area = QRectF(10.5, 0.5, self.width() - _LAMP_WIDTH - 22, 14)  # room for the scale's end labels
        self._draw_bar(painter, palette, bar_area)
        self._draw_scale(painter, palette, bar_area)
        self._draw_lamp(painter, palette, QRectF(self.width() - _LAMP_WIDTH - 0.5, 0.5, _LAMP_WIDTH, 14))

    def _x(self, area: QRectF, db: float) -> float:
        return area.left() + 1 + (area.width() - 2) * level_fraction(db)

    def _draw_bar(self, painter: QPainter, palette: QPalette, area: QRectF) -> None:
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(area, 3, 3)
        fill = level_fraction(self.reading.rms_db)
        if fill > 0:
            gradient = QLinearGradient(area.left(), 0, area.right(), 0)
            for low, high, colour in _ZONES:
                gradient.setColorAt(level_fraction(low), colour)
                gradient.setColorAt(max(0.0, level_fraction(high) - 0.001), colour)
            bar = QRectF(area.left() + 1, area.top() + 1, (area.width() - 2) * fill, area.height() - 2)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(gradient)
            painter.drawRoundedRect(bar, 2, 2)
        if self.reading.held_peak_db > FLOOR_DB:
            peak_x = self._x(area, self.reading.held_peak_db)
            loud = self.reading.held_peak_db > _RED_FROM_DB
            painter.setPen(CLIP_COLOUR if loud else palette.color(QPalette.ColorRole.Text))
            painter.drawLine(int(peak_x), int(area.top() + 1), int(peak_x), int(area.bottom() - 1))

    def _draw_scale(self, painter: QPainter, palette: QPalette, area: QRectF) -> None:
        font = QFont(self.font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.7))
        painter.setFont(font)
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        for db in SCALE_DB:
            x = self._x(area, db)
            painter.drawLine(int(x), int(area.bottom() + 1), int(x), int(area.bottom() + 3))
            label = QRectF(x - 12, area.bottom() + 2, 24, self.height() - area.bottom() - 2)
            painter.drawText(label, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, str(db))

    def _draw_lamp(self, painter: QPainter, palette: QPalette, area: QRectF) -> None:
        lit = self.reading.clipping
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(CLIP_COLOUR if lit else palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(area, 3, 3)
        font = QFont(self.font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.7))
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("white") if lit else palette.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(area, Qt.AlignmentFlag.AlignCenter, "CLIP")
