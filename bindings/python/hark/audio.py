"""Audio in: files, file-like objects and NumPy arrays, as faster-whisper takes them.

hark decodes files itself (libsndfile, libmpg123; resampled with libsoxr), so there is no ffmpeg
or PyAV here. Everything becomes 16 kHz mono float32 in [-1, 1], what the engine listens to.
"""

from typing import BinaryIO, Union

import numpy as np

from hark import _hark

SAMPLING_RATE = 16000


def decode_audio(
    input_file: Union[str, BinaryIO],
    sampling_rate: int = 16000,
    split_stereo: bool = False,
) -> Union[np.ndarray, "tuple[np.ndarray, np.ndarray]"]:
    """Decodes a file (a path or a binary file-like object) to float32 samples at 16 kHz mono.

    sampling_rate must be 16000 (the rate Whisper models listen at). split_stereo=True returns
    the left and the right channel, each on its own, as (left, right); a file with one channel
    is a ValueError.
    """
    if sampling_rate != SAMPLING_RATE:
        raise ValueError(f"sampling_rate: hark decodes to 16000 Hz (what Whisper models take), not {sampling_rate}")
    source = _source(input_file)
    if split_stereo:
        return _hark.decode_audio(source, 0), _hark.decode_audio(source, 1)
    return _hark.decode_audio(source)


def _source(input_file: Union[str, BinaryIO, bytes]) -> Union[str, bytes]:
    if isinstance(input_file, (bytes, bytearray, memoryview)):
        return bytes(input_file)
    if hasattr(input_file, "read"):
        data = input_file.read()
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("audio: a file-like object must be opened in binary mode ('rb')")
        return bytes(data)
    if hasattr(input_file, "__fspath__") or isinstance(input_file, str):
        import os

        return os.fspath(input_file)
    raise ValueError(f"audio: a path, a binary file-like object or a NumPy array, not {type(input_file).__name__}")


def to_samples(audio) -> np.ndarray:
    """What transcribe() takes as `audio`, as 16 kHz mono float32 samples.

    Arrays: float32 as it is; other float dtypes converted; int16 / int32 / uint8 PCM scaled to
    [-1, 1] as WAV files define them. An array must be one-dimensional: 16 kHz mono samples (a
    (samples, channels) array is refused, since its rate cannot be known either).
    """
    if isinstance(audio, np.ndarray):
        return _array_samples(audio)
    if type(audio).__module__.startswith("torch"):
        return _array_samples(audio.detach().cpu().numpy())
    return _hark.decode_audio(_source(audio))


def _array_samples(a: np.ndarray) -> np.ndarray:
    if a.ndim != 1:
        raise ValueError(
            f"audio: a one-dimensional array of 16 kHz mono samples is needed, not shape {a.shape} "
            "(mix the channels and resample first, or pass the file itself)"
        )
    if a.dtype == np.float32:
        out = a
    elif a.dtype.kind == "f":
        out = a.astype(np.float32)
    elif a.dtype == np.int16:
        out = a.astype(np.float32) / 32768.0
    elif a.dtype == np.int32:
        out = (a.astype(np.float64) / 2147483648.0).astype(np.float32)
    elif a.dtype == np.uint8:
        out = (a.astype(np.float32) - 128.0) / 128.0
    else:
        raise ValueError(f"audio: samples of dtype {a.dtype} are not audio (float32, float64, int16, int32 or uint8)")
    out = np.ascontiguousarray(out)
    if out.size and not np.isfinite(out).all():
        raise ValueError("audio: the samples contain NaN or infinity")
    return out
