"""The Wyoming audio the server takes (§2.3, §8.1 item 5): each ``audio-chunk`` states its own
format, checked here; :class:`~voxdesk.engine.wire.pcm.AudioConverter` turns it into 16 kHz mono.
"""

from __future__ import annotations

from voxdesk.engine.wire.codes import WireCode
from voxdesk.engine.wire.pcm import WIDTHS
from voxdesk.engine.wire.wyoming.events import AudioFormat, WyomingProtocolError

__all__ = ["MAX_RATE", "MIN_RATE", "check_format"]

MIN_RATE, MAX_RATE = 8_000, 192_000


def check_format(audio_format: AudioFormat, size: int) -> None:
    """Refuse a chunk of ``size`` bytes in ``audio_format`` that cannot be converted.

    Raises:
        WyomingProtocolError: ``invalid_audio`` for a width, rate or payload length this cannot take.
    """
    if audio_format.width not in WIDTHS:
        raise WyomingProtocolError(
            WireCode.INVALID_AUDIO, f"unsupported sample width {audio_format.width}: send 16, 24 or 32-bit PCM"
        )
    if not MIN_RATE <= audio_format.rate <= MAX_RATE:
        raise WyomingProtocolError(
            WireCode.INVALID_AUDIO, f"unsupported rate {audio_format.rate} Hz: send {MIN_RATE} to {MAX_RATE} Hz"
        )
    if size % (audio_format.width * audio_format.channels):
        raise WyomingProtocolError(
            WireCode.INVALID_AUDIO, "audio-chunk payload is not a whole number of samples for its width and channels"
        )
