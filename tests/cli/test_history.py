"""``voxdesk history …`` and ``voxdesk transcribe --output/--no-history``, with a temporary data directory."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import srt
import webvtt

from tests.app.history.samples import record_two_sessions
from tests.cli.test_main import voxdesk
from tests.conftest import fixture_path
from tests.fake_llm import FakeLlm
from tests.recognition import assert_recognized
from tests.speech_fixtures import Fixture
from voxdesk.app.history.store import HistoryStore, default_path
from voxdesk.cli.main import main


@pytest.fixture
def sessions(dirs: dict[str, str]) -> tuple[int, int]:
    """Two recorded sessions: a file about the weather and a live one with commands."""
    with HistoryStore.open() as store:
        return record_two_sessions(store)


def write_settings(dirs: dict[str, str], text: str) -> None:
    config = Path(dirs["VOXDESK_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(text)


def test_list_shows_sessions_newest_first(sessions: tuple[int, int], capsys: pytest.CaptureFixture[str]) -> None:
    weather, live = sessions
    assert main(["history", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "KIND", "UTTERANCES", "TEXT"]
    assert lines[1].split()[0] == str(live) and "Open the browser." in lines[1] and " live " in lines[1]
    assert lines[2].split()[0] == str(weather) and "The weather today is sunny. Tomorrow it will rain." in lines[2]
    assert main(["history", "list", "--limit", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_list_of_an_empty_history(dirs: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "list"]) == 0
    assert capsys.readouterr().out == "No sessions in the history.\n"


def test_search_prints_matches_with_their_session(
    sessions: tuple[int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    weather, _ = sessions
    assert main(["history", "search", "rain", "TOMORROW"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].startswith(f"session {weather:>4}") and out[0].endswith("00:00:03.500  Tomorrow it will rain.")
    assert main(["history", "search", "snow"]) == 0
    assert capsys.readouterr().out == "No matches.\n"


@pytest.mark.parametrize("words", [['"'], ["NEAR(", "open"], ["*"], ["-browser"], ["(", ")"], ['"open"', "OR"]])
def test_search_with_fts_syntax_does_not_fail(
    sessions: tuple[int, int], capsys: pytest.CaptureFixture[str], words: list[str]
) -> None:
    assert main(["history", "search", "--", *words]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""


def test_export_formats_to_stdout_and_to_files(
    sessions: tuple[int, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weather, _ = sessions
    assert main(["history", "export", str(weather)]) == 0  # txt by default
    assert capsys.readouterr().out == "The weather today is sunny.\nTomorrow it will rain.\n"

    assert main(["history", "export", str(weather), "--format", "srt"]) == 0
    cues = list(srt.parse(capsys.readouterr().out))
    assert [(c.start.total_seconds(), c.end.total_seconds(), c.content) for c in cues] == [
        (0.5, 2.25, "The weather today is sunny."),
        (3.5, 5.0, "Tomorrow it will rain."),
    ]

    target = tmp_path / "weather.vtt"  # format from the extension
    assert main(["history", "export", str(weather), "--output", str(target)]) == 0
    assert capsys.readouterr().out == ""
    captions = webvtt.read(str(target)).captions
    assert [c.text for c in captions] == ["The weather today is sunny.", "Tomorrow it will rain."]

    assert main(["history", "export", str(weather), "-f", "json", "-o", str(tmp_path / "w.txt")]) == 0
    payload = json.loads((tmp_path / "w.txt").read_text())  # --format wins over the extension
    assert payload["session"]["source"] == "/recordings/weather.wav"
    assert len(payload["utterances"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["history", "export", "999"], "no session 999"),
        (["history", "delete", "999"], "no session 999"),
        (["history", "export", "{weather}", "-o", "/nonexistent-dir/out.srt"], "No such file or directory"),
        (["history", "export", "{weather}", "-o", "{tmp}/out.docx"], "name it .txt, .srt, .vtt or .json"),
        (["transcribe", "{tmp}/missing.wav", "-o", "{tmp}/out.doc"], "name it .txt, .srt, .vtt or .json"),
    ],
)
def test_errors_are_one_line_and_exit_1(
    sessions: tuple[int, int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    filled = [a.format(weather=sessions[0], tmp=tmp_path) for a in args]
    assert main(filled) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("voxdesk: error: ")
    assert message in captured.err


def test_unknown_format_name_is_refused_by_the_parser(sessions: tuple[int, int]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["history", "export", str(sessions[0]), "--format", "docx"])
    assert exit_.value.code == 2


def test_a_broken_history_file_is_one_line_kept_aside_and_replaced(
    dirs: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    default_path().parent.mkdir(parents=True)
    default_path().write_bytes(b"garbage" * 1000)
    assert main(["history", "list"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"the history {default_path()} was damaged" in err
    assert len(list(default_path().parent.glob("history.sqlite3.damaged-*"))) == 1


def test_delete_one_session(sessions: tuple[int, int], capsys: pytest.CaptureFixture[str]) -> None:
    weather, live = sessions
    assert main(["history", "delete", str(weather)]) == 0
    assert capsys.readouterr().out == f"Deleted session {weather}.\n"
    with HistoryStore.open() as store:
        assert [s.id for s in store.sessions()] == [live]
        assert store.search("weather") == []


def test_delete_all_needs_yes(sessions: tuple[int, int], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "delete", "--all"]) == 1
    err = capsys.readouterr().err
    assert "would delete all 2 sessions (3 utterances)" in err and "--all --yes" in err
    with HistoryStore.open() as store:
        assert store.counts() == (2, 3)  # nothing happened
    assert main(["history", "delete", "--all", "--yes"]) == 0
    assert capsys.readouterr().out == "Deleted all 2 sessions (3 utterances).\n"
    with HistoryStore.open() as store:
        assert store.counts() == (0, 0)


def test_delete_needs_a_session_or_all(sessions: tuple[int, int]) -> None:
    for args in (["history", "delete"], ["history", "delete", "1", "--all"]):
        with pytest.raises(SystemExit) as exit_:
            main(args)
        assert exit_.value.code == 2


def test_retention_setting_purges_on_open(sessions: tuple[int, int], dirs: dict[str, str]) -> None:
    weather, live = sessions
    connection = sqlite3.connect(default_path())
    with connection:
        connection.execute("UPDATE sessions SET started_at = started_at - 10 * 86400 WHERE id = ?", (weather,))
    connection.close()
    write_settings(dirs, "[history]\nretention_days = 7\n")
    assert main(["history", "list"]) == 0
    with HistoryStore.open() as store:
        assert [s.id for s in store.sessions()] == [live]


def test_transcribe_writes_subtitles_and_records_a_file_session(
    dirs: dict[str, str], speech: dict[str, Fixture], tmp_path: Path
) -> None:
    fixture = speech["command01-slt"]
    output = tmp_path / "out.srt"
    # --realtime: the cue times are the live engine's VAD bounds, and it records latencies.
    result = voxdesk("transcribe", "--realtime", str(fixture_path(fixture)), "--output", str(output), env=dirs)
    assert result.returncode == 0, result.stderr
    [cue] = list(srt.parse(output.read_text()))
    assert_recognized(fixture, cue.content)
    (start, end) = fixture.speech[0]
    assert abs(cue.start.total_seconds() - start) < 0.3 and abs(cue.end.total_seconds() - end) < 0.3

    with HistoryStore.open() as store:
        [session] = store.sessions()
        assert (session.kind, session.engine, session.source) == ("file", "builtin", str(fixture_path(fixture)))
        assert session.ended_at is not None
        [utterance] = store.utterances(session.id)
        assert utterance.text == cue.content
        assert utterance.first_partial_latency_s is not None and utterance.final_latency_s is not None

    word = max(cue.content.split(), key=len).strip(".,?!")  # a word the model heard, whichever it was
    listed = voxdesk("history", "search", word, env=dirs)
    assert listed.returncode == 0 and cue.content in listed.stdout


def test_transcribe_no_history_and_keep_false_record_nothing(
    dirs: dict[str, str], speech: dict[str, Fixture], tmp_path: Path
) -> None:
    fixture = speech["command09-slt"]
    audio = str(fixture_path(fixture))
    result = voxdesk("transcribe", "--fast", "--no-history", audio, "-o", str(tmp_path / "a.json"), env=dirs)
    assert result.returncode == 0, result.stderr
    assert_recognized(fixture, json.loads((tmp_path / "a.json").read_text())["utterances"][0]["text"])
    assert not default_path().exists()

    write_settings(dirs, "[history]\nkeep = false\n")
    result = voxdesk("transcribe", "--fast", audio, env=dirs)
    assert result.returncode == 0, result.stderr
    assert not default_path().exists()


def test_rewrite_runs_a_session_again_through_a_modes_cleanup_or_an_edit(
    sessions: tuple[int, int], capsys: pytest.CaptureFixture[str], fake_llm: FakeLlm
) -> None:
    weather, _ = sessions
    fake_llm.content = json.dumps({"text": "Sunny."})
    llm = ["--llm-url", fake_llm.url, "--llm-model", "fake-model"]
    assert main(["history", "rewrite", str(weather), *llm]) == 0
    assert capsys.readouterr().out == "Sunny.\nSunny.\n"
    heard = ["The weather today is sunny.", "Tomorrow it will rain."]
    assert [request["messages"][1]["content"] for request in fake_llm.requests] == heard
    assert main(["history", "rewrite", str(weather), "--edit", "make it formal", *llm]) == 0
    assert capsys.readouterr().out == "Sunny.\nSunny.\n"
    assert "make it formal" in fake_llm.requests[-1]["messages"][0]["content"]

    assert main(["history", "rewrite", str(weather), "--llm-url", "http://127.0.0.1:9/v1"]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines() == heard  # as it was: nothing is lost
    warnings = printed.err.splitlines()
    assert len(warnings) == 2 and warnings[0].startswith(
        "voxdesk: warning: utterance 1: not cleaned up: could not reach"
    )
    with HistoryStore.open() as store:
        assert [u.text for u in store.utterances(weather)] == heard  # the history is left as it is


def test_rewrite_of_one_utterance_with_another_model_asks_that_model_for_that_utterance_only(
    sessions: tuple[int, int], capsys: pytest.CaptureFixture[str], fake_llm: FakeLlm
) -> None:
    weather, _ = sessions
    fake_llm.content = json.dumps({"text": "Rain."})
    llm = ["--llm-url", fake_llm.url, "--llm-model", "another-model"]
    assert main(["history", "rewrite", str(weather), "--utterance", "2", *llm]) == 0
    assert capsys.readouterr().out == "Rain.\n"
    [request] = fake_llm.requests
    assert (request["model"], request["messages"][1]["content"]) == ("another-model", "Tomorrow it will rain.")
    assert main(["history", "rewrite", str(weather), "--utterance", "3", *llm]) == 2
    assert capsys.readouterr().err == f"voxdesk: session {weather} has 2 utterances, no number 3\n"
