"""Transcribed text never reaches a shell, and user programs never run without confirmation.

The user command here is a real program (this Python) that writes the arguments it received
to a file: if a slot value were ever passed through a shell, the ``$(touch ...)``, backticks,
``;`` and ``&&`` in it would create the marker files, and the argument list would differ.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.app.actions.fakes import RecordingKeyboard, RecordingLauncher, RecordingOpener, not_understood
from voxdesk.app.actions.center import ActionCenter, ActionStatus
from voxdesk.app.actions.commands import CommandSource
from voxdesk.app.actions.keyboard import XdotoolKeyboard
from voxdesk.app.actions.ports import ProcessResult
from voxdesk.app.actions.process import run_process
from voxdesk.app.actions.services import Services
from voxdesk.app.settings import ActionSettings

WRITE_ARGV = "import json, sys; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:]))"


def _hostile(marker: Path) -> list[str]:
    return [
        f"hello; touch {marker}/semicolon",
        f"$(touch {marker}/dollar)",
        f"`touch {marker}/backtick`",
        f"x && touch {marker}/and | sh",
        f"it's \"quoted\" 'twice' > {marker}/redirect",
        f"rm -rf ~ || touch {marker}/or",
        "$HOME ${PATH} * ? ~ \\ %s {text}",
    ]


def _center(tmp_path: Path, user_toml: str, keyboard: RecordingKeyboard | None = None) -> ActionCenter:
    user = tmp_path / "commands.toml"
    user.write_text(user_toml)
    services = Services(
        open_url=RecordingOpener(), launcher=RecordingLauncher(), keyboard=keyboard or RecordingKeyboard()
    )
    center = ActionCenter(ActionSettings(), services, commands=CommandSource(user_path=user))
    assert center.log == [], center.log
    return center


def _note_command(out: Path, safe: bool) -> str:
    argv = [sys.executable, "-c", WRITE_ARGV, str(out), "--flag={text}", "{text}"]
    return (
        '[commands.note]\nphrases = ["make a note {text:raw}"]\n'
        f"run = {json.dumps(argv)}\nsafe = {'true' if safe else 'false'}\n"
    )


@pytest.mark.parametrize("index", range(7))
def test_slot_values_arrive_as_single_literal_arguments(tmp_path: Path, index: int) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "argv.json"
    hostile = _hostile(markers)[index]
    center = _center(tmp_path, _note_command(out, safe=False))

    async def scenario() -> None:
        record = await center.handle_utterance(f"make a note {hostile}")
        assert record is not None and record.command == "note"
        assert record.status is ActionStatus.WAITING and record.needs_confirmation
        assert not out.exists()  # waiting: it has not run
        assert record.preview.startswith("Run: ")
        done = await center.confirm(record.id)
        assert done.status is ActionStatus.DONE, done.message

    asyncio.run(scenario())
    assert json.loads(out.read_text()) == [f"--flag={hostile}", hostile]
    assert list(markers.iterdir()) == []


def test_newlines_in_a_slot_never_split_the_argument(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    center = _center(tmp_path, _note_command(out, safe=True))
    record = asyncio.run(center.handle_utterance("make a note first line\nreboot\n; shutdown now"))
    assert record is not None and record.status is ActionStatus.DONE
    received = json.loads(out.read_text())
    assert len(received) == 2 and received[1] == "first line reboot ; shutdown now"


def test_cancel_means_it_never_runs(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    center = _center(tmp_path, _note_command(out, safe=False))

    async def scenario() -> None:
        record = await center.handle_utterance("make a note delete everything")
        assert record is not None
        assert center.cancel(record.id).status is ActionStatus.CANCELLED
        after = await center.confirm(record.id)  # too late: cancelled stays cancelled
        assert after.status is ActionStatus.CANCELLED

    asyncio.run(scenario())
    assert not out.exists()


def test_safe_user_command_runs_at_once(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    center = _center(tmp_path, _note_command(out, safe=True))
    record = asyncio.run(center.handle_utterance("make a note buy milk"))
    assert record is not None and record.status is ActionStatus.DONE and not record.needs_confirmation
    assert json.loads(out.read_text()) == ["--flag=buy milk", "buy milk"]


def test_a_failing_program_is_a_failed_record(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "import sys; sys.exit('disk is full')"]
    center = _center(tmp_path, f'[commands.fail]\nphrases = ["fail now"]\nrun = {json.dumps(argv)}\nsafe = true\n')
    record = asyncio.run(center.handle_utterance("fail now"))
    assert record is not None and record.status is ActionStatus.FAILED
    assert "exit status 1" in record.message and "disk is full" in record.message


def test_a_missing_program_is_a_failed_record(tmp_path: Path) -> None:
    toml = '[commands.ghost]\nphrases = ["ghost"]\nrun = ["voxdesk-no-such-program"]\nsafe = true\n'
    record = asyncio.run(_center(tmp_path, toml).handle_utterance("ghost"))
    assert record is not None and record.status is ActionStatus.FAILED
    assert record.message == "voxdesk-no-such-program is not installed or not on the PATH"


def test_dangerous_words_are_not_commands(tmp_path: Path) -> None:
    center = _center(tmp_path, "")
    for text in ["rm -rf my home folder", "sudo reboot", "shutdown now", "format the disk", "$(reboot)"]:
        assert not_understood(asyncio.run(center.handle_utterance(text))), text


def test_typed_shell_syntax_is_typed_literally(tmp_path: Path) -> None:
    keyboard = RecordingKeyboard()
    center = _center(tmp_path, "", keyboard)
    asyncio.run(center.handle_utterance("type rm -rf ~; $(reboot) && `id`"))
    assert keyboard.text == "rm -rf ~; $(reboot) && `id`"


def test_xdotool_gets_the_text_as_one_argument_after_double_dash() -> None:
    calls: list[list[str]] = []

    async def recording(argv: Sequence[str], *, wait_s: float) -> ProcessResult:
        calls.append(list(argv))
        return ProcessResult(0)

    text = '--help; rm -rf ~ $(reboot) "q" \n next'
    asyncio.run(XdotoolKeyboard(runner=recording).type_text(text))
    assert calls == [["xdotool", "type", "--clearmodifiers", "--delay", "12", "--", text]]


def test_run_process_uses_no_shell(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    result = asyncio.run(run_process(["echo", f"; touch {marker}"], wait_s=5))
    assert result.returncode == 0 and not marker.exists()


def test_a_spoken_option_is_refused_as_a_whole_argument(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    center = _center(tmp_path, _note_command(out, safe=True))
    record = asyncio.run(center.handle_utterance("make a note --delete-everything"))
    assert record is not None and record.status is ActionStatus.FAILED
    assert "would be read as an option" in record.message
    assert not out.exists()


def test_after_double_dash_a_dash_value_is_plain_text(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    argv = [sys.executable, "-c", WRITE_ARGV, str(out), "--", "{text}"]
    toml = f'[commands.note]\nphrases = ["make a note {{text:raw}}"]\nrun = {json.dumps(argv)}\nsafe = true\n'
    record = asyncio.run(_center(tmp_path, toml).handle_utterance("make a note -rf"))
    assert record is not None and record.status is ActionStatus.DONE
    assert json.loads(out.read_text()) == ["--", "-rf"]
