"""The one PCM module every wire core and client engine encodes, decodes and resamples with."""

from __future__ import annotations

import numpy as np
import pytest
import soxr

from voxdesk.engine.session import SAMPLE_RATE
from voxdesk.engine.wire.codes import ProtocolError, WireCode
from voxdesk.engine.wire.pcm import AudioConverter, Resampler, decode_audio, encode_audio, from_pcm, to_pcm16

SAMPLES = np.array([-1.5, -1.0, -0.5, 0.0, 0.25, 1.0, 2.0], np.float32)


def test_encoding_clips_and_scales_by_32767() -> None:
    ints = np.frombuffer(to_pcm16(SAMPLES), "<i2")
    assert ints.tolist() == [-32767, -32767, -16383, 0, 8191, 32767, 32767]
    assert encode_audio(SAMPLES) == "AYABgAHAAAD/H/9//38="


@pytest.mark.parametrize("width", [2, 3, 4])
def test_decoding_each_width_scales_by_its_full_range(width: int) -> None:
    bits = 8 * width
    ints = [-(2 ** (bits - 1)), -1, 0, 1, 2 ** (bits - 1) - 1]
    audio = b"".join(value.to_bytes(width, "little", signed=True) for value in ints)
    samples = from_pcm(audio, width)
    assert samples.dtype == np.float32
    assert samples.tolist() == [np.float32(value / 2 ** (bits - 1)) for value in ints]


def test_base64_audio_round_trips_and_refuses_what_is_not_pcm16() -> None:
    expected = np.frombuffer(to_pcm16(SAMPLES), "<i2") / 32768
    assert np.array_equal(decode_audio(encode_audio(SAMPLES), len(SAMPLES)), expected)
    for bad in ("A", "AA==", "", "AAAAAAAA"):  # not base64, an odd byte count, no samples, 3 samples > 2
        with pytest.raises(ProtocolError) as refused:
            decode_audio(bad, 2)
        assert (refused.value.code, refused.value.message) == (WireCode.INVALID_AUDIO, "Invalid audio data")


def test_resampling_in_chunks_is_one_soxr_stream() -> None:
    audio = np.sin(np.arange(24_000, dtype=np.float32) / 7).astype(np.float32)
    stream = soxr.ResampleStream(24_000, SAMPLE_RATE, 1, "float32")
    expected = np.concatenate(
        [
            stream.resample_chunk(audio[:9_000]),
            stream.resample_chunk(audio[9_000:]),
            stream.resample_chunk(audio[:0], last=True),
        ]
    )
    resampler = Resampler(24_000)
    got = np.concatenate([resampler.resample(audio[:9_000]), resampler.resample(audio[9_000:]), resampler.flush()])
    assert got.dtype == np.float32 and np.array_equal(got, expected)


def test_the_same_rate_passes_unchanged() -> None:
    resampler = Resampler(SAMPLE_RATE)
    assert np.array_equal(resampler.resample(SAMPLES), SAMPLES) and len(resampler.flush()) == 0


def test_converter_mixes_channels_down_and_restarts_its_resampler_on_a_new_layout() -> None:
    left, right = np.int16(16384), np.int16(-8192)
    stereo = np.array([left, right] * 800, "<i2").tobytes()
    converter = AudioConverter()
    mixed = converter.convert(stereo, SAMPLE_RATE, 2, 2)
    assert mixed.tolist() == [np.float32((0.5 - 0.25) / 2)] * 800

    mono_48k = np.full(4_800, 8192, "<i2").tobytes()
    fresh = AudioConverter()
    assert np.array_equal(converter.convert(mono_48k, 48_000, 2, 1), fresh.convert(mono_48k, 48_000, 2, 1))
    assert np.array_equal(converter.flush(), fresh.flush())
