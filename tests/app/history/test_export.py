"""Exports checked with independent parsers (``srt``, ``webvtt-py``), and against real speech bounds."""

from __future__ import annotations

import html
import json
import statistics
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import srt
import webvtt

from tests.speech_fixtures import Fixture
from voxdesk.app.files.transcription import TranscriptionReport
from voxdesk.app.history.export import (
    ExportError,
    export_hits,
    export_session,
    format_for_path,
    parse_format,
    srt_time,
    vtt_time,
)
from voxdesk.app.history.recording import record_report, report_session
from voxdesk.app.history.records import SessionRecord, UtteranceRecord
from voxdesk.app.history.store import HistoryStore

# Cue times within 0.3 s of the true speech bounds. Measured on this fixture: starts off by at
# most 0.11 s (median 0.01 s), ends by at most 0.06 s (median 0.03 s); the engine's own test
# (tests/engine/test_builtin_engine.py) allows 0.4 s for ends, which the exports do not need.
TOLERANCE = 0.3

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SESSION = SessionRecord(3, NOW, NOW, "file", "builtin", "whisper-tiny.en", "/tmp/a.wav")


def utterance(id_: int, text: str, start: float, end: float, session_id: int = 3) -> UtteranceRecord:
    return UtteranceRecord(id_, session_id, text, start, end, 0.3, 0.6, None, NOW)


UTTERANCES = [
    utterance(1, "Open the browser.", 0.5, 1.75),
    utterance(2, "Fish & chips <b>now</b> --> later", 61.0006, 62.5),
    utterance(3, "Two\nlines\n\nwith a blank one", 3599.9996, 3725.25),
    utterance(4, "", 3800, 3801),  # empty text gets no cue
]


def vtt_seconds(stamp: str) -> float:
    hours, minutes, seconds = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


@pytest.mark.parametrize(
    ("seconds", "srt_stamp", "vtt_stamp"),
    [
        (0, "00:00:00,000", "00:00:00.000"),
        (1.2345, "00:00:01,234", "00:00:01.234"),
        (59.9996, "00:01:00,000", "00:01:00.000"),
        (3661.5, "01:01:01,500", "01:01:01.500"),
        (-0.2, "00:00:00,000", "00:00:00.000"),
        (100 * 3600 + 0.001, "100:00:00,001", "100:00:00.001"),
    ],
)
def test_timestamps(seconds: float, srt_stamp: str, vtt_stamp: str) -> None:
    assert srt_time(seconds) == srt_stamp
    assert vtt_time(seconds) == vtt_stamp


def test_formats_by_name_and_extension() -> None:
    assert [parse_format(n) for n in ("srt", ".VTT", "Txt", "json")] == ["srt", "vtt", "txt", "json"]
    assert [format_for_path(p) for p in ("a.srt", "b/c.VTT", "notes.txt", Path("x.json"))] == [
        "srt",
        "vtt",
        "txt",
        "json",
    ]
    for bad in ("doc", "", "s rt"):
        with pytest.raises(ExportError, match="unknown export format"):
            parse_format(bad)
    for bad in ("out", "out.doc", "out.srt.bak"):
        with pytest.raises(ExportError, match="name it"):
            format_for_path(bad)


def test_srt_parses_with_the_srt_library() -> None:
    cues = list(srt.parse(export_session(SESSION, UTTERANCES, "srt")))
    assert [c.index for c in cues] == [1, 2, 3]
    assert [c.content for c in cues] == [
        "Open the browser.",
        "Fish & chips <b>now</b> --> later",
        "Two lines with a blank one",
    ]
    assert [(c.start.total_seconds(), c.end.total_seconds()) for c in cues] == [
        (0.5, 1.75),
        (61.001, 62.5),
        (3600.0, 3725.25),
    ]


def test_vtt_parses_with_webvtt_py() -> None:
    text = export_session(SESSION, UTTERANCES, "vtt")
    assert text.startswith("WEBVTT\n")
    captions = webvtt.from_string(text).captions
    assert [html.unescape(c.text) for c in captions] == [
        "Open the browser.",
        "Fish & chips <b>now</b> --> later",
        "Two lines with a blank one",
    ]
    assert [(vtt_seconds(c.start), vtt_seconds(c.end)) for c in captions] == [
        (0.5, 1.75),
        (61.001, 62.5),
        (3600.0, 3725.25),
    ]


def test_txt_and_json() -> None:
    assert export_session(SESSION, UTTERANCES[:2], "txt") == "Open the browser.\nFish & chips <b>now</b> --> later\n"
    payload = json.loads(export_session(SESSION, UTTERANCES, "json"))
    assert payload["session"]["id"] == 3 and payload["session"]["source"] == "/tmp/a.wav"
    assert payload["session"]["started_at"] == NOW.isoformat()
    assert [u["text"] for u in payload["utterances"]] == [u.text for u in UTTERANCES]
    assert payload["utterances"][0]["start_s"] == 0.5 and payload["utterances"][0]["final_latency_s"] == 0.6


def test_a_zero_length_cue_still_ends_after_it_starts() -> None:
    cues = list(srt.parse(export_session(SESSION, [utterance(1, "blip", 2.0, 2.0)], "srt")))
    assert cues[0].end > cues[0].start


def test_search_hits_export_oldest_session_first(tmp_path: Path) -> None:
    with HistoryStore.open(tmp_path / "history.sqlite3") as store:
        first = store.start_session("file", "builtin", "m", "a.wav")
        store.add_utterance(first, "the weather is fine", 5.0, 6.5)
        store.add_utterance(first, "weather again", 1.0, 2.0)
        second = store.start_session("live", "builtin", "m", "mic")
        store.add_utterance(second, "weather in Paris", 0.5, 1.5)
        hits = store.search("weather")
    assert [h.session.id for h in hits] == [second, first, first]  # search: newest first
    cues = list(srt.parse(export_hits(hits, "srt")))
    assert [c.content for c in cues] == ["weather again", "the weather is fine", "weather in Paris"]
    captions = webvtt.from_string(export_hits(hits, "vtt")).captions
    assert [str(c.identifier).split(",")[0] for c in captions] == [f"session {first}"] * 2 + [f"session {second}"]
    assert [vtt_seconds(c.start) for c in captions] == [1.0, 5.0, 0.5]
    lines = export_hits(hits, "txt").splitlines()
    assert lines[0].startswith(f"[session {first}, ") and lines[0].endswith("00:00:01.000] weather again")
    payload = json.loads(export_hits(hits, "json"))
    assert [h["session"]["id"] for h in payload["hits"]] == [first, first, second]


@pytest.fixture(scope="module")
def long_recording(
    speech: dict[str, Fixture],
    fast_transcripts: dict[str, TranscriptionReport],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Fixture, HistoryStore, int]]:
    """The 65 s, 14-sentence recording transcribed by the built-in engine and recorded in a store."""
    store = HistoryStore.open(tmp_path_factory.mktemp("history") / "history.sqlite3")
    fixture = speech["long-slt"]
    session = record_report(store, fast_transcripts["long-slt"], engine="builtin", model="tiny", source=fixture.path)
    yield fixture, store, session
    store.close()


def _errors(expected: list[tuple[float, float]], got: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """How far each cue's start and end is from the true speech bounds, in seconds."""
    pairs = list(zip(got, expected, strict=True))
    return [abs(g[0] - e[0]) for g, e in pairs], [abs(g[1] - e[1]) for g, e in pairs]


def test_srt_cues_of_real_speech_match_its_known_bounds(long_recording: tuple[Fixture, HistoryStore, int]) -> None:
    fixture, store, session = long_recording
    cues = list(srt.parse(export_session(store.session(session), store.utterances(session), "srt")))
    starts, ends = _errors(fixture.speech, [(c.start.total_seconds(), c.end.total_seconds()) for c in cues])
    print(f"SRT cue errors: start max {max(starts):.3f} median {statistics.median(starts):.3f}, "
          f"end max {max(ends):.3f} median {statistics.median(ends):.3f}")  # fmt: skip
    assert max(starts) < TOLERANCE
    assert max(ends) < TOLERANCE
    assert " ".join(c.content for c in cues) == " ".join(u.text for u in store.utterances(session))


def test_vtt_cues_of_real_speech_match_its_known_bounds(long_recording: tuple[Fixture, HistoryStore, int]) -> None:
    fixture, store, session = long_recording
    captions = webvtt.from_string(export_session(store.session(session), store.utterances(session), "vtt")).captions
    starts, ends = _errors(fixture.speech, [(vtt_seconds(c.start), vtt_seconds(c.end)) for c in captions])
    assert max(starts) < TOLERANCE
    assert max(ends) < TOLERANCE


def test_a_report_exports_the_same_without_a_store(
    long_recording: tuple[Fixture, HistoryStore, int], fast_transcripts: dict[str, TranscriptionReport]
) -> None:
    _, store, session = long_recording
    direct_session, direct = report_session(fast_transcripts["long-slt"], engine="builtin", model="tiny", source="x")
    from_store = export_session(store.session(session), store.utterances(session), "srt")
    assert export_session(direct_session, direct, "srt") == from_store
    stored = store.utterances(session)
    assert [u.first_partial_latency_s for u in stored] == [u.first_partial_latency_s for u in direct]
    assert all(u.final_latency_s is not None and u.final_latency_s > 0 for u in stored)
