"""Windows: the foreground window's executable and window class, from the Win32 API (written
for Windows, not run on it in this project's tests)."""

from __future__ import annotations

import asyncio
import sys

__all__ = ["foreground_window"]

if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
    _user32 = ctypes.WinDLL("user32", use_last_error=True)
    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

    def _foreground_sync() -> tuple[str, str] | None:
        """The foreground window's executable path and window class; None without one."""
        window = _user32.GetForegroundWindow()
        if not window:
            return None
        window_class = ctypes.create_unicode_buffer(256)
        _user32.GetClassNameW(window, window_class, len(window_class))
        pid = wintypes.DWORD()
        _user32.GetWindowThreadProcessId(window, ctypes.byref(pid))
        process = _kernel32.OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, False, pid.value)
        executable = ""
        if process:
            try:
                path, size = ctypes.create_unicode_buffer(1024), wintypes.DWORD(1024)
                if _kernel32.QueryFullProcessImageNameW(process, 0, path, ctypes.byref(size)):
                    executable = path.value
            finally:
                _kernel32.CloseHandle(process)
        return executable, window_class.value


async def foreground_window() -> tuple[str, str] | None:
    """The foreground window's executable path and window class; None without one, or off Windows."""
    if sys.platform == "win32":
        return await asyncio.to_thread(_foreground_sync)
    return None
