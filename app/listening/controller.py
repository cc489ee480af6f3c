"""The controller: joins microphone, engine and transcript; no Qt, runs on asyncio.

The window (or a test) calls its methods and hears back through :meth:`Controller.subscribe`:
every change is a :mod:`voxdesk.app.listening.events` event, delivered on the event loop. The
microphone's level (an :class:`AudioLevel` per chunk, 50 a second) goes only to those who ask
for it with :meth:`Controller.subscribe_levels`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from voxdesk.app.engines import EngineFactory, build_engine, describe_engine
from voxdesk.app.listening.capture import AudioCapture, AudioLevel, CaptureState, CaptureStatus
from voxdesk.app.listening.events import (
    Concern,
    ControllerEvent,
    EngineSpeed,
    EngineState,
    EngineStatus,
    ListeningChanged,
    ListenTrigger,
    Problem,
    UtteranceFinal,
)
from voxdesk.app.listening.session import ListeningSession
from voxdesk.app.listening.speed import FINAL_LATENCY_LIMIT, SpeedWatch
from voxdesk.app.listening.transcript import Transcript
from voxdesk.app.settings import EngineSettings, Settings
from voxdesk.app.writing.user_mode import every_mode_vocabulary
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.events import EngineFault, StreamError, StreamErrorCode
from voxdesk.engine.kinds import EngineKind
from voxdesk.engine.session import StreamingEngine

__all__ = ["CaptureFactory", "Controller", "EngineFactory"]

logger = logging.getLogger("voxdesk.controller")

CaptureFactory = Callable[..., AudioCapture]
Listener = Callable[[ControllerEvent], None]
LevelListener = Callable[[AudioLevel], None]
_Event = TypeVar("_Event")


def _call_each(listeners: Sequence[Callable[[_Event], None]], event: _Event) -> None:
    for listener in list(listeners):  # a listener may unsubscribe while called
        try:
            listener(event)
        except Exception:
            logger.exception("a listener failed on %s", type(event).__name__)


class Controller:
    """Start and stop listening, switch engines at run time, keep the transcript."""

    def __init__(
        self,
        settings: Settings,
        *,
        engine_factory: EngineFactory = build_engine,
        capture_factory: CaptureFactory = AudioCapture,
        final_latency_limit: float = FINAL_LATENCY_LIMIT,
    ) -> None:
        self.settings = settings
        self.transcript = Transcript()
        self._engine_factory = engine_factory
        self._capture_factory = capture_factory
        self._listeners: list[Listener] = []
        self._level_listeners: list[LevelListener] = []
        self._engine: StreamingEngine | None = None
        self._engine_lock = asyncio.Lock()
        self._status = EngineStatus(EngineState.NONE, describe_engine(settings.engine))
        self._session: ListeningSession | None = None
        self._session_task: asyncio.Task[None] | None = None
        self._hold_to_talk = False
        self._trigger = ListenTrigger.WINDOW
        self._listen_when_ready = False
        self._resume_listening = False  # an engine failure stopped listening: a restart starts it again
        self._tasks: set[asyncio.Task[Any]] = set()  # strong references: the loop keeps only weak ones
        self._final_latency_limit = final_latency_limit
        self._speed = SpeedWatch(final_latency_limit)
        # Whether audio captured at a time (perf_counter) may hold Voxdesk's own spoken reply:
        # it is then heard as silence (the Speaker's, set by the Assistant).
        self.own_voice_at: Callable[[float], bool] = lambda captured_at: False

    # -- listeners -------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event but the audio level from now on; returns a
        function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def subscribe_levels(self, listener: LevelListener) -> Callable[[], None]:
        """Call ``listener`` with the level of every chunk captured from now on (a meter);
        returns a function that unsubscribes."""
        self._level_listeners.append(listener)
        return lambda: self._level_listeners.remove(listener)

    def report(self, event: ControllerEvent) -> None:
        """Pass an event from a part joined to the controller (history, actions) to its listeners."""
        self._emit(event)

    def _emit(self, event: ControllerEvent) -> None:
        if isinstance(event, UtteranceFinal):
            self._watch_speed(event)
        if isinstance(event, AudioLevel):
            _call_each(self._level_listeners, event)
        else:
            _call_each(self._listeners, event)

    # -- state -----------------------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._session is not None

    @property
    def engine_status(self) -> EngineStatus:
        return self._status

    def _watch_speed(self, final: UtteranceFinal) -> None:
        """Tell listeners when the engine's model stops (or starts again) keeping up."""
        latency = final.utterance.final_latency
        if final.stats is None or latency is None:
            return
        if (verdict := self._speed.add(latency, final.stats)) is not None:
            message = verdict.message(describe_engine(self.settings.engine))
            self._emit(EngineSpeed(verdict.too_slow, message, verdict.real_time_factor))

    def _set_status(self, state: EngineState, detail: str = "", progress: float | None = None) -> None:
        self._status = EngineStatus(state, describe_engine(self.settings.engine), detail, progress)
        self._emit(self._status)

    # -- engine ----------------------------------------------------------------------------

    async def load_engine(self) -> bool:
        """Load the engine the settings name; ``False`` (and a ``Problem``) when it cannot run."""
        async with self._engine_lock:
            return await self._load()

    async def switch_engine(self, choice: EngineSettings) -> bool:
        """Replace the engine without restarting the app; listening resumes on the new one if it
        loads (also when an engine failure had stopped it)."""
        async with self._engine_lock:
            resume, self._resume_listening = self._resume_listening, False
            was_listening = self.listening or self._listen_when_ready or resume
            await self.stop_listening()
            old, self._engine = self._engine, None
            if old is not None:
                try:
                    await old.aclose()
                except Exception:  # a failed engine may fail to close too; the new one starts all the same
                    logger.exception("closing the old engine")
            self.settings.engine = dataclasses.replace(choice)
            loaded = await self._load()
            if loaded and was_listening:
                self.start_listening(trigger=self._trigger)
            elif was_listening:
                self._resume_listening = resume  # the next restart that loads listens again
            return loaded

    async def restart_engine(self) -> bool:
        """After the engine failed: build it afresh through the engine factory, with the same
        settings, and load it; listening resumes if it was on or the failure stopped it.
        ``False`` (and a ``Problem``) when it cannot start."""
        return await self.switch_engine(self.settings.engine)

    async def _load(self) -> bool:
        try:
            engine = self._engine_factory(self.settings.engine)
        except EngineUnavailable as exc:  # settings no engine can be built from, e.g. mixed server kinds
            return await self._load_failed(None, str(exc))
        self._speed = SpeedWatch(self._final_latency_limit)
        self._set_status(EngineState.LOADING, "starting", 0.0)
        steps: list[str] = []

        def loading(step: str, done: float) -> None:
            steps.append(step)
            self._set_status(EngineState.LOADING, step, done)

        try:
            await engine.load(progress=loading)
        except EngineUnavailable as exc:
            return await self._load_failed(engine, str(exc))
        except Exception as exc:
            logger.exception("engine failed to load")
            return await self._load_failed(engine, f"the speech engine could not start: {exc}")
        self._engine = engine
        ready = steps[-1].removeprefix("ready: ") if steps and steps[-1].startswith("ready: ") else "ready"
        self._set_status(EngineState.READY, "connected" if self.settings.engine.kind == EngineKind.REMOTE else ready)
        if self._listen_when_ready:
            self._listen_when_ready = False
            self.start_listening(self._hold_to_talk, self._trigger)
        return True

    async def _load_failed(self, engine: StreamingEngine | None, message: str) -> bool:
        self._listen_when_ready = False
        self._set_status(EngineState.FAILED, message)
        self._emit(Problem(message, concern=Concern.ENGINE))
        if engine is None:
            return False
        try:
            await engine.aclose()
        except Exception:
            logger.exception("closing a failed engine")
        return False

    def _on_stream_error(self, error: StreamError) -> None:
        if not error.fatal and error.code == StreamErrorCode.CONNECTION_LOST:
            self._set_status(EngineState.RECONNECTING, error.message)
            return
        if error.fatal and error.engine_fault == EngineFault.SESSION:
            self._emit(
                Problem(error.message, offers_restart=True, concern=Concern.ENGINE)
            )  # the next audio opens a new stream
            return
        if error.fatal and (error.restart_helps or error.code == StreamErrorCode.CONNECTION_LOST):
            self._engine_failed(error.message)
            return
        if error.code == StreamErrorCode.UNAUTHORIZED:
            self._set_status(EngineState.FAILED, error.message)
        self._emit(Problem(error.message, concern=Concern.ENGINE))

    def _engine_failed(self, message: str) -> None:
        """The engine can no longer transcribe (it stopped, its servers are gone): the status and
        a problem say so (once for streams failing alike), and listening stops (the transcript
        stays) until :meth:`restart_engine` starts it again."""
        if (self._status.state, self._status.detail) != (EngineState.FAILED, message):
            self._set_status(EngineState.FAILED, message)
            self._emit(Problem(message, offers_restart=True, concern=Concern.ENGINE))
        if self.listening:
            self._resume_listening = True
            self._spawn(self.stop_listening())

    def _on_engine_alive(self) -> None:
        if self._status.state == EngineState.RECONNECTING:
            self._set_status(EngineState.READY, "connected")

    # -- listening -------------------------------------------------------------------------

    def start_listening(self, hold_to_talk: bool = False, trigger: ListenTrigger | None = None) -> None:
        """Start capturing; while the engine is still loading, start once it is ready. ``trigger``
        (what started it) defaults to hold-to-talk or the window."""
        if self._session is not None:
            return
        self._resume_listening = False
        self._hold_to_talk = hold_to_talk
        self._trigger = trigger or (ListenTrigger.HOLD_TO_TALK if hold_to_talk else ListenTrigger.WINDOW)
        if self._engine is None:
            if self._status.state == EngineState.LOADING:
                self._listen_when_ready = True
            else:
                self._emit(
                    Problem(
                        f"no speech engine is running ({self._status.detail or 'none chosen'})", concern=Concern.ENGINE
                    )
                )
            return
        capture = self._capture_factory(
            self.settings.audio.device, on_status=self._on_capture_status, on_level=self._on_level
        )
        session = ListeningSession(
            self._engine,
            capture,
            self.transcript,
            self._emit,
            silence_seconds=self.settings.listening.silence_ms / 1000,
            on_stream_error=self._on_stream_error,
            on_engine_alive=self._on_engine_alive,
            vocabulary=every_mode_vocabulary(self.settings.writing),
            own_voice_at=lambda captured_at: self.own_voice_at(captured_at),
        )
        self._session = session
        self._session_task = self._spawn(session.run())
        self._session_task.add_done_callback(lambda task: self._session_ended(session))
        self._emit(ListeningChanged(True, hold_to_talk, self._trigger))

    async def stop_listening(self) -> None:
        """Stop capturing, then wait for the final text of the utterance in progress."""
        self._listen_when_ready = False
        session, task = self._session, self._session_task
        if session is None or task is None:
            return
        self._session = self._session_task = None
        self._emit(ListeningChanged(False))
        while not task.done():  # cancelled again should a library swallow one cancellation
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        if not task.cancelled() and (error := task.exception()) is not None:
            logger.error("listening failed", exc_info=error)
        await session.wait_for_finals()

    def toggle_listening(self, trigger: ListenTrigger = ListenTrigger.WINDOW) -> None:
        """Start listening, or stop (finishing the utterance in progress)."""
        if self.listening or self._listen_when_ready:
            self._spawn(self.stop_listening())
        else:
            self.start_listening(trigger=trigger)

    def request_stop(self) -> None:
        """Stop listening without waiting (for callers that cannot await, such as a voice command)."""
        if self.listening or self._listen_when_ready:
            self._spawn(self.stop_listening())

    def hold_pressed(self) -> None:
        """Hold-to-talk key down: listen while it is held."""
        if not self.listening:
            self.start_listening(hold_to_talk=True)

    def hold_released(self) -> None:
        """Hold-to-talk key up: stop, if holding is what started listening."""
        if self._hold_to_talk and (self.listening or self._listen_when_ready):
            self._hold_to_talk = False
            self._spawn(self.stop_listening())

    def _session_ended(self, session: ListeningSession) -> None:
        """Capture ended on its own (no microphone at all): finish like a stop."""
        if self._session is session:
            self._spawn(self.stop_listening())

    def _on_capture_status(self, status: CaptureStatus) -> None:
        if status.state == CaptureState.LOST and self._session is not None:
            self._session.break_stream()  # the utterance in progress gets its final text now
        self._emit(status)

    def _on_level(self, level: AudioLevel) -> None:
        self._emit(level)

    # -- settings and shutdown -------------------------------------------------------------

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings: switch engine if it changed, reopen the microphone if it did."""
        engine_changed = settings.engine != self.settings.engine
        capture_changed = (settings.audio, settings.listening) != (self.settings.audio, self.settings.listening)
        self.settings = dataclasses.replace(settings, engine=self.settings.engine)
        if engine_changed:
            await self.switch_engine(settings.engine)
        elif capture_changed and self.listening:
            await self.stop_listening()
            self.start_listening(trigger=self._trigger)

    async def aclose(self) -> None:
        """Stop listening and release the engine."""
        await self.stop_listening()
        async with self._engine_lock:
            if self._engine is not None:
                await self._engine.aclose()
                self._engine = None

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
