"""Whether the display the environment names can be opened, checked before Qt loads: Qt aborts
the process (status 134, several lines of advice) when it cannot open one. A plain socket says
whether a server answers; for X, libxcb (what Qt's xcb platform connects with) then says whether
that server takes this client, e.g. with the cookie it has."""

from __future__ import annotations

import ctypes
import os
import re
import socket
import sys
from pathlib import Path

from voxdesk.app.files.native_stderr import native_stderr

__all__ = ["unreachable_display"]

_X_DISPLAY = re.compile(r"^(?P<host>[^:]*):(?P<number>\d+)(\.\d+)?$")
_TIMEOUT_S = 2.0
_XCB_CONN_CLOSED_INVALID_SCREEN = 6  # xcb.h's error codes: 0 none, 1 a socket or set-up failure


def unreachable_display() -> str | None:
    """One line saying why the display named by ``WAYLAND_DISPLAY`` / ``DISPLAY`` cannot be
    opened, or ``None`` when one of them can (Qt falls back from Wayland to X), when neither is
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
        "running, and may this user open windows on it? Without a screen use `voxdesk transcribe FILE` or "
        "`voxdesk serve`"
    )


def _reach_x(display: str) -> str | None:
    """Why the X server of ``display`` (``:0``, ``host:0.0``, ``unix:0``) does not answer or does not
    take this client, or ``None``."""
    match = _X_DISPLAY.match(display)
    if match is None:
        return "not a display name like :0 or host:0"
    host, number = match["host"], int(match["number"])
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        failure = _connect_unix(path)
        # Xlib also tries the abstract socket, all a sandbox with its own /tmp may have.
        if failure is not None and _connect_unix(f"\0{path}") is not None:
            return f"{path}: {failure}"
    else:
        try:
            socket.create_connection((host, 6000 + number), timeout=_TIMEOUT_S).close()
        except OSError as error:
            return f"{host}:{6000 + number}: {error.strerror or error}"
    return _x_refusal(display)


def _x_refusal(display: str) -> str | None:
    """Why an X server that answers on its socket does not take this client through libxcb (no
    cookie it accepts, no such screen), or ``None``; ``None`` too where libxcb is missing, as
    Qt's xcb platform then cannot load and says so itself."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    with native_stderr() as said:  # libxcb writes the server's reason for a refusal there
        # As Qt asks: with the screen wanted back, which makes libxcb check that the screen exists.
        connection = xcb.xcb_connect(display.encode(), ctypes.byref(ctypes.c_int()))  # never NULL
        error = int(xcb.xcb_connection_has_error(connection))
        xcb.xcb_disconnect(connection)
    if error == 0:
        return None
    if error == _XCB_CONN_CLOSED_INVALID_SCREEN:
        return "the X server has no such screen"
    cookies = os.environ.get("XAUTHORITY") or str(Path.home() / ".Xauthority")
    reason = " ".join(said) or f"libxcb error {error}"
    return f"the X server refused this client: {reason} (cookies read from {cookies})"


def _connect_unix(path: str) -> str | None:
    """Why nothing accepts connections on the Unix socket ``path``, or ``None``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(_TIMEOUT_S)
        try:
            client.connect(path)
        except OSError as error:
            return error.strerror or str(error)
    return None
