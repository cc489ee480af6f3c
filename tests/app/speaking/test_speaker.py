"""The assistant's voice: which replies are said, how they are cut, and playback on a real
PulseAudio loudspeaker (a null sink of the test rig), recorded from its monitor."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from tests.desktop_rig import VirtualMic
from voxdesk.app.actions.center import ActionRecord, ActionStatus
from voxdesk.app.actions.kinds import Action
from voxdesk.app.files.reading import read_audio
from voxdesk.app.settings import SpeechSettings
from voxdesk.app.speaking.playback import Playback
from voxdesk.app.speaking.replies import MORE_ON_SCREEN, ReplyKind, reply_for, spoken_text
from voxdesk.app.speaking.speaker import Speaker
from voxdesk.engine.tts.espeak import EspeakSynthesizer
from voxdesk.engine.tts.speech import Speech


def record(
    status: ActionStatus, action: Action = Action.OPEN_APP, message: str = "", preview: str = ""
) -> ActionRecord:
    return ActionRecord(
        id=1, command="c", action=action, slots={}, preview=preview, utterance="u", utterance_id=1, source="phrase",
        needs_confirmation=False, created_at=0.0, status=status, message=message,
    )  # fmt: skip


def test_answers_questions_and_failures_are_replies_and_a_done_action_or_not_understood_is_not() -> None:
    assert reply_for(record(ActionStatus.DONE, Action.ANSWER, "It is 9:05 AM.")) == ("It is 9:05 AM.", ReplyKind.ANSWER)
    assert reply_for(record(ActionStatus.WAITING, preview="Delete report.txt")) == (
        "Delete report.txt?",
        ReplyKind.CONFIRMATION,
    )
    assert reply_for(record(ActionStatus.FAILED, message="no browser is installed")) == (
        "That did not work: no browser is installed.",
        ReplyKind.ERROR,
    )
    assert reply_for(record(ActionStatus.NOT_UNDERSTOOD)) is None  # shown only: the microphone stays open
    assert reply_for(record(ActionStatus.DONE, message="started firefox")) is None
    assert reply_for(record(ActionStatus.RUNNING, Action.ANSWER)) is None


def test_a_long_reply_is_cut_at_a_sentence_with_more_on_screen() -> None:
    text = "First one. Second one? Third one! Fourth."
    assert spoken_text(text, 2) == f"First one. Second one? {MORE_ON_SCREEN}"
    assert spoken_text(text, 4) == text
    assert spoken_text("No end mark at all", 1) == "No end mark at all"


@pytest.mark.parametrize(
    ("kind", "dictating", "wanted"),
    [
        (ReplyKind.ANSWER, False, True),
        (ReplyKind.ANSWER, True, False),  # dictating: nothing but alarms is said
        (ReplyKind.ALARM, True, True),
        (ReplyKind.ERROR, False, False),  # turned off below
    ],
)
def test_each_kind_of_reply_follows_its_setting(kind: ReplyKind, dictating: bool, wanted: bool) -> None:
    speaker = Speaker(SpeechSettings(errors=False))
    assert speaker.wants(kind, dictating) is wanted


def test_a_synthesizer_that_fails_is_one_problem_however_many_replies_fail() -> None:
    problems: list[str] = []
    missing = EspeakSynthesizer(program="no-such-espeak-ng")
    speaker = Speaker(SpeechSettings(), synthesizer=missing, on_problem=problems.append)

    async def twice() -> None:
        for _ in range(2):
            speaker.announce("It is 9:05 AM.", ReplyKind.ANSWER)
            await speaker.finished()

    asyncio.run(twice())
    assert problems == ["replies are not spoken: espeak-ng is not installed (Debian and Ubuntu: sudo apt install "
                        "espeak-ng; Fedora: sudo dnf install espeak-ng)"]  # fmt: skip


def loud_seconds(recording: Path) -> float:
    """Seconds of a recording louder than silence (16 kHz)."""
    audio = read_audio(recording)
    return float(np.count_nonzero(np.abs(audio) > 0.02)) / 16_000


def tone(seconds: float, rate: int = 22_050) -> Speech:
    t = np.arange(int(seconds * rate)) / rate
    return Speech((0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), rate)


def test_a_reply_plays_on_the_loudspeaker_to_its_end(virtual_mic: VirtualMic, tmp_path: Path) -> None:
    recorder = virtual_mic.record_speaker(tmp_path / "played.wav")

    async def play() -> bool:
        return await Playback().play(tone(1.0))

    assert asyncio.run(play()) is True
    virtual_mic.finish_recording(recorder, tmp_path / "played.wav")
    assert 0.9 < loud_seconds(tmp_path / "played.wav") < 1.1


def test_stop_cuts_a_reply_off_where_it_is(virtual_mic: VirtualMic, tmp_path: Path) -> None:
    recorder = virtual_mic.record_speaker(tmp_path / "cut.wav")
    playback = Playback()

    async def play_then_stop() -> bool:
        playing = asyncio.ensure_future(playback.play(tone(10.0)))
        while not playback.playing:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        playback.stop()
        return await playing

    assert asyncio.run(play_then_stop()) is False
    virtual_mic.finish_recording(recorder, tmp_path / "cut.wav")
    assert loud_seconds(tmp_path / "cut.wav") < 3.0  # of 10 s


def test_an_alarm_chimes_before_its_words(virtual_mic: VirtualMic, tmp_path: Path) -> None:
    recorder = virtual_mic.record_speaker(tmp_path / "alarm.wav")
    speaker = Speaker(SpeechSettings())

    async def ring() -> None:
        speaker.announce("Your 2 seconds timer is up", ReplyKind.ALARM)
        assert speaker.speaking
        await speaker.finished()

    asyncio.run(ring())
    virtual_mic.finish_recording(recorder, tmp_path / "alarm.wav")
    played = read_audio(tmp_path / "alarm.wav")
    assert first_pitch(played) == pytest.approx(880, rel=0.03)
    beeps = 3 * 0.18
    assert loud_seconds(tmp_path / "alarm.wav") > beeps + 0.3  # and words after them


def first_pitch(audio: np.ndarray, rate: int = 16_000) -> float:
    """The loudest frequency (Hz) of 100 ms just after a recording's first sound."""
    onset = int(np.flatnonzero(np.abs(audio) > 0.05)[0])
    piece = audio[onset + rate // 50 : onset + rate // 50 + rate // 10]
    spectrum = np.abs(np.fft.rfft(piece * np.hanning(len(piece)), n=8 * len(piece)))
    return float(np.argmax(spectrum) * rate / (8 * len(piece)))
