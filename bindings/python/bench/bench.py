"""The Python package's figures, measured in one run beside the machine's:

  overhead   the same job through hark.WhisperModel and through the C++ API (bench_node_same_job:
             the same audio, options and warm-up), median of RUNS
  threads    two transcriptions from two Python threads at once (num_workers=2, 1 compute thread
             each) against the same two one after the other
  dask       clips per second on a distributed.LocalCluster with 1 and with 2 worker processes

    PYTHONPATH=build/python /usr/bin/python3 bindings/python/bench/bench.py MODEL.bin [--runs 5]
        [--cpp build/bench_node_same_job] [--clips 40]

Prints one JSON object per figure, the first one the machine (hark's SIMD level, a memory-copy
bandwidth and a float32 GEMM rate from NumPy, both measured here).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import wave

import numpy as np

import hark
from hark import _hark


def machine() -> dict:
    a = np.ones(32 * 1024 * 1024, np.float32)  # 128 MiB
    b = np.empty_like(a)
    best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
    m = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    gemm = min(_timed(lambda: m @ m) for _ in range(5))
    return {"machine": _hark.system_info(), "copy_GBps": round(2 * a.nbytes / best / 1e9, 1),
            "numpy_sgemm_GFLOPs": round(2 * 1024**3 / gemm / 1e9, 1), "cores": os.cpu_count()}


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def gated_tone(seconds: int) -> np.ndarray:
    """bench_node_same_job's audio: a tone gated on and off every half second."""
    i = np.arange(seconds * 16000, dtype=np.float64)
    return (0.3 * np.sin(i * 0.05) * ((i // 8000) % 2)).astype(np.float32)


def overhead(model_path: str, cpp: str, runs: int, seconds: int = 10) -> dict:
    model = hark.WhisperModel(model_path, cpu_threads=2)
    audio = gated_tone(seconds)
    options = dict(language="en", beam_size=1, temperature=0.0)
    list(model.transcribe(audio, **options)[0])  # warm-up
    wall = []
    for _ in range(runs):
        t0 = time.perf_counter()
        list(model.transcribe(audio, **options)[0])
        wall.append((time.perf_counter() - t0) * 1000)
    out = {"figure": "overhead", "audio_seconds": seconds, "runs": runs, "python_ms": round(statistics.median(wall), 2)}
    if cpp and os.path.exists(cpp):
        line = subprocess.run([cpp, model_path, str(seconds), str(runs)], capture_output=True, text=True,
                              check=True).stdout.strip().splitlines()[-1]
        out["cpp_ms"] = round(json.loads(line)["cpp_transcribe_ms"], 2)
        out["python_over_cpp_ms"] = round(out["python_ms"] - out["cpp_ms"], 2)
    return out


def threads(model_path: str, seconds: int = 20) -> dict:
    model = hark.WhisperModel(model_path, cpu_threads=1, num_workers=2)
    audio = gated_tone(seconds)
    options = dict(language="en", beam_size=1, temperature=0.0)
    job = lambda: list(model.transcribe(audio, **options)[0])  # noqa: E731
    job()
    sequential = _timed(lambda: (job(), job()))
    ts = [threading.Thread(target=job) for _ in range(2)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    together = time.perf_counter() - t0
    return {"figure": "threads", "audio_seconds": seconds, "sequential_s": round(sequential, 3),
            "two_threads_s": round(together, 3), "speedup": round(sequential / together, 2)}


def dask_rate(model_path: str, n_clips: int) -> list:
    import distributed

    import hark.dask

    folder = tempfile.mkdtemp()
    clips = []
    for i in range(n_clips):
        path = os.path.join(folder, f"c{i}.wav")
        pcm = (gated_tone(5) * 32767).astype("<i2")
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(16000)
            w.writeframes(pcm.tobytes())
        clips.append(path)
    out = []
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster) as client:
            client.wait_for_workers(workers)
            options = dict(language="en", beam_size=1, temperature=0.0)
            mopts = {"cpu_threads": 1}
            # The model loads once per worker: a first pass loads it, the timed pass is the work.
            hark.dask.transcribe(clips[:workers * 2], model=model_path, model_options=mopts, **options).compute()
            t0 = time.perf_counter()
            hark.dask.transcribe(clips, model=model_path, model_options=mopts, **options).compute()
            dt = time.perf_counter() - t0
        out.append({"figure": "dask", "workers": workers, "clips": n_clips, "clip_seconds": 5,
                    "clips_per_s": round(n_clips / dt, 2)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cpp", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "build",
                                                  "bench_node_same_job"))
    ap.add_argument("--clips", type=int, default=40)
    args = ap.parse_args()
    print(json.dumps(machine()))
    print(json.dumps(overhead(args.model, args.cpp, args.runs)))
    print(json.dumps(threads(args.model)))
    for row in dask_rate(args.model, args.clips):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
