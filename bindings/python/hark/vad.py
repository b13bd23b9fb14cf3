"""Voice activity detection with the Silero VAD network (hark's own, on whisper.cpp's
ggml-silero model file), under faster-whisper's names.

The model file is found as $HARK_VAD_MODEL, else as ggml-silero-v6.2.0.bin or
silero-v6.2.0-ggml.bin in hark's models folder ($HARK_MODELS or ~/.cache/hark/models).
"""

import math
import os
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from hark import _hark
from hark.audio import to_samples

_VAD_FILE_NAMES = ("ggml-silero-v6.2.0.bin", "silero-v6.2.0-ggml.bin")


@dataclass
class VadOptions:
    """faster-whisper's VAD options and defaults.

    threshold: P(speech) at or above which speech starts. neg_threshold: below it speech ends
    (None: max(threshold - 0.15, 0.01), the only value hark's VAD offers). min_speech_duration_ms:
    shorter speech is dropped. max_speech_duration_s: longer speech is cut. min_silence_duration_ms:
    a pause this long ends speech. speech_pad_ms: added on both sides of each stretch of speech.
    """

    threshold: float = 0.5
    neg_threshold: Optional[float] = None
    min_speech_duration_ms: int = 0
    max_speech_duration_s: float = float("inf")
    min_silence_duration_ms: int = 2000
    speech_pad_ms: int = 400

    def _engine(self) -> dict:
        if self.neg_threshold is not None and not math.isclose(
            self.neg_threshold, max(self.threshold - 0.15, 0.01), abs_tol=1e-6
        ):
            raise NotImplementedError(
                "VadOptions.neg_threshold: hark's VAD ends speech below threshold - 0.15; other values are not offered yet"
            )
        max_s = self.max_speech_duration_s
        return {
            "threshold": float(self.threshold),
            "min_speech_duration_ms": int(self.min_speech_duration_ms),
            "min_silence_duration_ms": int(self.min_silence_duration_ms),
            "max_speech_duration_s": float(np.finfo(np.float32).max) if math.isinf(max_s) else float(max_s),
            "speech_pad_ms": int(self.speech_pad_ms),
        }


def vad_model_path() -> str:
    """The Silero model file hark's VAD runs (see the module's text); FileNotFoundError if none."""
    given = os.environ.get("HARK_VAD_MODEL")
    if given:
        if not os.path.isfile(given):
            raise FileNotFoundError(f"HARK_VAD_MODEL: no file at {given}")
        return given
    folder = _hark.models_dir()
    for name in _VAD_FILE_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(
        "the VAD needs the Silero model in whisper.cpp's format: set HARK_VAD_MODEL to its path, or put "
        f"{_VAD_FILE_NAMES[0]} in {folder}"
    )


def get_speech_timestamps(
    audio: np.ndarray,
    vad_options: Optional[VadOptions] = None,
    sampling_rate: int = 16000,
    **kwargs,
) -> List[dict]:
    """The stretches of speech in 16 kHz samples, as [{"start": sample, "end": sample}, ...]."""
    if sampling_rate != 16000:
        raise ValueError(f"sampling_rate: hark's VAD listens at 16000 Hz, not {sampling_rate}")
    options = vad_options if vad_options is not None else VadOptions(**kwargs)
    samples = to_samples(audio)
    return [
        {"start": int(start), "end": int(end)}
        for start, end in _hark.speech_timestamps(samples, vad_model_path(), options._engine())
    ]
