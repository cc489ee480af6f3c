"""What a user can get wrong, run as they would: a real ``voxdesk`` process and real files. Each
mistake gets one line naming what is wrong, no traceback, and a non-zero exit where the command
could not do its job."""

from __future__ import annotations

import argparse
import os
import re
import runpy
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soundfile

from tests.cli.test_main import REPO, voxdesk
from tests.ui.window_process import run_window_until_ready_then_terminate
from tests.vllm_support import requires_vllm
from voxdesk.app.history.store import HistoryStore
from voxdesk.cli import vllm_options
from voxdesk.cli.arg_types import Bounded, readable_file
from voxdesk.cli.main import build_parser
from voxdesk.cli.vllm_option_names import VLLM_ENGINE_OPTIONS

pytestmark = pytest.mark.integration  # real processes

DAMAGED_SETTINGS = bytes(range(0x80, 0x100)) + b"\n[engine]\nkind = \xe9\n" + bytes(range(0xC0, 0xF0))


def error_lines(stderr: str) -> list[str]:
    """The lines that say what went wrong (argparse prints its usage lines before them)."""
    return [line for line in stderr.splitlines() if re.match(r"voxdesk[\w ]*: (error|warning): ", line)]


def assert_one_clear_line(result: subprocess.CompletedProcess[str], *names: str) -> str:
    """No traceback, one error line, naming each of ``names``; that line."""
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = error_lines(result.stderr)
    for name in names:
        assert name in line, line
    return line


# 1. settings.toml that is not UTF-8 ---------------------------------------------------------


def test_history_list_with_settings_that_are_not_utf8_warns_once_and_goes_on(dirs: dict[str, str]) -> None:
    config = Path(dirs["VOXDESK_CONFIG_DIR"])
    config.mkdir(parents=True)
    (config / "settings.toml").write_bytes(DAMAGED_SETTINGS)
    result = voxdesk("history", "list")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "No sessions in the history.\n"
    [copy] = config.glob("settings.toml.damaged-*")
    assert copy.read_bytes() == DAMAGED_SETTINGS
    line = assert_one_clear_line(result, str(config / "settings.toml"), "not UTF-8", str(copy))
    assert line.startswith("voxdesk: warning: ")


def test_the_window_opens_with_settings_that_are_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.toml").write_bytes(DAMAGED_SETTINGS)
    status, errors = run_window_until_ready_then_terminate(tmp_path)
    assert status == 0, errors.decode()[-2000:]
    assert b"Traceback" not in errors
    [copy] = (tmp_path / "config").glob("settings.toml.damaged-*")
    assert copy.read_bytes() == DAMAGED_SETTINGS


# 2. serve's options out of range ------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--port", "99999", "0-65535"),
        ("--port", "-1", "0-65535"),
        ("--idle-timeout", "-1", "more than 0"),
        ("--idle-timeout", "0", "more than 0"),
        ("--ssl-certfile", "nope.pem", "nope.pem: no such file"),
    ],
)
def test_serve_refuses_values_out_of_range_before_starting(option: str, value: str, said: str) -> None:
    result = voxdesk("serve", option, value)
    assert result.returncode == 2
    assert_one_clear_line(result, f"argument {option}", said)


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, each with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


def bad_values(action: argparse.Action, tmp_path: Path) -> list[str]:
    """Values ``action`` must refuse: out of its range, not a number, not a choice, not a readable file."""
    if isinstance(action.type, Bounded):
        low, high = action.type.low, action.type.high
        below = [] if low is None else [str(low if action.type.above else low - 1)]
        return [*below, *([] if high is None else [str(high + 1)]), "x"]
    if action.type is readable_file:
        return [str(tmp_path / "missing.pem"), str(tmp_path)]
    if action.choices is not None:
        return ["not-one-of-them"]
    return []


def test_every_option_refuses_bad_values_with_one_line_naming_it(tmp_path: Path) -> None:
    """Walks every option of every subcommand: numbers must have a range, and each option with a
    range, choices or an input file refuses what is outside it."""
    runs: dict[tuple[str, ...], list[str]] = {}  # argv: the names of which the error must give one
    unchecked_numbers: list[str] = []
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            names = list(action.option_strings) or [action.dest if action.metavar is None else str(action.metavar)]
            if action.type in (int, float):
                unchecked_numbers.append(f"{' '.join(path)} {names[0]}")
            for value in bad_values(action, tmp_path):
                if not action.option_strings and value.startswith("-"):
                    continue  # a negative positional would read as an option
                runs[(*path, *action.option_strings[:1], value)] = names
    assert unchecked_numbers == []  # every number an option takes has a range
    with ThreadPoolExecutor(4) as pool:  # one process each, a few at a time
        results = dict(zip(runs, pool.map(lambda argv: voxdesk(*argv), runs), strict=True))
    for argv, result in results.items():
        assert result.returncode in (1, 2), (argv, result.stdout, result.stderr)
        line = assert_one_clear_line(result)
        assert any(name in line for name in runs[argv]), (argv, line)
    walked = {" ".join(argv) for argv in runs}
    assert {"serve --port 65536", f"serve --ssl-keyfile {tmp_path}", "history list --limit 0"} <= walked


# 3. files that are not audio, or cut short --------------------------------------------------


def test_a_text_file_named_mp3_is_one_line_saying_what_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "readme.mp3"
    path.write_text("Read me first.\nThis is not a song.\n")
    result = voxdesk("transcribe", str(path))
    assert result.returncode == 1
    line = assert_one_clear_line(result, str(path), "not a readable audio file", "text")
    assert result.stderr.strip() == line  # no decoder notes around it
    assert "does not exist" not in line


def test_a_truncated_wav_is_an_error_naming_the_file_and_how_much_is_there(tmp_path: Path) -> None:
    whole = tmp_path / "whole.wav"
    soundfile.write(str(whole), np.zeros(32_000, np.float32), 16_000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[:20_000])
    result = voxdesk("transcribe", str(cut))
    assert result.returncode == 1, result.stdout
    assert_one_clear_line(result, str(cut), "truncated: 19956 of 64000 bytes of audio")
    assert result.stdout == ""


# 4. an option transcribe does not have ------------------------------------------------------


def test_an_unknown_transcribe_option_shows_transcribes_usage(tmp_path: Path) -> None:
    result = voxdesk("transcribe", "--frob", str(tmp_path / "x.wav"))
    assert result.returncode == 2
    assert result.stderr.startswith("usage: voxdesk transcribe ")
    line = assert_one_clear_line(result, "unrecognized arguments: --frob")
    assert line.startswith("voxdesk transcribe: error: ") and "vLLM" not in line


def test_a_vllm_engine_argument_without_engine_vllm_gets_the_hint_on_serves_usage() -> None:
    result = voxdesk("serve", "--max_model_len=2048")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: voxdesk serve ")
    assert_one_clear_line(result, "--max_model_len=2048 (vLLM's engine arguments need --engine vllm)")


@pytest.mark.vllm
@requires_vllm
def test_the_vllm_option_names_are_the_installed_vllms() -> None:
    """The generated list matches vLLM's source, and holds every option of vLLM's own parser."""
    script = runpy.run_path(str(REPO / "scripts" / "vllm_option_names.py"))
    generated = script["module_text"](script["option_names"](script["arg_utils_path"]().read_text()))
    assert (REPO / "cli" / "vllm_option_names.py").read_text() == generated, "run scripts/vllm_option_names.py"
    options = set(vllm_options._vllm_parser()._option_string_actions)
    assert {o for o in options if not o.startswith("--no-")} <= VLLM_ENGINE_OPTIONS


# 5. a closed standard output ----------------------------------------------------------------


def run_into_a_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """``voxdesk ARGV`` with its standard output a pipe nobody reads any more."""
    reader, writer = os.pipe()
    os.close(reader)  # every write to the pipe now fails with EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-m", "voxdesk.cli.main", *argv],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            cwd=REPO,
        )
    finally:
        os.close(writer)


@pytest.mark.parametrize(
    ("argv", "status"),
    [(["history", "list"], 141), (["commands", "check"], 141), (["--help"], 0)],
)
def test_a_closed_stdout_ends_quietly_as_unix_tools_do(argv: list[str], status: int) -> None:
    """As ``yes | head -1``: the reader went away, so the rest of the output goes nowhere and the
    exit status is 141 (128 + SIGPIPE), with nothing on stderr. (argparse's own help and usage
    output ignores a closed pipe itself and exits 0.)"""
    result = run_into_a_closed_pipe(*argv)
    assert (result.returncode, result.stderr) == (status, "")


def test_a_long_listing_into_a_closed_pipe_ends_quietly() -> None:
    """More than a pipe's buffer: the write fails while the listing is being printed."""
    with HistoryStore.open() as store:
        for n in range(300):
            store.add_utterance(store.start_session("file", "builtin", "tiny.en", f"/f{n}.wav"), f"utterance {n}", 0, 1)
    result = run_into_a_closed_pipe("history", "list", "--limit", "300")
    assert (result.returncode, result.stderr) == (141, "")


# 6. a display that is named but not there ---------------------------------------------------


def free_display_number() -> int:
    return next(n for n in range(99, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())


def window(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    kept = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return subprocess.run(
        [sys.executable, "-m", "voxdesk.ui.launcher"],
        cwd=REPO,
        env={**kept, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_display_that_is_not_there_is_one_line_naming_it() -> None:
    display = f":{free_display_number()}"
    result = window({"DISPLAY": display})
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert f"DISPLAY={display}" in line and "cannot be opened" in line


def test_a_stale_wayland_display_is_one_line_naming_it(tmp_path: Path) -> None:
    stale = tmp_path / "wayland-7"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(stale))
    listener.close()  # the socket file stays, with nobody listening: a compositor that crashed
    result = window({"WAYLAND_DISPLAY": "wayland-7", "XDG_RUNTIME_DIR": str(tmp_path)})
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "WAYLAND_DISPLAY=wayland-7" in line and str(stale) in line and "cannot be opened" in line


# 8. mistakes in the user's commands.toml ----------------------------------------------------


def test_commands_check_lists_each_problem_with_its_line(dirs: dict[str, str]) -> None:
    config = Path(dirs["VOXDESK_CONFIG_DIR"])
    config.mkdir(parents=True)
    user = config / "commands.toml"
    user.write_text(
        '[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n\n'
        '[commands.broken]\nphrases = ["oops"\naction = "type"\n\n'
        '[commands.boom]\nphrases = ["boom"]\naction = "explode"\n'
    )
    result = voxdesk("commands", "check")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{user}:7: skipped [commands.broken]")
    assert lines[1].startswith(f"{user}:9: ignored command 'boom': action must be one of")
    assert lines[2].startswith("2 problem(s)")
    user.write_text('[commands.note]\nphrases = ["take a note {text}"]\naction = "type"\n')
    result = voxdesk("commands", "check")
    assert result.returncode == 0, result.stdout
    assert "commands, no problems" in result.stdout
