"""``voxdesk transcribe --json``: each finished utterance's event and the summary carry its language."""

from __future__ import annotations

import json

from voxdesk.app.files.transcription import TimedEvent, TranscriptionReport, UtteranceReport
from voxdesk.cli.terminal import event_to_json
from voxdesk.engine import UtteranceDone


def test_a_done_event_says_its_language() -> None:
    done = json.loads(event_to_json(TimedEvent(UtteranceDone("Guten Tag.", 2.0, 0.0, 2.0, language="de"), 2.0)))
    assert done["type"] == "done" and done["language"] == "de"
    unknown = json.loads(event_to_json(TimedEvent(UtteranceDone("Hello.", 2.0, 0.0, 2.0), 2.0)))
    assert unknown["language"] is None


def test_the_summary_lists_the_languages_heard() -> None:
    report = TranscriptionReport(audio_seconds=6.0)
    for text, language in (("Guten Tag.", "de"), ("Bonjour.", "fr"), ("Tschüss.", "de"), ("", "en"), ("Hm.", None)):
        report.utterances.append(UtteranceReport(UtteranceDone(text, 2.0, 0.0, 2.0, language=language), None, None))
    assert report.summary()["languages"] == ["de", "fr"]
    assert json.loads(json.dumps(report.summary()))["languages"] == ["de", "fr"]
