"""A one-line text field for the X11 typing tests, run as its own process under Xvfb.

It writes its text to the file named by argv[1] whenever the text changes, and prints READY
once its window is shown; argv[2], if given, is its window title.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLineEdit


def main() -> None:
    app = QApplication(sys.argv[:1])
    out = Path(sys.argv[1])
    field = QLineEdit()
    field.setWindowTitle(sys.argv[2] if len(sys.argv) > 2 else "voxdesk-test-field")
    field.setGeometry(0, 0, 600, 60)
    field.textChanged.connect(lambda text: out.write_text(text, encoding="utf-8"))
    field.show()
    field.activateWindow()
    field.setFocus()
    QTimer.singleShot(200, lambda: print("READY", flush=True))
    app.exec()


if __name__ == "__main__":
    main()
