"""hark: offline Whisper speech-to-text, with faster-whisper's Python API.

    from hark import WhisperModel
    model = WhisperModel("base.en")                      # a name (from hark's models folder) or a ggml .bin path
    segments, info = model.transcribe("talk.mp3", beam_size=5)
    for s in segments:                                   # a generator: each segment as the engine finishes it
        print(f"[{s.start:.2f}s -> {s.end:.2f}s] {s.text}")

A script written for faster-whisper runs by changing its import (`from faster_whisper import ...`
to `from hark import ...`); the models are whisper.cpp's ggml files instead of CTranslate2's.
"""

from hark.audio import decode_audio
from hark.transcribe import (
    BatchedInferencePipeline,
    Segment,
    TranscriptionInfo,
    TranscriptionOptions,
    WhisperModel,
    Word,
)
from hark.utils import available_models, download_model, format_timestamp
from hark.vad import VadOptions, get_speech_timestamps

__all__ = [
    "available_models",
    "decode_audio",
    "download_model",
    "format_timestamp",
    "get_speech_timestamps",
    "BatchedInferencePipeline",
    "Segment",
    "TranscriptionInfo",
    "TranscriptionOptions",
    "VadOptions",
    "WhisperModel",
    "Word",
]
