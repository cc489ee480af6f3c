"""Recording fakes for the voice action tests (also usable by other tests, e.g. end-to-end).

Each one stands in for a desktop service and records what it was asked to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.focus import FocusedApp
from voxdesk.app.actions.keys import KeyCombo
from voxdesk.app.actions.ports import ProcessResult
from voxdesk.app.actions.services import Services


class RecordingOpener:
    """A URL opener that records instead of starting a browser."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    async def __call__(self, url: str) -> None:
        self.urls.append(url)


class RecordingLauncher:
    """An application launcher that records instead of starting anything."""

    def __init__(self) -> None:
        self.apps: list[str] = []

    async def launch(self, app: str) -> str:
        self.apps.append(app)
        return f"recorded {app}"


class RecordingNotifier:
    """A notifier that records notifications."""

    def __init__(self) -> None:
        self.notifications: list[tuple[str, str]] = []

    def notify(self, title: str, message: str) -> None:
        self.notifications.append((title, message))


class MemoryClipboard:
    """A clipboard in memory."""

    def __init__(self, text: str = "") -> None:
        self.content = text

    def text(self) -> str:
        return self.content

    def set_text(self, text: str) -> None:
        self.content = text


class RecordingKeyboard:
    """A typing backend that keeps a model of the focused text field."""

    name = "recording"

    def __init__(self) -> None:
        self.text = ""
        self.pressed: list[str] = []
        self.window: str | None = None  # the title focused_window reports

    async def type_text(self, text: str) -> None:
        self.text += text

    async def press(self, combo: KeyCombo) -> None:
        self.pressed.append(str(combo))

    async def backspace(self, count: int) -> None:
        self.text = self.text[:-count] if count else self.text

    async def focused_window(self) -> str | None:
        return self.window


class RecordingRunner:
    """A process runner that records argument lists and runs nothing."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def __call__(self, argv: Sequence[str], *, wait_s: float) -> ProcessResult:
        self.calls.append(list(argv))
        return ProcessResult(0)


class StaticProbe:
    """FAKE focus probe: the focused application is whatever the test sets."""

    unsupported: str | None = None

    def __init__(self, app: FocusedApp | None) -> None:
        self.app = app

    async def focused_app(self) -> FocusedApp | None:
        return self.app


def recording_services() -> Services:
    """Actions that record instead of opening, launching, typing or running anything."""
    return Services(
        notifier=RecordingNotifier(),
        open_url=RecordingOpener(),
        launcher=RecordingLauncher(),
        keyboard=RecordingKeyboard(),
        run_process=RecordingRunner(),
        focus=StaticProbe(None),
    )


def not_understood(record: ActionRecord | None) -> bool:
    """Whether ``record`` says its utterance was not understood (no command ran)."""
    return record is not None and record.status is ActionStatus.NOT_UNDERSTOOD
