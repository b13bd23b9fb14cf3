"""A user of the API, for mypy: the package's annotations must type-check such a script."""

from typing import List

import hark
from hark.vad import VadOptions


def run(path: str) -> List[str]:
    model = hark.WhisperModel("base.en", device="cpu", compute_type="int8", cpu_threads=4)
    segments, info = model.transcribe(path, beam_size=5, vad_filter=True, vad_parameters=VadOptions(threshold=0.4))
    texts: List[str] = []
    for s in segments:
        texts.append(f"[{s.start:.2f} -> {s.end:.2f}] {s.text}")
    language: str = info.language
    texts.append(language)
    return texts
