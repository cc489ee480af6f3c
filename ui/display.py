"""Whether the display the environment names can be reached, checked with a plain socket before
Qt loads: Qt aborts the process (status 134, several lines of advice) when it cannot open one."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path

__all__ = ["unreachable_display"]

_X_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(\.\d+)?$")
_TIMEOUT_S = 2.0


def unreachable_display() -> str | None:
    """One line saying why the display named by ``WAYLAND_DISPLAY`` / ``DISPLAY`` cannot be
    opened, or ``None`` when one of them answers (Qt falls back from Wayland to X), when neither is
    set (:func:`voxdesk.ui.desktop.display_problem` says so), off Linux, or when
    ``QT_QPA_PLATFORM`` picks the platform."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    failures = []
    if wayland := os.environ.get("WAYLAND_DISPLAY"):
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        path = Path(wayland) if os.path.isabs(wayland) or not runtime else Path(runtime) / wayland
        if (failure := _connect_unix(str(path))) is None:
            return None
        failures.append(f"WAYLAND_DISPLAY={wayland} ({path}: {failure})")
    if x_display := os.environ.get("DISPLAY"):
        if (failure := _reach_x(x_display)) is None:
            return None
        failures.append(f"DISPLAY={x_display} ({failure})")
    if not failures:
        return None
    return (
        f"voxdesk: the display cannot be opened: {' and '.join(failures)}; is the desktop session still "
        "running? Without a screen use `voxdesk transcribe FILE` or `voxdesk serve`"
    )


def _reach_x(display: str) -> str | None:
    """Why the X server of ``display`` (``:0``, ``host:0.0``, ``unix:0``) does not answer, or ``None``."""
    match = _X_DISPLAY.match(display)
    if match is None:
        return "not a display name like :0 or host:0"
    host, number = match["host"], int(match["number"])
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        failure = _connect_unix(path)
        # Xlib also tries the abstract socket, all a sandbox with its own /tmp may have.
        return None if failure is None or _connect_unix(f"\0{path}") is None else f"{path}: {failure}"
    try:
        socket.create_connection((host, 6000 + number), timeout=_TIMEOUT_S).close()
    except OSError as error:
        return f"{host}:{6000 + number}: {error.strerror or error}"
    return None


def _connect_unix(path: str) -> str | None:
    """Why nothing accepts connections on the Unix socket ``path``, or ``None``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(_TIMEOUT_S)
        try:
            client.connect(path)
        except OSError as error:
            return error.strerror or str(error)
    return None
