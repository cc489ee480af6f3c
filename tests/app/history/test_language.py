"""The language of each utterance in the history: stored, migrated into old files, exported."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import numpy as np

from tests.random_whisper import random_whisper
from voxdesk.app.files.job import FileTranscription
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.history.export import export_session
from voxdesk.app.history.recording import record_report
from voxdesk.app.history.schema import MIGRATIONS, SCHEMA_VERSION, split_statements
from voxdesk.app.history.store import HistoryStore
from voxdesk.engine.whisper.builtin import BuiltinEngine, BuiltinSettings
from voxdesk.engine.whisper.decoder import DecoderSettings


def test_an_utterance_keeps_its_language(tmp_path: Path) -> None:
    with HistoryStore.open(tmp_path / "history.sqlite3") as store:
        session = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(session, "guten Tag", 0, 1, language="de")
        store.add_utterance(session, "no language", 1, 2)
        assert [u.language for u in store.utterances(session)] == ["de", None]
        assert store.search("guten")[0].utterance.language == "de"


def test_a_file_of_the_previous_schema_gains_the_language_column(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    connection = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[: SCHEMA_VERSION - 1]:
        for statement in split_statements(migration):
            connection.execute(statement)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    connection.execute(
        "INSERT INTO sessions (id, started_at, kind, engine, model, source) VALUES (3, ?, 'live', 'e', 'm', 's')",
        (time.time(),),
    )
    connection.execute(
        "INSERT INTO utterances (session_id, text, start_s, end_s, created_at) VALUES (3, 'older words', 0, 1, ?)",
        (time.time(),),
    )
    connection.close()

    with HistoryStore.open(path) as store:
        (old,) = store.utterances(3)
        assert old.text == "older words" and old.language is None
        assert [h.utterance.id for h in store.search("older")] == [old.id]
        store.add_utterance(3, "neue Worte", 1, 2, language="de")
        assert [u.language for u in store.utterances(3)] == [None, "de"]
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION


def test_json_export_has_each_utterances_language_and_subtitles_do_not(tmp_path: Path) -> None:
    with HistoryStore.open(tmp_path / "history.sqlite3") as store:
        session = store.start_session("file", "builtin", "m", "a.wav")
        store.add_utterance(session, "bonjour", 0, 1, language="fr")
        store.add_utterance(session, "unknown", 1, 2)
        record, utterances = store.session(session), store.utterances(session)
    payload = json.loads(export_session(record, utterances, "json"))
    assert [u["language"] for u in payload["utterances"]] == ["fr", None]
    assert "fr" not in export_session(record, utterances, "srt")
    assert "fr" not in export_session(record, utterances, "vtt")


def test_a_file_decoded_in_german_is_stored_and_exported_as_german(
    tmp_path: Path, fixture_audio: dict[str, np.ndarray]
) -> None:
    settings = DecoderSettings(model=str(random_whisper("tiny")), device="cpu", language="de")
    engine = BuiltinEngine(BuiltinSettings(decoder=settings))

    async def transcribe() -> TranscriptionReport:
        await engine.load()
        try:
            return await FileTranscription(engine, fixture_audio["command01-slt"]).run()
        finally:
            await engine.aclose()

    report = asyncio.run(transcribe())
    with HistoryStore.open(tmp_path / "history.sqlite3") as store:
        session = record_report(store, report, engine="builtin", model="tiny", source="command01.wav")
        utterances = store.utterances(session)
        exported = json.loads(export_session(store.session(session), utterances, "json"))
    assert utterances and {u.language for u in utterances} == {"de"}
    assert {u["language"] for u in exported["utterances"]} == {"de"}
