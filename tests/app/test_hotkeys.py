"""System-wide shortcuts: real key presses from xdotool on an Xvfb display reach pynput."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading

import pytest

from voxdesk.app.hotkeys import GlobalHotkeys, to_pynput_combination, unavailable_reason


def test_qt_key_sequences_become_pynput_combinations() -> None:
    assert to_pynput_combination("Ctrl+Alt+Space") == "<ctrl>+<alt>+<space>"
    assert to_pynput_combination("Meta+Shift+F9") == "<cmd>+<shift>+<f9>"
    assert to_pynput_combination("Ctrl+K") == "<ctrl>+k"
    with pytest.raises(ValueError, match="cannot use 'Ctrl\\+\\+' as a shortcut"):
        to_pynput_combination("Ctrl++")


def test_wayland_and_no_display_are_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    assert "Wayland" in (unavailable_reason() or "")
    monkeypatch.delenv("XDG_SESSION_TYPE")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert "X11 display" in (unavailable_reason() or "")


async def stop_and_join(hotkeys: GlobalHotkeys, env: dict[str, str]) -> None:
    """Stop the shortcuts and see their listener threads end (on X11, at the next key event)."""
    threads: list[threading.Thread] = list(hotkeys._listeners)
    hotkeys.stop()
    await asyncio.to_thread(subprocess.run, ["xdotool", "key", "shift"], env=env, check=True)
    for thread in threads:
        await asyncio.to_thread(thread.join, 10)
        assert not thread.is_alive()


def test_toggle_and_hold_keys_pressed_anywhere_reach_the_app(x_display: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", x_display)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    env = {**os.environ, "DISPLAY": x_display}

    async def scenario() -> list[str]:
        heard: list[str] = []
        released = asyncio.Event()
        loop = asyncio.get_running_loop()

        def release() -> None:
            heard.append("release")
            loop.call_soon_threadsafe(released.set)

        hotkeys = GlobalHotkeys(
            "Ctrl+Alt+Space",
            "F9",
            on_toggle=lambda: heard.append("toggle"),
            on_hold_press=lambda: heard.append("hold"),
            on_hold_release=release,
        )
        assert hotkeys.start() is None
        try:
            # The X server hands the listener its events in order: once the release is heard,
            # whatever the keys before it caused has been heard too.
            for keys in (["key", "ctrl+alt+space"], ["keydown", "F9"], ["keydown", "F9"], ["keyup", "F9"]):
                await asyncio.to_thread(subprocess.run, ["xdotool", *keys], env=env, check=True)
            await asyncio.wait_for(released.wait(), 10)
        finally:
            await stop_and_join(hotkeys, env)
        return heard

    assert asyncio.run(scenario()) == ["toggle", "hold", "release"]  # a repeated press is one hold


def test_a_mode_shortcut_that_is_no_shortcut_is_left_out_with_its_name_and_the_rest_work(
    x_display: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPLAY", x_display)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    env = {**os.environ, "DISPLAY": x_display}

    async def scenario() -> tuple[str | None, str]:
        chosen: asyncio.Queue[str] = asyncio.Queue()
        hotkeys = GlobalHotkeys(
            "",
            "",
            on_toggle=lambda: None,
            on_hold_press=lambda: None,
            on_hold_release=lambda: None,
            mode_shortcuts={"code": "Ctrl++", "prose": "Ctrl+Alt+P"},
            on_mode=chosen.put_nowait,
        )
        said = hotkeys.start()
        try:
            await asyncio.to_thread(subprocess.run, ["xdotool", "key", "ctrl+alt+p"], env=env, check=True)
            return said, await asyncio.wait_for(chosen.get(), 10)
        finally:
            await stop_and_join(hotkeys, env)

    said, mode = asyncio.run(scenario())
    assert said == "ignored writing.mode_shortcuts.code: cannot use 'Ctrl++' as a shortcut"
    assert mode == "prose"
