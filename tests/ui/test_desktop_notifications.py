"""Desktop notifications reach a real notification daemon (dunst on Xvfb, its own D-Bus
session bus): a timer alarm on a desktop without a system tray is not lost."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.app.actions.fakes import RecordingLauncher
from tests.desktop_rig import NotificationDaemon
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings
from voxdesk.ui.desktop_services import DesktopNotifier


def test_a_timer_alarm_without_a_tray_is_a_notification_of_the_desktops_service(
    notification_daemon: NotificationDaemon, tmp_path: Path
) -> None:
    services = Services(notifier=DesktopNotifier(None), launcher=RecordingLauncher())
    center = ActionCenter(ActionSettings(), services, commands=CommandSource(user_path=tmp_path / "commands.toml"))

    async def set_and_ring() -> None:
        timer = await center.handle_utterance("set a timer for 1 second")
        assert timer is not None and timer.status is ActionStatus.DONE, timer
        deadline = time.monotonic() + 20
        while not (notification_daemon.shown.exists() and notification_daemon.shown.read_text()):
            assert time.monotonic() < deadline, "dunst showed no notification"
            await asyncio.sleep(0.05)

    asyncio.run(set_and_ring())
    assert notification_daemon.shown.read_text() == "Voxdesk|Timer|Your 1 second timer is up\n"
