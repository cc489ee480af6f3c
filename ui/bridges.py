"""Qt signals for the callbacks of the Qt-free parts (controller, action center, file queue).

A slot connected to a bridge's signal runs on the Qt thread whichever thread the callback came
from. Each bridge subscribes when it is made and unsubscribes when its parent widget is
destroyed. Signals carry one class each where there is one (Qt passes it as a Python object);
the controller's events are a union, so ``happened`` is ``Signal(object)``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, Signal

from voxdesk.app.actions.center import ActionCenter, ActionRecord
from voxdesk.app.actions.kinds import ActionMode
from voxdesk.app.files.queue import FileJob, FileQueue
from voxdesk.app.listening.capture import AudioLevel
from voxdesk.app.listening.controller import Controller

__all__ = ["ActionsBridge", "ControllerBridge", "FileQueueBridge"]


class ControllerBridge(QObject):
    """Controller events as Qt signals; the audio level, 50 a second, on a signal of its own
    so that only the meter is woken by it."""

    happened = Signal(object)
    """A :data:`~voxdesk.app.listening.events.ControllerEvent` other than the audio level."""
    level = Signal(AudioLevel)
    """The level of one captured chunk."""

    def __init__(self, controller: Controller, parent: QObject) -> None:
        super().__init__(parent)
        _forget_with(parent, controller.subscribe(self.happened.emit), controller.subscribe_levels(self.level.emit))


class ActionsBridge(QObject):
    """Action center records, mode and log lines as Qt signals."""

    record_changed = Signal(ActionRecord)
    mode_changed = Signal(ActionMode)
    log_added = Signal(str)

    def __init__(self, center: ActionCenter, parent: QObject) -> None:
        super().__init__(parent)
        _forget_with(
            parent,
            center.add_record_listener(self.record_changed.emit),
            center.add_mode_listener(self.mode_changed.emit),
            center.add_log_listener(self.log_added.emit),
        )


class FileQueueBridge(QObject):
    """File queue changes as a Qt signal."""

    changed = Signal(FileJob)

    def __init__(self, queue: FileQueue, parent: QObject) -> None:
        super().__init__(parent)
        _forget_with(parent, queue.subscribe(self.changed.emit))


def _forget_with(parent: QObject, *removers: Callable[[], None]) -> None:
    # A module-level slot: it must not keep the parent alive or touch it once deleted.
    parent.destroyed.connect(partial(_forget, removers))


def _forget(removers: tuple[Callable[[], None], ...], *args: Any) -> None:
    for remove in removers:
        remove()
