"""An X server that answers but does not take this client: one line and exit 1 instead of Qt's
abort. A real Xvfb started with ``-auth`` (its own cookie file), and clients that have the
cookie, a wrong one, or none."""

from __future__ import annotations

import os
import secrets
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_bad_input import window
from tests.conftest import _rig_unavailable
from voxdesk.ui.display import unreachable_display

pytestmark = pytest.mark.integration  # starts Xvfb and the window's launcher

_FAMILY_WILD = 0xFFFF  # an Xauthority entry for any host and display


def xauthority(path: Path, cookie: bytes) -> Path:
    """An Xauthority file holding one MIT-MAGIC-COOKIE-1 entry for every display."""
    fields = [b"", b"", b"MIT-MAGIC-COOKIE-1", cookie]  # address, display number, name, data
    path.write_bytes(struct.pack(">H", _FAMILY_WILD) + b"".join(struct.pack(">H", len(f)) + f for f in fields))
    return path


@pytest.fixture(scope="module")
def guarded_display(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An Xvfb that takes only clients with its cookie: its DISPLAY and that cookie's file."""
    if shutil.which("Xvfb") is None:
        _rig_unavailable("Xvfb is not installed (scripts/setup.sh --test installs it)")
    folder = tmp_path_factory.mktemp("xauth")
    cookie = xauthority(folder / "server.xauth", secrets.token_bytes(16))
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-auth", str(cookie), "-nolisten", "tcp", "-noreset"],
        pass_fds=(write_end,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=(folder / "xvfb.log").open("wb"),
    )  # fmt: skip
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()  # written once it accepts connections
    try:
        if not number:
            _rig_unavailable(f"Xvfb did not start: {(folder / 'xvfb.log').read_text()[-500:]}")
        yield f":{number}", cookie
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_window_without_the_cookie_is_one_line_and_exit_1(
    guarded_display: tuple[str, Path], tmp_path: Path
) -> None:
    display, _ = guarded_display
    missing = tmp_path / "no-such.xauth"
    private = {"VOXDESK_DATA_DIR": str(tmp_path / "data"), "VOXDESK_CONFIG_DIR": str(tmp_path / "config")}
    result = window({"DISPLAY": display, "XAUTHORITY": str(missing), **private})
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("voxdesk: the display cannot be opened: ") and f"DISPLAY={display}" in line
    assert "the X server refused this client: Authorization required" in line and str(missing) in line


def test_a_wrong_cookie_is_refused_and_the_right_one_opens(
    guarded_display: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    display, cookie = guarded_display
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", display)
    wrong = xauthority(tmp_path / "wrong.xauth", secrets.token_bytes(16))
    monkeypatch.setenv("XAUTHORITY", str(wrong))
    problem = unreachable_display()
    assert problem is not None and "the X server refused this client: " in problem and str(wrong) in problem
    monkeypatch.setenv("XAUTHORITY", str(cookie))
    assert unreachable_display() is None
    monkeypatch.setenv("DISPLAY", f"{display}.3")
    assert unreachable_display() == (
        f"voxdesk: the display cannot be opened: DISPLAY={display}.3 (the X server has no such screen); is the "
        "desktop session still running, and may this user open windows on it? Without a screen use "
        "`voxdesk transcribe FILE` or `voxdesk serve`"
    )
