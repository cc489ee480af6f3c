"""The assistant's voice: replies synthesized and played one at a time, as the speech settings say.

A reply that comes while another is spoken cuts it off (the newest is what the user is waiting
for); an alarm is a chime, then its words. Nothing here raises to the caller of
:meth:`Speaker.announce`: a synthesizer or a sound output that fails is one line, said once
until it works again, and the reply stays on screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable

import numpy as np

from voxdesk.app.settings import SpeechSettings
from voxdesk.app.speaking.playback import Playback, PlaybackUnavailable
from voxdesk.app.speaking.replies import ReplyKind, spoken_text
from voxdesk.engine.errors import EngineUnavailable
from voxdesk.engine.tts.choice import synthesizer_for
from voxdesk.engine.tts.speech import Speech, Synthesizer

__all__ = ["ECHO_TAIL_S", "Speaker", "chime"]

ECHO_TAIL_S = 0.5
"""After a reply ends, how long the microphone may still hear it: the sound server's and the
room's delay, and the capture block that holds its last sound."""

logger = logging.getLogger("voxdesk.speech")


def chime(rate: int = 22_050) -> Speech:
    """An alarm's sound: three short rising beeps (0.9 s)."""
    beeps = []
    for pitch in (880.0, 1109.0, 1319.0):
        t = np.arange(int(0.18 * rate)) / rate
        envelope = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.01)  # 10 ms ramps: no clicks
        beeps += [0.5 * envelope * np.sin(2 * np.pi * pitch * t), np.zeros(int(0.12 * rate))]
    return Speech(np.concatenate(beeps).astype(np.float32), rate)


class Speaker:
    """Says replies aloud with the synthesizer ``settings`` name (``synthesizer`` replaces it)."""

    def __init__(
        self,
        settings: SpeechSettings,
        *,
        synthesizer: Synthesizer | None = None,
        on_problem: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self._given = synthesizer
        self.synthesizer = synthesizer or _synthesizer(settings)
        self.playback = Playback()
        self._on_problem = on_problem or (lambda message: None)
        self._saying: asyncio.Task[None] | None = None
        self._last_problem = ""
        # When the last sound started and ended (None: it plays), in perf_counter time as capture stamps audio.
        self._sounding: tuple[float, float | None] = (math.inf, math.inf)

    @property
    def speaking(self) -> bool:
        """Whether a reply is being synthesized or played."""
        return self._saying is not None and not self._saying.done()

    def heard_at(self, captured_at: float) -> bool:
        """Whether the microphone may hear a reply in audio captured at ``captured_at``
        (``time.perf_counter()``): while one plays and :data:`ECHO_TAIL_S` after."""
        started, ended = self._sounding
        return started <= captured_at and (ended is None or captured_at <= ended + ECHO_TAIL_S)

    def update_settings(self, settings: SpeechSettings) -> None:
        """Use new speech settings from the next reply on."""
        self.settings = settings
        self.synthesizer = self._given or _synthesizer(settings)

    def wants(self, kind: ReplyKind, dictating: bool) -> bool:
        """Whether a reply of ``kind`` is spoken (in dictation mode only alarms, unless ``in_dictation``)."""
        if dictating and kind is not ReplyKind.ALARM and not self.settings.in_dictation:
            return False
        return bool(getattr(self.settings, kind.value))

    def announce(self, text: str, kind: ReplyKind, dictating: bool = False) -> None:
        """Say ``text`` in the background if the settings want ``kind``, cutting off any reply
        being spoken. Needs a running event loop."""
        if not text.strip() or not self.wants(kind, dictating):
            return
        self.stop()
        self._saying = asyncio.get_running_loop().create_task(self._say_reported(text, kind))

    async def say(self, text: str, *, with_chime: bool = False) -> bool:
        """Say ``text`` now (whole: no cut); ``True`` when it was played to the end.

        Raises:
            EngineUnavailable: the synthesizer failed.
            PlaybackUnavailable: no sound output.
        """
        speech = await self.synthesizer.synthesize(text)
        if with_chime and not await self._play(chime()):
            return False
        return await self._play(speech)

    async def _play(self, speech: Speech) -> bool:
        started = time.perf_counter()
        self._sounding = (started, None)
        try:
            return await self.playback.play(speech, self.settings.volume)
        finally:
            self._sounding = (started, time.perf_counter())

    def stop(self) -> None:
        """Cut off the reply being spoken, if any."""
        if self._saying is not None and not self._saying.done():
            self._saying.cancel()
        self.playback.stop()

    async def finished(self) -> None:
        """Wait until the reply being spoken, if any, has ended."""
        if self._saying is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._saying)

    async def aclose(self) -> None:
        """Stop speaking and wait until the reply's task has ended."""
        self.stop()
        if self._saying is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._saying

    async def _say_reported(self, text: str, kind: ReplyKind) -> None:
        try:
            await self.say(spoken_text(text, self.settings.max_sentences), with_chime=kind is ReplyKind.ALARM)
        except (EngineUnavailable, PlaybackUnavailable) as error:
            message = f"replies are not spoken: {error}"
            logger.warning("%s", message)
            if message != self._last_problem:
                self._last_problem = message
                self._on_problem(message)
            return
        self._last_problem = ""


def _synthesizer(settings: SpeechSettings) -> Synthesizer:
    return synthesizer_for(
        settings.backend, settings.voice, settings.rate, settings.url, settings.model, settings.api_key
    )
