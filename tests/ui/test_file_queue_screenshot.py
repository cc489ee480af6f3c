"""A screenshot of the Files tab in the real window under Xvfb, for the README."""

from __future__ import annotations

from tests.conftest import fixture_path
from tests.recognition import assert_recognized
from tests.serve_process import REPO
from tests.speech_fixtures import Fixture
from tests.ui.screenshots import assert_looks_like_a_window, take_screenshot


def test_screenshot_of_the_file_queue_under_xvfb(x_display: str, speech: dict[str, Fixture]) -> None:
    out = REPO / "build" / "screenshots" / "voxdesk-file-queue.png"
    names = ("command09-slt", "long-slt", "passage-slt", "command01-slt")
    text = take_screenshot("tests.ui.file_queue_screenshot", out, [fixture_path(speech[n]) for n in names], x_display)
    assert_recognized(speech["command09-slt"], text)
    assert_looks_like_a_window(out)
