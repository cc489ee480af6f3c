"""The action center: from a final utterance to a recorded, previewed, confirmable action.

Qt-free. :class:`~voxdesk.app.voice_actions.VoiceActions` calls
:meth:`ActionCenter.handle_utterance` with each final utterance of the controller, one at a
time; the window follows :class:`ActionRecord` changes, the mode and the log through the
``add_*_listener`` callbacks and calls :meth:`~ActionCenter.confirm`, :meth:`~ActionCenter.cancel`
and :meth:`~ActionCenter.undo`. Everything runs on one asyncio loop.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import enum
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from voxdesk.app.actions.commands import Command, CommandSource
from voxdesk.app.actions.consent import CONSENT_WINDOW_S, consent
from voxdesk.app.actions.dictation import Dictation
from voxdesk.app.actions.executors import ActionRequest, Executor, Outcome, Undo
from voxdesk.app.actions.focus import FocusProbe, choose_focus_probe
from voxdesk.app.actions.kinds import Action, ActionMode, RecordSource, SlotValue
from voxdesk.app.actions.matching import (
    DEFAULT_THRESHOLD,
    Match,
    closest_commands,
    match_utterance,
    strip_wake_phrase,
)
from voxdesk.app.actions.plan import Plan, PlanStep, match_plan
from voxdesk.app.actions.ports import ActionError, Keyboard
from voxdesk.app.actions.registry import ACTIONS, describe
from voxdesk.app.actions.selection import read_selection
from voxdesk.app.actions.services import Services
from voxdesk.app.listening.transcript import Utterance
from voxdesk.app.llm.client import Llm, LlmError
from voxdesk.app.llm.edit import edit_text
from voxdesk.app.llm.question import answer_question, is_question
from voxdesk.app.llm.rewrite import Rewritten, rewrite
from voxdesk.app.llm.runtime import llm_for, runtime_key
from voxdesk.app.settings import ActionSettings, WritingSettings
from voxdesk.app.writing.user_mode import user_mode

__all__ = ["ActionCenter", "ActionRecord", "ActionStatus", "IntentFallback"]

logger = logging.getLogger("voxdesk.actions")

_KEEP_RECORDS = 200
_KEEP_LOG = 500
T = TypeVar("T")


class ActionStatus(enum.StrEnum):
    """Where an action stands."""

    WAITING = "waiting for confirmation"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    UNDONE = "undone"
    NOT_UNDERSTOOD = "not understood"  # no command matched, nor did the LLM pick one


@dataclass
class ActionRecord:
    """One recognized action: what was said, what it will do or did, and how it went."""

    id: int
    command: str  # the command's name; "dictation" for dictated text
    action: Action
    slots: dict[str, SlotValue]
    preview: str  # what it will do, in plain words
    utterance: str
    utterance_id: int | None
    source: RecordSource
    needs_confirmation: bool
    status: ActionStatus
    created_at: float
    finished_at: float | None = None
    message: str = ""  # the result or the error, in plain words
    can_undo: bool = False

    @property
    def can_confirm(self) -> bool:
        return self.status is ActionStatus.WAITING

    @property
    def can_cancel(self) -> bool:
        return self.status is ActionStatus.WAITING


class IntentFallback(Protocol):
    """Picks the commands for an utterance no phrase matched (an LLM)."""

    async def pick(self, text: str, commands: Sequence[Command]) -> Sequence[Match]:
        """The commands meant, in order (several for a request of several steps); empty for none."""
        ...


@dataclass
class _Listeners:
    records: list[Callable[[ActionRecord], None]] = field(default_factory=list)
    mode: list[Callable[[ActionMode], None]] = field(default_factory=list)
    log: list[Callable[[str], None]] = field(default_factory=list)
    alarms: list[Callable[[str], None]] = field(default_factory=list)


class ActionCenter:
    """Matches final utterances to commands and runs them, with preview, confirmation and undo.

    ``services`` are the injected desktop pieces (tests inject recording ones); ``commands``
    defaults to the shipped commands plus the user's file; ``fallback`` asks an LLM when
    nothing matches (built from the settings when ``settings.llm_fallback`` is on). ``llm`` is
    the model for cleanup, edits, questions and that fallback (default: the one the settings
    name, built again when they change). Dictation is written by the modes of ``writing``
    (:class:`~voxdesk.app.actions.dictation.Dictation`).
    """

    def __init__(
        self,
        settings: ActionSettings,
        services: Services | None = None,
        *,
        commands: CommandSource | None = None,
        fallback: IntentFallback | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        clock: Callable[[], float] = time.time,
        writing: WritingSettings | None = None,
        llm: Llm | None = None,
    ) -> None:
        self.settings = settings
        self._given_llm = llm
        self.services = services if services is not None else Services()
        self._listeners = _Listeners()
        self._fallback = fallback
        self.threshold = threshold
        self._clock = clock
        self._executor = Executor(self.services, settings, self, clock)
        self.dictation = Dictation(
            writing or WritingSettings(),
            self._executor.keyboard,
            self._focus_probe,
            on_warning=self._warning,
            llm=self._llm_client,
        )
        self._mode = _mode_of(settings.mode) or ActionMode.COMMAND
        # The settings' LLM under "", another model re-processing from the history under "other".
        self._clients: dict[str, tuple[tuple[str, ...], Llm]] = {}
        self._closing: set[asyncio.Task[None]] = set()  # LLMs the settings no longer name
        self._records: collections.OrderedDict[int, ActionRecord] = collections.OrderedDict()
        self._commands: dict[int, Command] = {}  # the command behind each record
        self._plans: dict[int, Plan] = {}  # the plan behind each plan record
        self._undo: dict[int, Undo] = {}
        self._log: collections.deque[str] = collections.deque(maxlen=_KEEP_LOG)
        self._next_id = 1
        # What "copy that" copies: the last typed text, or the last utterance that was no command.
        self._last_text = ""
        self._source = commands if commands is not None else CommandSource(on_warning=self._warning)
        if self._source.on_warning is None:
            self._source.on_warning = self._warning
            for warning in self._source.warnings:
                self._log_line(f"warning: {warning}")

    # ---- state the window shows -------------------------------------------------------------

    @property
    def mode(self) -> ActionMode:
        """Command or dictation mode."""
        return self._mode

    def set_mode(self, mode: str) -> None:
        """Switch between command and dictation mode (``mode`` is an ActionMode or its name)."""
        new_mode = _mode_of(mode)
        if new_mode is None:
            raise ValueError(f"mode must be one of {', '.join(ActionMode)}")
        if new_mode is not self._mode:
            self._mode = new_mode
            self._log_line(f"switched to {new_mode} mode")
            self._emit(self._listeners.mode, new_mode)

    def update_settings(self, settings: ActionSettings, writing: WritingSettings | None = None) -> None:
        """Use new settings (wake phrase, search address, LLM, writing); the mode follows a changed setting."""
        if writing is not None:
            self.dictation.settings = writing
        old_mode = self.settings.mode
        self.settings = settings
        self._executor.settings = settings
        if settings.mode != old_mode and _mode_of(settings.mode) is not None:
            self.set_mode(settings.mode)

    @property
    def commands(self) -> tuple[Command, ...]:
        """The commands in effect (the user's file is reloaded when it changed)."""
        return self._source.commands()

    @property
    def records(self) -> list[ActionRecord]:
        """Copies of the records, oldest first."""
        return [_copy(r) for r in self._records.values()]

    def record(self, record_id: int) -> ActionRecord:
        """A copy of one record; KeyError for an unknown id."""
        return _copy(self._records[record_id])

    def newest(self, *, waiting: bool = False, undoable: bool = False) -> ActionRecord | None:
        """A copy of the newest record that waits for confirmation (``waiting``) or can be
        undone (``undoable``); what the window's keyboard shortcuts act on."""
        for record in reversed(self._records.values()):
            if (waiting and record.can_confirm) or (undoable and record.can_undo):
                return _copy(record)
        return None

    @property
    def log(self) -> list[str]:
        """The action log, oldest line first."""
        return list(self._log)

    def add_record_listener(self, callback: Callable[[ActionRecord], None]) -> Callable[[], None]:
        """Call ``callback`` with a copy of each record whenever it is created or changes."""
        return self._add(self._listeners.records, callback)

    def add_mode_listener(self, callback: Callable[[ActionMode], None]) -> Callable[[], None]:
        """Call ``callback`` with the new mode whenever it changes."""
        return self._add(self._listeners.mode, callback)

    def add_log_listener(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback`` with each new log line (actions and warnings)."""
        return self._add(self._listeners.log, callback)

    def add_alarm_listener(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """Call ``callback`` with an alarm's message when one goes off (a timer): the window
        shows it, the speaker says it."""
        return self._add(self._listeners.alarms, callback)

    @property
    def hears_alarms(self) -> bool:
        """Whether anyone listens for alarms (besides the desktop's notifications)."""
        return bool(self._listeners.alarms)

    def alarm(self, message: str) -> None:
        """An alarm went off: logged, and told to the alarm listeners."""
        self._log_line(f"alarm: {message}", level=logging.WARNING)
        self._emit(self._listeners.alarms, message)

    def expire_undo(self, undo: Undo) -> None:
        """What ``undo`` would take back is over (its timer went off): its record's *Undo* goes."""
        for record_id, held in list(self._undo.items()):
            if held is undo:
                del self._undo[record_id]
                record = self._records.get(record_id)
                if record is not None:
                    record.can_undo = False
                    self._changed(record)

    # ---- the flow --------------------------------------------------------------------------

    def transcript_changed(self, utterance: Utterance) -> None:
        """An utterance's text changed while it is spoken: in dictation mode, type it live."""
        if self._mode is ActionMode.DICTATION and not utterance.final:
            self.dictation.committed(utterance.id, utterance.committed)

    async def handle_utterance(self, text: str, utterance_id: int | None = None) -> ActionRecord | None:
        """Act on one final utterance; returns its record (a copy): the command's, the dictated
        text's, or one that says it was not understood; None when there was nothing to act on
        (no text, or no wake phrase).

        It returns once the action has run, or once it waits for confirmation. Call it for one
        utterance at a time, in order, so typed text arrives in the order it was said.
        """
        text = text.strip()
        commands = self.commands
        addressed = strip_wake_phrase(text, self.settings.wake_phrase)
        if self._mode is ActionMode.DICTATION and text:
            if addressed is not None:
                control = [c for c in commands if c.dictation]
                found = match_utterance(addressed, control, threshold=self.threshold)
                if found is not None:
                    await self.dictation.erase(utterance_id)  # what it typed live was no text
                    return await self._start(found, text, utterance_id, "phrase")
            return await self._dictate(text, utterance_id)
        await self.dictation.erase(utterance_id)  # no text in the end, or the mode changed while it was said
        if not text:
            return None
        if addressed is None:
            self._last_text = text
            return None
        answered = await self._answer_waiting(addressed)
        if answered is not None:
            return answered
        steps = match_plan(addressed, commands, self.threshold)
        if steps is not None:
            return self._propose_plan(steps, text, utterance_id, "phrase")
        found = match_utterance(addressed, commands, threshold=self.threshold)
        if found is not None:
            return await self._start(found, text, utterance_id, "phrase")
        picked = await self._ask_fallback(addressed, commands)
        if len(picked) > 1:
            return self._propose_plan(picked, text, utterance_id, "llm")
        if picked:
            return await self._start(picked[0], text, utterance_id, "llm")
        self._last_text = addressed
        if self.settings.llm_fallback and is_question(addressed):
            return await self._ask(addressed, text, utterance_id)
        return self._not_understood(text, utterance_id)

    async def _answer_waiting(self, said: str) -> ActionRecord | None:
        """A spoken yes (confirm) or no (cancel) to the newest action that waits for confirmation
        and asked less than :data:`CONSENT_WINDOW_S` ago; ``None`` when ``said`` is neither or
        nothing waits."""
        agreed = consent(said)
        waiting = self.newest(waiting=True) if agreed is not None else None
        if waiting is None or self._clock() - waiting.created_at > CONSENT_WINDOW_S:
            return None
        return await self.confirm(waiting.id) if agreed else self.cancel(waiting.id)

    async def _ask(self, question: str, text: str, utterance_id: int | None) -> ActionRecord:
        """A question no command answers, put to the LLM; its answer is the record's message."""
        record = self._new("question", Action.ANSWER, {}, "Ask the LLM", text, utterance_id)
        record.source = "llm"

        async def ask() -> Outcome:
            llm, budget_s = self._llm_client()
            return Outcome(await answer_question(llm, question, budget_s))

        await self._execute(record, ask)
        return _copy(record)

    def _not_understood(self, text: str, utterance_id: int | None) -> ActionRecord:
        """A record that says the request was not understood, and whether an LLM was asked."""
        record = self._new("not understood", Action.ANSWER, {}, "Say it was not understood", text, utterance_id)
        asked = "no command matches it, nor did the LLM pick one"
        alone = "no command matches it (an LLM can be asked: [actions] llm_fallback)"
        closest = closest_commands(text, self.commands)
        offered = ", ".join(
            f"“{phrase}”" + (f" ({command.description.lower()})" if command.description else "")
            for command, phrase in closest
        )
        hint = f"; perhaps: {offered}" if offered else ""
        self._finish(record, ActionStatus.NOT_UNDERSTOOD, (asked if self._llm() is not None else alone) + hint)
        return _copy(record)

    async def confirm(self, record_id: int) -> ActionRecord:
        """Run an action that waits for confirmation; other records are returned unchanged."""
        record = self._records[record_id]
        if record.status is ActionStatus.WAITING:
            await self._execute(record)
        return _copy(record)

    def cancel(self, record_id: int) -> ActionRecord:
        """Drop an action that waits for confirmation; it never runs."""
        record = self._records[record_id]
        if record.status is ActionStatus.WAITING:
            self._finish(record, ActionStatus.CANCELLED, "cancelled")
        return _copy(record)

    async def undo(self, record_id: int) -> ActionRecord:
        """Take back a done action that can be undone (typed text, clipboard, timer, mode)."""
        record = self._records[record_id]
        if record.status is not ActionStatus.DONE or record_id not in self._undo:
            return _copy(record)
        # Taken out before awaiting, so a second click cannot undo twice.
        undo = self._undo.pop(record_id)
        try:
            message = await undo()
        except Exception as error:
            if not isinstance(error, ActionError):
                logger.exception("undoing action %d failed", record_id)
            self._undo[record_id] = undo
            record.message = f"could not undo: {error}"
            self._changed(record)
            return _copy(record)
        self._finish(record, ActionStatus.UNDONE, message)
        return _copy(record)

    def close(self) -> None:
        """Cancel pending timers."""
        self._executor.cancel_timers()

    # ---- internals -------------------------------------------------------------------------

    def _llm_client(self, model: str = "") -> tuple[Llm, float]:
        """The LLM (for cleanup, edits, questions and the fallback) and its time budget; with
        ``model``, that model on the settings' runtime instead (one such model is kept at a time)."""
        if self._given_llm is not None:
            return self._given_llm, self.settings.llm_timeout_s
        other = bool(model) and model != self.settings.llm_model
        settings = dataclasses.replace(self.settings, llm_model=model) if other else self.settings
        slot, key = ("other" if other else ""), runtime_key(settings)
        held = self._clients.get(slot)
        if held is None or held[0] != key:
            if held is not None:
                self._retire(held[1])
            held = self._clients[slot] = (key, llm_for(settings))
        return held[1], self.settings.llm_timeout_s

    def _retire(self, llm: Llm) -> None:
        """Let go of an LLM the settings no longer name (an in-process one frees its memory)."""
        try:
            task = asyncio.get_running_loop().create_task(llm.aclose())
        except RuntimeError:  # no loop: nothing was ever asked of it on one
            return
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def rewrite(self, text: str, mode: str = "", edit: str = "", model: str = "") -> Rewritten:
        """``text`` (a past utterance) written again in the mode called ``mode`` (default: the
        settings' one) with its cleanup, or rewritten as ``edit`` says, by the settings' LLM or
        the one called ``model`` on the same runtime (server or in-process)."""
        llm, budget_s = self._llm_client(model)
        chosen, _ = user_mode(self.dictation.settings, mode or None)
        return await rewrite(llm, text, budget_s, chosen, edit)

    async def prepare_llm(self) -> str | None:
        """Have the settings' LLM ready before the first utterance needs it (an in-process model
        loads). A model that cannot start is logged and its line returned; its uses then write
        the text as heard."""
        try:
            await self._llm_client()[0].prepare()
        except LlmError as error:
            self._warning(str(error))
            return str(error)
        return None

    def _llm(self) -> IntentFallback | None:
        if self._fallback is not None:
            return self._fallback
        if not self.settings.llm_fallback:
            return None
        from voxdesk.app.actions.llm_fallback import LlmFallback

        return LlmFallback(self.settings, on_warning=self._warning, llm=self._llm_client()[0])

    async def _ask_fallback(self, text: str, commands: Sequence[Command]) -> Sequence[Match]:
        fallback = self._llm()
        if fallback is None:
            return ()
        try:
            return await fallback.pick(text, commands)
        except Exception as error:  # the fallback is optional; it must never break the flow
            self._warning(f"the LLM fallback failed: {error}")
            return ()

    def _focus_probe(self) -> FocusProbe:
        if self.services.focus is None:
            self.services.focus = choose_focus_probe()
        return self.services.focus

    async def _dictate(self, text: str, utterance_id: int | None) -> ActionRecord:
        # A trailing space keeps consecutive utterances apart; "scratch that" removes it too.
        values: dict[str, SlotValue] = {"text": text + " "}
        preview = describe(Action.TYPE, ActionRequest({"text": text}))
        record = self._new("dictation", Action.TYPE, values, preview, text, utterance_id)
        record.source = "dictation"

        async def write() -> Outcome:
            keyboard = self._executor.keyboard()
            target = await keyboard.focused_window()
            written = await self.dictation.finish(utterance_id, text)
            typed = written.typed
            record.slots = {"text": typed, "mode": written.mode}
            # The history keeps the raw text as the utterance; this note keeps the written text and mode.
            record.preview = f"{describe(Action.TYPE, ActionRequest({'text': written.text}))} ({written.mode} mode)"
            cleaned = written.text != written.as_heard

            async def undo() -> str:
                await keyboard.backspace(len(typed))
                if cleaned:  # undo takes back the cleanup: the text as heard is typed again
                    await keyboard.type_text(written.as_heard + " ")
                    record.slots["text"] = written.as_heard + " "
                    return "typed the text as heard again"
                return f"removed {len(typed)} characters"

            into = f" into “{target}”" if target else ""
            note = f" ({written.note}; typed as heard)" if written.note else ""
            return Outcome(f"typed {len(typed)} characters{into} with {keyboard.name}{note}", undo)

        await self._execute(record, write)
        return _copy(record)

    def _step(self, found: Match) -> PlanStep:
        """What the matched command is given, and its preview."""
        command = found.command
        values: dict[str, SlotValue] = {**command.args, **found.slots}
        if command.action is Action.COPY and "text" not in values:
            values["text"] = self._last_text
        request = ActionRequest(values, command.run or ())
        return PlanStep(command.action, request, describe(command.action, request))

    def _propose_plan(
        self, found: Sequence[Match], text: str, utterance_id: int | None, source: RecordSource
    ) -> ActionRecord:
        """A request of several steps: shown as a plan, which always waits for confirmation."""
        plan = Plan(tuple(self._step(match) for match in found))
        steps = ", ".join(match.command.name for match in found)
        record = self._new("plan", Action.PLAN, {"steps": steps}, plan.preview, text, utterance_id)
        record.source, record.needs_confirmation, record.status = source, True, ActionStatus.WAITING
        self._plans[record.id] = plan
        self._log_line(f"#{record.id} plan: waiting for confirmation: {record.preview}")
        self._changed(record)
        return _copy(record)

    async def _start(self, found: Match, text: str, utterance_id: int | None, source: RecordSource) -> ActionRecord:
        command = found.command
        step = self._step(found)
        values, preview = dict(step.request.values), step.preview
        record = self._new(command.name, command.action, values, preview, text, utterance_id)
        record.source = source
        self._commands[record.id] = command
        # What an LLM picked always asks first: it may have misheard the intent.
        record.needs_confirmation = command.confirm or source == "llm"
        if record.needs_confirmation:
            record.status = ActionStatus.WAITING
            self._log_line(f"#{record.id} {command.name}: waiting for confirmation: {record.preview}")
            self._changed(record)
            return _copy(record)
        await self._execute(record)
        return _copy(record)

    def _new(
        self, name: str, action: Action, values: dict[str, SlotValue], preview: str, text: str, utterance_id: int | None
    ) -> ActionRecord:
        record = ActionRecord(
            id=self._next_id,
            command=name,
            action=action,
            slots=values,
            preview=preview,
            utterance=text,
            utterance_id=utterance_id,
            source="phrase",
            needs_confirmation=False,
            status=ActionStatus.RUNNING,
            created_at=self._clock(),
        )
        self._next_id += 1
        self._records[record.id] = record
        while len(self._records) > _KEEP_RECORDS:
            old_id, _ = self._records.popitem(last=False)
            self._undo.pop(old_id, None)
            self._commands.pop(old_id, None)
            self._plans.pop(old_id, None)
        return record

    async def _execute(self, record: ActionRecord, perform: Callable[[], Awaitable[Outcome]] | None = None) -> None:
        """Run the record's action (or ``perform``, dictation's own typing) and record how it went."""
        record.status = ActionStatus.RUNNING
        self._changed(record)
        command = self._commands.get(record.id)
        run = command.run if command is not None and command.run is not None else ()
        request = ActionRequest(record.slots, run)
        try:
            if perform is not None:
                outcome = await perform()
            elif record.id in self._plans:
                outcome = await self._plans[record.id].run(self._executor)
            else:
                outcome = await ACTIONS[record.action].execute(self._executor, request)
        except ActionError as error:
            self._finish(record, ActionStatus.FAILED, str(error))
            return
        except Exception as error:
            logger.exception("action #%d (%s) failed", record.id, record.command)
            self._finish(record, ActionStatus.FAILED, f"something went wrong: {error}")
            return
        if record.action is Action.TYPE:
            self._last_text = str(record.slots["text"]).strip()
        if outcome.undo is not None:
            self._undo[record.id] = outcome.undo
        self._finish(record, ActionStatus.DONE, outcome.message)

    async def scratch(self) -> str:
        """Undo the last typed text that can still be undone; ActionError when there is none."""
        for candidate in reversed(self._records.values()):
            if candidate.action is Action.TYPE and candidate.status is ActionStatus.DONE and candidate.id in self._undo:
                undone = await self.undo(candidate.id)
                if undone.status is not ActionStatus.UNDONE:
                    raise ActionError(undone.message)
                return f"removed “{str(candidate.slots['text']).strip()}”"
        raise ActionError("there is no typed text to scratch")

    async def edit(self, instruction: str) -> Outcome:
        """Rewrite, as ``instruction`` says (by the LLM) and in place, the text selected in the
        focused app (read through the clipboard, which is put back) or else the last typed text
        that can still be undone; the undo types the text as it was. ActionError when there is
        neither, or when the LLM could not rewrite it (the text is left as it was)."""
        clipboard = self.services.clipboard
        if clipboard is not None:
            keyboard = self._executor.keyboard()
            selected = await read_selection(clipboard, keyboard, await self._focus_probe().focused_app())
            if selected is not None:
                return await self._edit_selection(selected, instruction, keyboard)
        return await self._edit_last(instruction)

    async def _edit_selection(self, selected: str, instruction: str, keyboard: Keyboard) -> Outcome:
        llm, budget_s = self._llm_client()
        new = await edit_text(llm, selected, instruction, budget_s)
        await keyboard.type_text(new)  # typing over a selection replaces it

        async def undo() -> str:
            await keyboard.backspace(len(new))
            await keyboard.type_text(selected)
            return "typed the selected text as it was"

        return Outcome(f"rewrote the selection “{_short(selected)}” as “{_short(new)}”", undo)

    async def _edit_last(self, instruction: str) -> Outcome:
        typed = next(
            (
                r
                for r in reversed(self._records.values())
                if r.action is Action.TYPE and r.status is ActionStatus.DONE and r.id in self._undo
            ),
            None,
        )
        if typed is None:
            nothing = "nothing selected could be copied and " if self.services.clipboard is not None else ""
            raise ActionError(f"{nothing}there is no typed text to rewrite")
        old = str(typed.slots["text"])
        llm, budget_s = self._llm_client()
        new = await edit_text(llm, old.strip(), instruction, budget_s) + " "
        keyboard = self._executor.keyboard()
        await keyboard.backspace(len(old))
        await keyboard.type_text(new)
        removes_old = self._undo[typed.id]

        async def remove_new() -> str:  # what "scratch that" on the typed record does now
            await keyboard.backspace(len(new))
            return f"removed {len(new)} characters"

        typed.slots["text"], self._undo[typed.id] = new, remove_new

        async def undo() -> str:
            if self._undo.get(typed.id) is not remove_new:
                raise ActionError("the rewritten text was removed or rewritten again since")
            await keyboard.backspace(len(new))
            await keyboard.type_text(old)
            typed.slots["text"], self._undo[typed.id] = old, removes_old
            return "typed the text as it was"

        return Outcome(f"rewrote “{_short(old.strip())}” as “{_short(new.strip())}”", undo)

    def _finish(self, record: ActionRecord, status: ActionStatus, message: str) -> None:
        record.status = status
        record.message = message
        record.finished_at = self._clock()
        record.can_undo = status is ActionStatus.DONE and record.id in self._undo
        slots = ", ".join(f"{k}={v!r}" for k, v in record.slots.items())
        line = f"#{record.id} {record.command}({slots}): {status}: {message}"
        self._log_line(line, level=logging.WARNING if status is ActionStatus.FAILED else logging.INFO)
        self._changed(record)

    def _warning(self, message: str) -> None:
        self._log_line(f"warning: {message}", level=logging.WARNING)

    def _log_line(self, line: str, level: int = logging.INFO) -> None:
        stamped = f"{time.strftime('%H:%M:%S', time.localtime(self._clock()))} {line}"
        logger.log(level, "%s", line)
        self._log.append(stamped)
        self._emit(self._listeners.log, stamped)

    def _changed(self, record: ActionRecord) -> None:
        self._emit(self._listeners.records, _copy(record))

    @staticmethod
    def _add(callbacks: list[Callable[[T], None]], callback: Callable[[T], None]) -> Callable[[], None]:
        callbacks.append(callback)
        return lambda: callbacks.remove(callback) if callback in callbacks else None

    @staticmethod
    def _emit(callbacks: list[Callable[[T], None]], value: T) -> None:
        for callback in list(callbacks):
            try:
                callback(value)
            except Exception:
                logger.exception("an action listener failed")


def _mode_of(name: str) -> ActionMode | None:
    try:
        return ActionMode(name)
    except ValueError:
        return None


def _copy(record: ActionRecord) -> ActionRecord:
    return dataclasses.replace(record, slots=dict(record.slots))


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "…"
