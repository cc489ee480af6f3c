"""Dictated text written by its mode into the focused application, live where the mode allows.

Each utterance gets its mode when its first text arrives: the one a mode hotkey chose, else the
one the ``[writing]`` settings' ``app_modes`` or a mode's ``app_classes`` name for the focused
application, else the ``[writing]`` settings' mode.
While it is spoken, each growth of its committed text is written by that mode and typed
(:class:`~voxdesk.app.actions.live_typing.LiveTyper`); the final text is written and typed the
same way, with a space after it, so the field ends up holding exactly the written final.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass

from voxdesk.app.actions.focus import FocusProbe, mode_for_app
from voxdesk.app.actions.live_typing import LiveTyper
from voxdesk.app.actions.ports import Keyboard
from voxdesk.app.llm.cleanup import Cleaned, clean_up
from voxdesk.app.llm.client import Llm
from voxdesk.app.settings import WritingSettings
from voxdesk.app.writing.modes import DEFAULT_MODES, CleanupStyle, Mode, mode_named
from voxdesk.app.writing.pipeline import write_text
from voxdesk.app.writing.user_mode import user_mode

__all__ = ["Dictation", "ModeChoice", "Written"]

logger = logging.getLogger("voxdesk.actions")

_KEEP = 50  # utterances whose typing state is kept (a final can come after later partials)


@dataclass(frozen=True)
class ModeChoice:
    """The mode dictation writes in now, and why: "hotkey", "app" (with its class) or "default"."""

    mode: str
    how: str
    app: str = ""

    @property
    def label(self) -> str:
        """The mode in a few words, for a chip."""
        if self.how == "app":
            return f"{self.mode} ({self.app})"
        return self.mode if self.how == "default" else f"{self.mode} (hotkey)"


@dataclass(frozen=True)
class Written:
    """What one dictated utterance became: the raw text, the written text, the mode, what was
    typed; ``as_heard`` is the written text before the LLM cleaned it up, and ``note`` why it
    was not cleaned up when the mode asks for that."""

    raw: str
    text: str
    mode: str
    typed: str
    as_heard: str = ""
    note: str = ""


@dataclass
class _Utterance:
    typer: LiveTyper
    pick: asyncio.Task[Mode]
    committed: str = ""
    final: bool = False


class Dictation:
    """Writes and types dictated utterances; ``keyboard`` and ``probe`` are asked for at first use."""

    def __init__(
        self,
        settings: WritingSettings,
        keyboard: Callable[[], Keyboard],
        probe: Callable[[], FocusProbe],
        on_warning: Callable[[str], None] | None = None,
        llm: Callable[[], tuple[Llm, float]] | None = None,
    ) -> None:
        """``llm``: the model that cleans up dictation, and its time budget in seconds."""
        self.settings = settings
        self._llm = llm
        self._keyboard = keyboard
        self._probe = probe
        self._on_warning = on_warning
        self._chosen: str | None = None  # the mode a hotkey chose, for the next utterances
        self._utterances: dict[int, _Utterance] = {}
        self._listeners: list[Callable[[ModeChoice], None]] = []
        self.choice = ModeChoice(settings.mode, "default")
        self.latencies: list[float] = []  # committed text to its keystrokes, seconds, every utterance
        self._unnamed = itertools.count(-1, -1)  # ids for finals that came without one
        self._told_unsupported = False  # why the focused app cannot be told is said once

    # ---- the mode -------------------------------------------------------------------------

    @property
    def chosen(self) -> str | None:
        """The mode a hotkey chose, or None: by the focused application."""
        return self._chosen

    def choose(self, name: str | None) -> None:
        """Write the next utterances in the mode ``name`` (None: by the focused application again)."""
        if name is not None and mode_named(name) is None:
            raise ValueError(f"{name!r} is not a mode; the modes are {', '.join(m.name for m in DEFAULT_MODES)}")
        self._chosen = name
        self._announce(ModeChoice(name, "hotkey") if name is not None else ModeChoice(self.settings.mode, "default"))

    def toggle(self, name: str) -> None:
        """A mode's shortcut: write in ``name`` from now, or by the focused application again when
        it was chosen already. An unknown name is a warning."""
        try:
            self.choose(None if self._chosen is not None and self._chosen.casefold() == name.casefold() else name)
        except ValueError as error:
            self._warn(f"the mode shortcut: {error}")

    def _warn(self, message: str) -> None:
        if self._on_warning is not None:
            self._on_warning(message)

    def add_choice_listener(self, callback: Callable[[ModeChoice], None]) -> Callable[[], None]:
        """Call ``callback`` with each new mode choice (a hotkey, or an utterance's pick)."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _announce(self, choice: ModeChoice) -> None:
        self.choice = choice
        for callback in list(self._listeners):
            try:
                callback(choice)
            except Exception:
                logger.exception("a mode listener failed")

    async def _pick(self) -> Mode:
        if self._chosen is not None:
            choice = ModeChoice(self._chosen, "hotkey")
        else:
            probe = self._probe()
            if probe.unsupported is not None and not self._told_unsupported:
                self._told_unsupported = True
                self._warn(f"the mode is not picked by the focused application here: {probe.unsupported}")
            app = await probe.focused_app()
            by_app = mode_for_app(app, DEFAULT_MODES, self.settings.app_modes)
            if by_app is not None and app is not None:
                choice = ModeChoice(by_app.name, "app", app.app_class)
            else:
                choice = ModeChoice(self.settings.mode, "default")
        mode, warnings = user_mode(self.settings, choice.mode)
        for warning in warnings:
            self._warn(warning)
        if choice != self.choice:
            self._announce(choice)
        return mode

    # ---- typing ---------------------------------------------------------------------------

    def committed(self, utterance_id: int, committed: str) -> None:
        """An utterance's committed text now reads ``committed`` (grown, or emptied by a retraction)."""
        state = self._open(utterance_id)
        if state.final:
            return
        state.committed = committed
        if state.pick.done():
            self._follow(state)

    def _follow(self, state: _Utterance) -> None:
        if not state.pick.done() or state.pick.cancelled() or state.pick.exception() is not None or state.final:
            return  # a pick still running follows once it is done
        if next(iter(self._utterances.values())) is not state:
            return  # an earlier utterance is still being typed: this one's keys would land inside it
        mode = state.pick.result()
        if mode.live_typing:
            state.typer.want(write_text(state.committed.strip(), mode) if state.committed.strip() else "")

    def _open(self, utterance_id: int) -> _Utterance:
        state = self._utterances.get(utterance_id)
        if state is None:
            state = _Utterance(LiveTyper(self._keyboard()), asyncio.ensure_future(self._pick()))
            state.pick.add_done_callback(lambda _: self._follow(state))
            self._utterances[utterance_id] = state
            while len(self._utterances) > _KEEP:
                del self._utterances[next(iter(self._utterances))]
        return state

    async def caught_up(self, utterance_id: int) -> str:
        """Until what the utterance typed live is its newest committed text as its mode writes it
        (nothing, for a mode that does not type live); returns what it typed."""
        state = self._utterances.get(utterance_id)
        if state is None:
            return ""
        await asyncio.wait([state.pick])
        self._follow(state)
        return await state.typer.settle()

    async def finish(self, utterance_id: int | None, text: str) -> Written:
        """Type the utterance's final ``text`` as its mode writes it, and a space; returns what it became."""
        key = utterance_id if utterance_id is not None else next(self._unnamed)
        state = self._open(key)
        self._drop_before(key)
        state.final = True
        try:
            mode = await state.pick
            as_heard = write_text(text, mode)
            cleaned = await self._clean_up(as_heard, mode)
            state.typer.want(cleaned.text + " " if cleaned.text else "")
            typed = await state.typer.settle()
        finally:
            self.latencies += state.typer.latencies
            self._close(key)
        return Written(text, cleaned.text, mode.name, typed, as_heard, cleaned.note)

    async def _clean_up(self, text: str, mode: Mode) -> Cleaned:
        """The mode's cleanup of ``text``; none for a mode that typed it live (its keys are in the
        app already, and retyping the utterance would jump under the user's eyes)."""
        if mode.cleanup is CleanupStyle.NONE:
            return Cleaned(text)
        if mode.live_typing:
            return Cleaned(text, f"not cleaned up: the {mode.name} mode types while you speak")
        if self._llm is None:
            return Cleaned(text, "not cleaned up: no LLM is set up")
        llm, budget_s = self._llm()
        vocabulary = tuple(entry.text for entry in mode.vocabulary)
        app = self.choice.app if self.choice.how == "app" else ""
        return await clean_up(
            llm, text, mode.cleanup, budget_s, prompt=mode.cleanup_prompt, vocabulary=vocabulary, app=app
        )

    async def erase(self, utterance_id: int | None) -> None:
        """Take back what the utterance typed live: it was a command, or no text at all in the end."""
        if utterance_id is None or (state := self._utterances.get(utterance_id)) is None:
            return
        self._drop_before(utterance_id)
        state.final = True
        state.typer.want("")
        try:
            await state.typer.settle()
        finally:
            self._close(utterance_id)

    def _drop_before(self, key: int) -> None:
        # Finals come in order: an earlier utterance still open gets none; what it typed stays.
        for older in list(itertools.takewhile(lambda k: k != key, self._utterances)):
            del self._utterances[older]

    def _close(self, key: int) -> None:
        """The utterance is done (an id used again is a new one); the next one types what it has."""
        self._utterances.pop(key, None)
        if self._utterances:
            self._follow(next(iter(self._utterances.values())))
