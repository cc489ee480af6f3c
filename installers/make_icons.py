"""Application icons for the Windows and macOS installers, from resources/icons/voxdesk.svg.

Qt renders the SVG (no display needed) to build/icons/voxdesk.png (1024 px); Pillow turns that
into build/icons/voxdesk.ico (Windows) and build/icons/voxdesk.icns (macOS), which
installers/voxdesk.spec and installers/windows/voxdesk.iss pick up. Linux uses the SVG itself.

    python installers/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "resources" / "icons" / "voxdesk.svg"
OUT = REPO / "build" / "icons"
SIZE = 1024


def render_png(path: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"make_icons: cannot read {SOURCE}")
    image = QImage(SIZE, SIZE, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    if not image.save(str(path)):
        raise SystemExit(f"make_icons: cannot write {path}")
    del app


def main() -> int:
    from PIL import Image

    OUT.mkdir(parents=True, exist_ok=True)
    png = OUT / "voxdesk.png"
    render_png(png)
    with Image.open(png) as image:
        image.save(OUT / "voxdesk.ico", sizes=[(size, size) for size in (16, 24, 32, 48, 64, 128, 256)])
        image.save(OUT / "voxdesk.icns")
    print(f"make_icons: {', '.join(p.name for p in sorted(OUT.iterdir()))} in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
