"""Speech played on the default output device through PortAudio, stoppable at once.

sounddevice is imported at the first play, as for capture (:mod:`voxdesk.app.listening.capture`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from typing import Any

import numpy as np

from voxdesk.engine.errors import VoxdeskError
from voxdesk.engine.tts.speech import Speech

__all__ = ["LATE_S", "Playback", "PlaybackUnavailable"]

LATE_S = 3.0
"""How long past its length a speech may take to play before its device counts as gone."""


class PlaybackUnavailable(VoxdeskError):
    """No output device can be opened; the message says why."""


class Playback:
    """Plays one speech at a time; :meth:`stop` cuts it off where it is."""

    def __init__(self) -> None:
        self._stream: Any = None
        self._stopped = False

    @property
    def playing(self) -> bool:
        """Whether a speech is playing now."""
        return self._stream is not None

    async def play(self, speech: Speech, volume: float = 1.0) -> bool:
        """Play ``speech`` at ``volume`` (0 to 1); ``True`` once its last sample left the device,
        ``False`` when :meth:`stop` cut it.

        Raises:
            PlaybackUnavailable: PortAudio is missing or no output device opens.
        """
        self.stop()
        try:
            sounddevice = importlib.import_module("sounddevice")
        except OSError as error:  # the PortAudio library itself is missing
            raise PlaybackUnavailable(f"no sound output: {error}") from None
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        samples = np.clip(speech.samples * max(0.0, min(1.0, volume)), -1.0, 1.0).astype(np.float32)
        position = 0

        def fill(out: np.ndarray, frames: int, _time: Any, _status: Any) -> None:
            nonlocal position
            chunk = samples[position : position + frames]
            out[: len(chunk), 0] = chunk
            out[len(chunk) :, 0] = 0.0
            position += frames
            if position >= len(samples):
                raise sounddevice.CallbackStop  # PortAudio plays what it holds, then finishes

        def settle() -> None:
            if not finished.done():
                finished.set_result(None)

        def ended() -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed first: nobody waits any more
                loop.call_soon_threadsafe(settle)

        self._stopped = False
        try:
            stream = sounddevice.OutputStream(
                samplerate=speech.rate, channels=1, dtype="float32", callback=fill, finished_callback=ended
            )
            stream.start()
        except sounddevice.PortAudioError as error:
            raise PlaybackUnavailable(f"no sound output device could be opened ({error})") from None
        self._stream = stream
        try:
            # A device that vanishes mid-speech (the sound server died) never calls back.
            async with asyncio.timeout(speech.duration + LATE_S):
                await finished
        except TimeoutError:
            raise PlaybackUnavailable("the sound output stopped playing (its device went away?)") from None
        finally:
            if self._stream is stream:
                self._stream = None
            with contextlib.suppress(sounddevice.PortAudioError):
                stream.close()
        return not self._stopped

    def stop(self) -> None:
        """Cut off the speech playing now, if any (its :meth:`play` returns ``False``)."""
        stream = self._stream
        if stream is not None:
            self._stopped = True
            stream.abort()  # at once, not after the buffers queued; the finished callback runs
