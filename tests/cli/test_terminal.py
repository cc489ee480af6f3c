import io
import json

from voxdesk.app.files.transcription import TimedEvent
from voxdesk.cli.terminal import LiveTranscriptPrinter, event_to_json
from voxdesk.engine import (
    EngineEvent,
    ProvisionalText,
    StreamError,
    StreamErrorCode,
    TextDelta,
    TextRetracted,
    UtteranceDone,
)

EVENTS: list[EngineEvent] = [
    ProvisionalText("Set a timer.", 0.9),
    TextDelta("Set a", 1.4),
    ProvisionalText(" timer for five.", 1.4),
    TextDelta(" timer for five minutes.", 1.9),
    UtteranceDone("Set a timer for five minutes.", 1.9, 0.3, 1.8),
]


def test_on_a_terminal_the_line_is_redrawn_with_the_tail_dimmed() -> None:
    out = io.StringIO()
    printer = LiveTranscriptPrinter(out, interactive=True)
    for event in EVENTS[:3]:
        printer(TimedEvent(event, 0.0))
    last_draw = out.getvalue().split("\r\x1b[K")[-1]
    assert last_draw == "Set a\x1b[2m timer for five.\x1b[0m"


def test_elsewhere_only_finished_utterances_are_printed() -> None:
    out = io.StringIO()
    printer = LiveTranscriptPrinter(out, interactive=False)
    for event in [*EVENTS, StreamError(StreamErrorCode.PROCESSING_ERROR, "boom", 2.0)]:
        printer(TimedEvent(event, 0.0))
    assert out.getvalue().splitlines() == [
        "[   0.30 →    1.80] Set a timer for five minutes.",
        "engine error (processing_error): boom",
    ]


def test_events_become_json_lines_with_type_and_wall_time() -> None:
    line = json.loads(event_to_json(TimedEvent(EVENTS[1], 1.23456)))
    assert line == {"type": "delta", "text": "Set a", "audio_time": 1.4, "wall_time": 1.2346}
    done = json.loads(event_to_json(TimedEvent(EVENTS[-1], 2.0)))
    assert done["type"] == "done" and done["stats"]["partial_decodes"] == 0


def test_summary_says_n_a_for_figures_an_engine_does_not_report() -> None:
    from voxdesk.app.files.transcription import TranscriptionReport, UtteranceReport
    from voxdesk.cli.terminal import print_summary
    from voxdesk.engine import UtteranceStats

    done = UtteranceDone("Hello there.", 2.0, 0.0, 2.0, UtteranceStats(2.0, None, 0))
    report = TranscriptionReport(audio_seconds=2.0, wall_seconds=2.1, cpu_seconds=0.1)
    report.utterances.append(UtteranceReport(done, first_text_latency=0.4, final_latency=0.3))
    out = io.StringIO()
    print_summary(report, out)
    assert "Hello there." in out.getvalue()
    assert "Real-time factor n/a (decoding), 1.05 (wall)" in out.getvalue()
    assert "median 0.40 s" in out.getvalue()


def test_a_retraction_clears_the_live_line_and_is_a_json_line() -> None:
    out = io.StringIO()
    printer = LiveTranscriptPrinter(out, interactive=True)
    events: list[EngineEvent] = [TextDelta("Set a", 1.4), TextRetracted(1.5), TextDelta("Set", 1.6)]
    for event in events:
        printer(TimedEvent(event, 0.0))
    assert out.getvalue().split("\r\x1b[K")[-1] == "Set\x1b[2m\x1b[0m"
    assert json.loads(event_to_json(TimedEvent(TextRetracted(1.5), 2.0))) == {
        "type": "retracted",
        "audio_time": 1.5,
        "wall_time": 2.0,
    }
