"""A commands.toml with mistakes, end to end without a window: its problems reach the controller's
listeners as one Problem, and its valid commands load beside the defaults and run."""

from __future__ import annotations

import asyncio

from tests.app.actions.fakes import RecordingLauncher, recording_services
from voxdesk.app.actions import ActionStatus
from voxdesk.app.actions.commands import user_commands_path
from voxdesk.app.assistant import Assistant
from voxdesk.app.listening.events import ListeningChanged, Problem, UtteranceFinal
from voxdesk.app.listening.transcript import Utterance
from voxdesk.app.settings import Settings

MISTAKES = (
    '[commands.my_editor]\nphrases = ["bring up my editor"]\naction = "open_app"\nargs = { app = "editor" }\n\n'
    '[commands.broken]\nphrases = ["oops"\naction = "type"\n\n'  # lines 6-8: not TOML, found at 8
    '[commands.boom]\nphrases = ["boom"]\naction = "explode"\n'  # lines 10-12: no such action
)


def test_a_command_file_with_mistakes_reports_them_and_its_valid_commands_still_run() -> None:
    user = user_commands_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(MISTAKES)

    async def scenario() -> tuple[list[str], list[str], RecordingLauncher]:
        services = recording_services()
        assistant = Assistant(Settings(), services)
        problems: list[str] = []
        assistant.controller.subscribe(
            lambda event: problems.append(event.message) if isinstance(event, Problem) else None
        )
        await assistant.start()
        names = [command.name for command in assistant.center.commands]
        assistant.controller.report(ListeningChanged(True))
        utterance = Utterance(id=1, committed="Bring up my editor.", start=0.0, end=1.0, final=True)
        assistant.controller.report(UtteranceFinal(utterance))
        assistant.controller.report(ListeningChanged(False))
        for _ in range(100):
            if assistant.center.records and assistant.center.records[0].status is ActionStatus.DONE:
                break
            await asyncio.sleep(0.01)
        await assistant.aclose()
        assert isinstance(services.launcher, RecordingLauncher)
        return problems, names, services.launcher

    problems, names, launcher = asyncio.run(scenario())
    [problem] = [p for p in problems if p.startswith("voice commands: ")]
    assert problem.startswith(f"voice commands: {user}:8: skipped [commands.broken], which is not valid TOML")
    assert "(and 1 more: `voxdesk commands check` lists them)" in problem
    assert "my_editor" in names and "open_browser" in names  # the valid one, beside the defaults
    assert "broken" not in names and "boom" not in names
    assert launcher.apps == ["editor"]
