"""A spoken yes or no answers the action waiting for confirmation, for a while after it asked."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.app.actions.test_center import Desk
from voxdesk.app.actions.center import ActionStatus
from voxdesk.app.actions.consent import CONSENT_WINDOW_S, consent


@pytest.mark.parametrize(
    ("said", "agreed"),
    [("Yes.", True), ("Okay", True), ("OK.", True), ("Go ahead!", True), ("No.", False), ("Don't.", False),
     ("Cancel it", False), ("Never mind.", False), ("yes and no", None), ("open the browser", None)],
)  # fmt: skip
def test_a_yes_or_a_no_is_told_from_anything_else(said: str, agreed: bool | None) -> None:
    assert consent(said) is agreed


def asking_desk(tmp_path: Path, now: list[float]) -> Desk:
    """A desk whose own command "set a timer for ..." asks before it runs."""
    (tmp_path / "commands.toml").write_text(
        '[commands.timer]\naction = "timer"\nconfirm = true\n'
        'phrases = ["set a timer for {n:number} {unit:minutes|seconds}"]\n'
    )
    return Desk(tmp_path, clock=lambda: now[0])


def test_yes_runs_the_waiting_action_and_no_cancels_the_next(tmp_path: Path) -> None:
    now = [time.time()]
    desk = asking_desk(tmp_path, now)
    timer = desk.say("set a timer for 4 minutes")
    assert timer is not None and timer.status is ActionStatus.WAITING
    answered = desk.say("Yes.")
    assert answered is not None and (answered.id, answered.status) == (timer.id, ActionStatus.DONE)
    second = desk.say("set a timer for 5 minutes")
    assert second is not None and second.status is ActionStatus.WAITING
    refused = desk.say("No, thanks.")
    assert refused is not None and (refused.id, refused.status) == (second.id, ActionStatus.CANCELLED)
    assert len(desk.center.records) == 2  # the answers are no requests of their own


def test_a_late_yes_or_one_with_nothing_waiting_is_not_understood(tmp_path: Path) -> None:
    now = [time.time()]
    desk = asking_desk(tmp_path, now)
    alone = desk.say("Yes.")
    assert alone is not None and alone.status is ActionStatus.NOT_UNDERSTOOD
    timer = desk.say("set a timer for 4 minutes")
    assert timer is not None
    now[0] += CONSENT_WINDOW_S + 1
    late = desk.say("Yes.")
    assert late is not None and late.status is ActionStatus.NOT_UNDERSTOOD
    assert desk.center.record(timer.id).status is ActionStatus.WAITING  # its links still answer it
