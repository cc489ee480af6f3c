"""The assistant without a window: the controller, the live history, the voice actions and the
file queue, joined."""

from __future__ import annotations

from voxdesk.app.actions import ActionCenter, CommandSource, Services
from voxdesk.app.actions.commands import problem_summary
from voxdesk.app.files.queue import FileQueue
from voxdesk.app.files.queue_runner import EngineFileRunner
from voxdesk.app.history.live import LiveHistory
from voxdesk.app.history.store import HistoryStore
from voxdesk.app.listening.controller import Controller
from voxdesk.app.listening.events import Problem
from voxdesk.app.llm.runtime import share_gpu
from voxdesk.app.settings import Settings
from voxdesk.app.voice_actions import VoiceActions

__all__ = ["Assistant"]


class Assistant:
    """Listening, history, voice actions and file transcription for one run; a window or a test drives it.

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

    def _command_problems(self, problems: list[str]) -> None:
        self.controller.report(Problem(problem_summary(problems)))

    async def apply_settings(self, settings: Settings) -> None:
        """Use new settings: the engine, microphone and listening options, the actions', and the
        Whisper model and device for files from the next one on."""
        share_gpu(settings)
        await self.controller.apply_settings(settings)
        self.center.update_settings(settings.actions, settings.writing)
        self.file_runner.use(settings.engine)
        await self._prepare_llm()

    async def aclose(self) -> None:
        """Stop listening and transcribing files, let the action in progress finish, close the history."""
        await self.controller.aclose()
        await self.files.aclose()
        await self.file_runner.aclose()
        await self.actions.aclose()
        if self.history is not None:
            self.history.store.close()
