"""hark.dask on a real distributed.LocalCluster (two worker processes, one thread each): 20 clips
each transcribed exactly once with the local result, outputs written atomically and skipped on a
rerun, and a worker process killed mid-run losing nothing."""

import json
import os
import signal
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="python3-distributed is not installed")
pytest.importorskip("dask.dataframe", reason="python3-dask (with pandas) is not installed")

import hark  # noqa: E402
import hark.dask  # noqa: E402


@pytest.fixture(scope="module")
def clips(tmp_path_factory, speech):
    """20 different clips: the spoken sentence cut and padded differently, as WAV files."""
    folder = tmp_path_factory.mktemp("clips")
    base = hark.decode_audio(speech)
    paths = []
    for i in range(20):
        audio = np.concatenate([np.zeros(800 * i, np.float32), base[: len(base) - 400 * i]])
        path = folder / f"clip{i:02d}.wav"
        _write_wav(path, audio)
        paths.append(str(path))
    return paths


def _write_wav(path, audio):
    import wave

    pcm = np.clip(audio * 32768, -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm.tobytes())


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=40)
    c = distributed.Client(cluster)
    c.wait_for_workers(2, timeout=120)
    yield c
    c.close()
    cluster.close()


OPTIONS = {"language": "en", "beam_size": 1, "temperature": 0.0}


def test_each_clip_once_with_the_local_result(client, clips, micro, tmp_path):
    out = tmp_path / "out"
    with distributed.get_task_stream(client) as stream:
        df = hark.dask.transcribe(clips, model=micro, output_dir=str(out), **OPTIONS).compute()
    assert sorted(df["file"]) == sorted(clips)
    ran = [t for t in stream.data if "transcribe_one" in str(t["key"])]
    assert len(ran) == len(clips), "each clip is one task, run once"
    # The same text as a local transcription, clip by clip.
    local = hark.WhisperModel(micro)
    for _, row in df.iterrows():
        segments, _ = local.transcribe(row["file"], **OPTIONS)
        assert row["text"] == "".join(s.text for s in segments)
    # Both worker processes took part; each loaded the model once (its cache holds one model).
    assert df["worker"].nunique() == 2
    loads = client.run(lambda: len(hark.dask._models))
    assert sorted(loads.values()) == [1, 1]
    # One complete output per clip, no temporary files left.
    files = sorted(os.listdir(out))
    assert len(files) == len(clips) and not [f for f in files if f.startswith(".tmp-")]
    for _, row in df.iterrows():
        with open(row["output"], encoding="utf-8") as f:
            lines = [json.loads(line) for line in f]
        assert lines[0]["file"] == row["file"] and len(lines) == 1 + row["n_segments"]
    manifest = hark.dask.write_manifest(df, str(out))
    with open(manifest, encoding="utf-8") as f:
        assert sorted(json.loads(line)["file"] for line in f) == sorted(clips)
    # A rerun finds every output and transcribes nothing.
    again = hark.dask.transcribe(clips, model=micro, output_dir=str(out), **OPTIONS).compute()
    assert again["skipped"].all()
    assert sorted(again["text"]) == sorted(df["text"])


def test_a_killed_worker_loses_nothing(client, clips, micro, tmp_path):
    out = tmp_path / "out"
    # Longer clips so the run is still going when a worker dies.
    long_clips = []
    for i, path in enumerate(clips):
        audio = np.tile(hark.decode_audio(path), 4)
        p = tmp_path / f"long{i:02d}.wav"
        _write_wav(p, audio)
        long_clips.append(str(p))
    future = client.compute(hark.dask.transcribe(long_clips, model=micro, output_dir=str(out), **OPTIONS))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not [f for f in os.listdir(out) if not f.startswith(".tmp-")]:
        time.sleep(0.05)
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    df = future.result(timeout=600)
    assert sorted(df["file"]) == sorted(long_clips), "every clip has its row"
    files = sorted(os.listdir(out))
    assert len([f for f in files if f.endswith(".jsonl")]) == len(long_clips)
    assert not [f for f in files if f.startswith(".tmp-")], "no half-written file is left"
    for _, row in df.iterrows():
        with open(row["output"], encoding="utf-8") as f:
            lines = [json.loads(line) for line in f]  # every file whole: valid JSON lines
        assert lines[0]["file"] == row["file"] and len(lines) == 1 + row["n_segments"]


def test_inputs_as_a_bag_and_a_dataframe_column(client, clips, micro):
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd

    from_bag = hark.dask.transcribe(db.from_sequence(clips[:4], npartitions=2), model=micro, **OPTIONS).compute()
    column = dd.from_pandas(pd.DataFrame({"path": clips[4:8]}), npartitions=2)["path"]
    from_column = hark.dask.transcribe(column, model=micro, **OPTIONS).compute()
    assert sorted(from_bag["file"]) == sorted(clips[:4])
    assert sorted(from_column["file"]) == sorted(clips[4:8])
    with pytest.raises(ValueError, match="twice"):
        hark.dask.transcribe([clips[0], clips[0]], model=micro)
