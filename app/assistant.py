"""The assistant without a window: the controller, the live history, the voice actions and the
file queue, joined."""

from __future__ import annotations

from voxdesk.app.actions import ActionCenter, CommandSource, Services
from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.commands import problem_summary
from voxdesk.app.actions.kinds import ActionMode
from voxdesk.app.files.queue import FileQueue
from voxdesk.app.files.queue_runner import EngineFileRunner
from voxdesk.app.history.live import LiveHistory
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import Problem
from voxdesk.app.llm.runtime import share_gpu
from voxdesk.app.settings import Settings
from voxdesk.app.speaking.replies import ReplyKind, reply_for
from voxdesk.app.speaking.speaker import Speaker
from voxdesk.app.voice_actions import VoiceActions

__all__ = ["Assistant"]


class Assistant:
    """Listening, history, voice actions, spoken replies and file transcription for one run; a window or a
    test drives it.

    ``services`` are the desktop's clipboard, notifier, opener...; stopping the microphone
    defaults to this controller's. Without ``history_store`` nothing is written to the history.
    Files added to ``files`` are transcribed on an engine of their own and recorded in the history.
    The executors read ``services`` when an action runs, so a service filled in after this is
    built (the tray's notifier, which needs the window) is still used.
    """

    def __init__(self, settings: Settings, services: Services, history_store: HistoryStore | None = None) -> None:
        share_gpu(settings)
        self.controller = Controller(settings)
        self.history = LiveHistory(self.controller, history_store) if history_store is not None else None
        services.stop_listening = services.stop_listening or self.controller.request_stop
        # Mistakes in the command files are shown as problems, like those of the settings.
        self.commands = CommandSource(on_problems=self._command_problems)
        self.center = ActionCenter(settings.actions, services, commands=self.commands, writing=settings.writing)
        self.actions = VoiceActions(self.controller, self.center, self.history)
        self.file_runner = EngineFileRunner(history_store, settings.engine)
        self.files = FileQueue(self.file_runner)
        self.speaker = Speaker(settings.speech, on_problem=lambda message: self.controller.report(Problem(message)))
        self.controller.own_voice_at = self.speaker.heard_at  # no echo canceller yet: replies are not heard
        self._replied: set[tuple[int, ActionStatus]] = set()
        self.center.add_record_listener(self._reply)
        self.center.add_alarm_listener(lambda message: self.speaker.announce(message, ReplyKind.ALARM))

    async def start(self) -> None:
        """Load the engine the settings name; a failure, and the command files' problems, are
        reported to the controller's listeners."""
        if self.commands.problems:  # found while building, before anyone listened
            self._command_problems(self.commands.problems)
        await self.controller.load_engine()
        await self._prepare_llm()

    async def _prepare_llm(self) -> None:
        """Load an in-process LLM now rather than at the first utterance; a failure is a problem shown."""
        problem = await self.center.prepare_llm()
        if problem is not None:
            self.controller.report(Problem(f"{problem}; dictation is typed as heard"))

    def _reply(self, record: ActionRecord) -> None:
        """Say a record's reply aloud once it has one (an answer, a question, a failure)."""
        reply = reply_for(record)
        if reply is None or (record.id, record.status) in self._replied:
            return
        self._replied.add((record.id, record.status))
        self.speaker.announce(*reply, dictating=self.center.mode is ActionMode.DICTATION)

    def _command_problems(self, problems: list[str]) -> None:
        self.controller.report(Problem(problem_summary(problems)))

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings: the engine, microphone and listening options, the actions', and the
        Whisper model and device for files from the next one on."""
        share_gpu(settings)
        await self.controller.apply_settings(settings)
        self.center.update_settings(settings.actions, settings.writing)
        self.speaker.update_settings(settings.speech)
        self.file_runner.use(settings.engine)
        await self._prepare_llm()

    async def aclose(self) -> None:
        """Stop listening and transcribing files, let the action in progress finish, close the history."""
        await self.controller.aclose()
        await self.files.aclose()
        await self.file_runner.aclose()
        await self.actions.aclose()
        await self.speaker.aclose()
        if self.history is not None:
            self.history.store.close()
