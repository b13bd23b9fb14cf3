"""Large collections on a Dask cluster: every input transcribed once, by whichever worker is free.

    from dask.distributed import Client
    import hark.dask

    client = Client("tcp://scheduler:8786")                 # or LocalCluster() on one machine
    df = hark.dask.transcribe(paths, model="base.en", output_dir="/shared/out", language="en")
    df.compute()                                            # file, language, segments, timings

The scheduling, retries and worker failures are Dask's (distributed): hark adds what a
transcription job needs on top of it.
  - One model load per worker process, not per task: the model lives in the process as long as
    it does (`_model()`), shared by the threads of that worker (num_workers = its threads).
  - With output_dir, each input's result is written there as JSON Lines (a header line, then one
    line per segment), atomically (a temporary file renamed into place), so a reader never sees
    half a file; a rerun finds the finished files and skips those inputs. A worker killed
    mid-task leaves at most a temporary file, which the task's retry on another worker replaces.
  - After compute(), write_manifest() records every input with its output (atomically too).

Inputs: a list of paths or URLs the workers can read (fsspec opens URLs: file://, http(s)://,
and s3:// etc. where its plugins are installed), a dask.bag.Bag of them, or a column (dask
Series) of a Dask DataFrame. Options are WhisperModel.transcribe()'s (faster-whisper's).
"""

import hashlib
import json
import os
import socket
import threading
import time
from typing import Any, Dict, Iterable, Optional, Tuple

_models: Dict[Tuple[str, Tuple[Tuple[str, Any], ...]], Any] = {}
_models_lock = threading.Lock()


def _model(model: str, model_options: Dict[str, Any]):
    """This process's model for (model, options), loaded on first use."""
    key = (model, tuple(sorted(model_options.items())))
    with _models_lock:
        found = _models.get(key)
        if found is None:
            from hark import WhisperModel

            found = WhisperModel(model, **model_options)
            _models[key] = found
        return found


def output_name(source: str) -> str:
    """The output file of an input: its base name (readable) and a digest of its whole path or
    URL (two inputs with one base name do not collide)."""
    digest = hashlib.sha1(source.encode("utf-8")).hexdigest()[:12]
    base = os.path.basename(source.rstrip("/")) or "input"
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in base)[:80]
    return f"{safe}.{digest}.jsonl"


def _read_input(source: str):
    if "://" in source and not source.startswith("file://"):
        import fsspec

        with fsspec.open(source, "rb") as f:
            return f.read()
    return source[len("file://"):] if source.startswith("file://") else source


def _write_atomically(path: str, lines: Iterable[str]) -> None:
    # The temporary name is the output's own, not a random one: a worker killed while writing
    # leaves its .part, and the rerun of that task (Dask gives it to another worker) writes the
    # same .part again and renames it, so nothing half-written is left behind.
    folder, name = os.path.split(path)
    tmp = os.path.join(folder or ".", f".tmp-{name}.part")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line)
                f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read_result(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return None
    if not lines or "file" not in lines[0]:
        return None
    head, segments = lines[0], lines[1:]
    if head.get("n_segments") != len(segments):
        return None
    return {**head, "segments": segments}


def transcribe_one(source: str, model: str, model_options: Optional[Dict[str, Any]] = None,
                   options: Optional[Dict[str, Any]] = None, output_dir: Optional[str] = None) -> Dict[str, Any]:
    """One input, on this process's model: the row transcribe() puts in its DataFrame. With
    output_dir, an input whose output file is complete is not transcribed again."""
    out_path = os.path.join(output_dir, output_name(source)) if output_dir else ""
    if out_path:
        done = _read_result(out_path)
        if done is not None:
            return _row(done, out_path, skipped=True)
    t0 = time.monotonic()
    segments, info = _model(model, dict(model_options or {})).transcribe(_read_input(source), **dict(options or {}))
    segs = [
        {"id": s.id, "start": s.start, "end": s.end, "text": s.text, "avg_logprob": s.avg_logprob,
         "no_speech_prob": s.no_speech_prob,
         "words": [w._asdict() for w in s.words] if s.words is not None else None}
        for s in segments
    ]
    head = {
        "file": source, "language": info.language, "language_probability": float(info.language_probability),
        "duration": float(info.duration), "n_segments": len(segs), "text": "".join(s["text"] for s in segs),
        "seconds": time.monotonic() - t0, "worker": f"{socket.gethostname()}:{os.getpid()}",
    }
    if out_path:
        _write_atomically(out_path, [json.dumps(head, ensure_ascii=False)] +
                          [json.dumps(s, ensure_ascii=False) for s in segs])
    return _row({**head, "segments": segs}, out_path, skipped=False)


def _row(result: Dict[str, Any], out_path: str, skipped: bool) -> Dict[str, Any]:
    return {
        "file": result["file"], "output": out_path, "language": result["language"],
        "language_probability": result["language_probability"], "duration": result["duration"],
        "n_segments": result["n_segments"], "text": result["text"], "segments": json.dumps(result["segments"]),
        "seconds": result["seconds"], "worker": result["worker"], "skipped": skipped,
    }


def transcribe(inputs, model: str, output_dir: Optional[str] = None,
               model_options: Optional[Dict[str, Any]] = None, npartitions: Optional[int] = None, **options):
    """A lazy Dask DataFrame with a row per input (columns: file, output, language,
    language_probability, duration, n_segments, text, segments as JSON, seconds, worker, skipped).
    Nothing runs until it is computed. model: a ggml path or an official name every worker can
    load (the same path on every machine, or a name in each worker's models folder).
    model_options: WhisperModel's (cpu_threads, num_workers, ...). npartitions: tasks (default: one
    per input, so a slow input holds up nothing else)."""
    import pandas as pd

    if output_dir:
        os.makedirs(output_dir, exist_ok=True)
    bag = _as_bag(inputs, npartitions)
    rows = bag.map(transcribe_one, model=model, model_options=model_options, options=options,
                   output_dir=output_dir)
    meta = pd.DataFrame({
        "file": pd.Series(dtype=object), "output": pd.Series(dtype=object), "language": pd.Series(dtype=object),
        "language_probability": pd.Series(dtype=float), "duration": pd.Series(dtype=float),
        "n_segments": pd.Series(dtype=int), "text": pd.Series(dtype=object), "segments": pd.Series(dtype=object),
        "seconds": pd.Series(dtype=float), "worker": pd.Series(dtype=object), "skipped": pd.Series(dtype=bool),
    })
    return rows.to_dataframe(meta=meta)


def _as_bag(inputs, npartitions: Optional[int]):
    import dask.bag as db

    if isinstance(inputs, db.Bag):
        return inputs.map(str)
    if hasattr(inputs, "to_bag") and hasattr(inputs, "npartitions"):  # a Dask Series (a DataFrame column)
        return inputs.to_bag().map(str)
    items = [os.fspath(x) if hasattr(x, "__fspath__") else str(x) for x in inputs]
    if not items:
        raise ValueError("hark.dask.transcribe: no inputs")
    if len(set(items)) != len(items):
        raise ValueError("hark.dask.transcribe: an input is listed twice (each is transcribed once)")
    return db.from_sequence(items, npartitions=npartitions or len(items))


def write_manifest(df, output_dir: str, name: str = "manifest.jsonl") -> str:
    """Writes the manifest of a computed result (a pandas DataFrame from transcribe().compute()):
    one line per input (file, output, language, duration, n_segments), atomically. Returns its path."""
    rows = df[["file", "output", "language", "duration", "n_segments"]].to_dict("records")
    path = os.path.join(output_dir, name)
    _write_atomically(path, [json.dumps(r, ensure_ascii=False) for r in rows])
    return path


__all__ = ["transcribe", "transcribe_one", "write_manifest", "output_name"]
