"""``voxdesk transcribe`` records the Whisper model that ran, not always the bundled one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import fixture_path
from tests.speech_fixtures import Fixture
from voxdesk.app.history.store import HistoryStore
from voxdesk.cli.main import main
from voxdesk.engine.whisper.models import model_directory


def test_the_history_and_the_json_transcript_name_the_whisper_model_given(
    dirs: dict[str, str], speech: dict[str, Fixture], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(model_directory())  # the bundled model, named by its folder: another choice than tiny.en
    output = tmp_path / "out.json"
    argv = ["transcribe", "--whisper-model", folder, "--device", "cpu", "-o", str(output)]
    assert main([*argv, str(fixture_path(speech["command01-slt"]))]) == 0, capsys.readouterr().err
    with HistoryStore.open() as store:
        (summary,) = store.sessions()
        assert store.session(summary.id).model == f"whisper-{folder}"
    assert json.loads(output.read_text())["session"]["model"] == f"whisper-{folder}"
