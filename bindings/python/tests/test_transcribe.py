"""hark's Python package against faster-whisper's API: names, defaults, result types, the lazy
generator, inputs and errors. The models are seeded random ones (the words are nonsense), so the
tests check the shape and the behaviour, and equality with the engine's own results."""

import gc
import inspect
import io
import logging
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import hark
from hark import Segment, TranscriptionInfo, Word


def test_the_public_names_are_faster_whispers():
    for name in ["WhisperModel", "BatchedInferencePipeline", "decode_audio", "available_models", "download_model",
                 "format_timestamp", "Segment", "Word", "TranscriptionInfo", "TranscriptionOptions"]:
        assert hasattr(hark, name), name
    from hark import vad

    assert vad.VadOptions and callable(vad.get_speech_timestamps)
    assert Segment._fields == ("id", "seek", "start", "end", "text", "tokens", "avg_logprob", "compression_ratio",
                               "no_speech_prob", "words", "temperature")
    assert Word._fields == ("start", "end", "word", "probability")
    assert TranscriptionInfo._fields == ("language", "language_probability", "duration", "duration_after_vad",
                                         "all_language_probs", "transcription_options", "vad_options")


def test_transcribe_has_every_option_with_faster_whispers_defaults():
    sig = inspect.signature(hark.WhisperModel.transcribe)
    expected = {
        "language": None, "task": "transcribe", "beam_size": 5, "best_of": 5, "patience": 1, "length_penalty": 1,
        "repetition_penalty": 1, "no_repeat_ngram_size": 0, "temperature": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        "compression_ratio_threshold": 2.4, "log_prob_threshold": -1.0, "no_speech_threshold": 0.6,
        "condition_on_previous_text": True, "prompt_reset_on_temperature": 0.5, "initial_prompt": None,
        "prefix": None, "suppress_blank": True, "suppress_tokens": [-1], "without_timestamps": False,
        "max_initial_timestamp": 1.0, "word_timestamps": False, "multilingual": False, "vad_filter": False,
        "vad_parameters": None, "max_new_tokens": None, "chunk_length": None, "clip_timestamps": "0",
        "hallucination_silence_threshold": None, "hotwords": None, "language_detection_threshold": None,
        "language_detection_segments": 1, "log_progress": False,
    }
    for name, default in expected.items():
        assert name in sig.parameters, name
        assert sig.parameters[name].default == default, name
    model_sig = inspect.signature(hark.WhisperModel.__init__)
    for name, default in {"device": "auto", "compute_type": "default", "cpu_threads": 0, "num_workers": 1,
                          "download_root": None, "local_files_only": False}.items():
        assert model_sig.parameters[name].default == default, name
    vad = hark.VadOptions()
    assert (vad.threshold, vad.neg_threshold, vad.min_speech_duration_ms, vad.min_silence_duration_ms,
            vad.speech_pad_ms) == (0.5, None, 0, 2000, 400)
    assert vad.max_speech_duration_s == float("inf")


def test_segments_and_info(model, speech):
    segments, info = model.transcribe(speech, language="en", beam_size=1)
    assert info.language == "en" and info.language_probability == 1
    assert info.duration == pytest.approx(len(hark.decode_audio(speech)) / 16000)
    assert info.duration_after_vad == info.duration
    assert info.transcription_options.beam_size == 1
    assert info.transcription_options.temperatures == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    got = list(segments)
    assert got, "no segments"
    for i, s in enumerate(got, start=1):
        assert isinstance(s, Segment) and s.id == i
        assert 0 <= s.start <= s.end <= info.duration + 0.01
        assert isinstance(s.text, str) and s.tokens and all(isinstance(t, int) for t in s.tokens)
        assert s.words is None
        assert 0 <= s.no_speech_prob <= 1


def test_the_same_audio_gives_the_same_segments_from_a_path_an_array_and_a_file_object(model, speech):
    a = list(model.transcribe(speech, language="en", beam_size=1)[0])
    b = list(model.transcribe(hark.decode_audio(speech), language="en", beam_size=1)[0])
    with open(speech, "rb") as f:
        c = list(model.transcribe(f, language="en", beam_size=1)[0])
    with open(speech, "rb") as f:
        d = list(model.transcribe(io.BytesIO(f.read()), language="en", beam_size=1)[0])
    assert a == b == c == d


def test_numpy_dtypes_are_converted_or_refused(model):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(16000 * 2) * 0.1).astype(np.float32)
    ref = list(model.transcribe(x, language="en", beam_size=1, temperature=0.0)[0])
    assert list(model.transcribe(x.astype(np.float64), language="en", beam_size=1, temperature=0.0)[0]) == ref
    pcm16 = np.clip(x * 32768, -32768, 32767).astype(np.int16)
    assert list(model.transcribe(pcm16, language="en", beam_size=1, temperature=0.0)[0]) is not None
    for bad, message in [(np.zeros((100, 2), np.float32), "one-dimensional"),
                         (np.array(["a", "b"]), "dtype"),
                         (np.array([0.0, np.nan], np.float32), "NaN")]:
        with pytest.raises(ValueError, match=message):
            model.transcribe(bad)


def test_the_generator_is_lazy_and_yields_before_the_job_ends(model, speech):
    audio = np.tile(hark.decode_audio(speech), 30)  # about 80 s: several windows
    segments, _ = model.transcribe(audio, language="en", beam_size=1, temperature=0.0)
    first = next(segments)
    assert first.id == 1
    # The job goes on after the first segment: more of them come from the same generator.
    rest = list(segments)
    assert rest and rest[-1].end > first.end


def test_each_fallback_is_logged_at_debug(model, speech, caplog):
    # The random model's text fails the checks: each window is decoded again at 0.5, then 1.0.
    with caplog.at_level(logging.DEBUG, logger="hark"):
        segments = list(model.transcribe(speech, language="en", beam_size=1, best_of=1, temperature=[0.0, 0.5, 1.0])[0])
    retries = [r.getMessage() for r in caplog.records if "decoded again" in r.getMessage()]
    assert retries, "no fallback logged"
    assert retries[0].startswith("window 0.00-") and "at temperature 0.5 (" in retries[0], retries[0]
    assert all(s.temperature in (0.0, 0.5, 1.0) for s in segments)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="hark"):
        list(model.transcribe(speech, language="en", beam_size=1, temperature=0.0)[0])
    assert not [r for r in caplog.records if "decoded again" in r.getMessage()], "a single temperature has no retry"


def test_closing_the_generator_aborts_the_job(model, speech):
    audio = np.tile(hark.decode_audio(speech), 60)
    segments, _ = model.transcribe(audio, language="en", beam_size=1, temperature=0.0)
    next(segments)
    t0 = time.monotonic()
    segments.close()
    assert time.monotonic() - t0 < 30
    # The model serves the next job at once.
    assert list(model.transcribe(speech, language="en", beam_size=1)[0])


def test_language_detection(model, speech):
    language, probability, all_probs = model.detect_language(hark.decode_audio(speech))
    assert isinstance(language, str) and 0 < probability <= 1
    assert all_probs[0] == (language, probability)
    assert sum(p for _, p in all_probs) == pytest.approx(1.0, abs=1e-3)
    _, info = model.transcribe(speech)
    assert info.language == language and info.language_probability == pytest.approx(probability)
    assert info.all_language_probs[0][0] == language


def test_language_detection_from_features(model):
    # faster-whisper's features: a log-mel [n_mels, frames], 30 s at a time (the core's test holds
    # the audio's own log-mel to the audio's answer).
    n_mels = model.model_info["n_mels"]
    quiet = np.zeros((n_mels, 100), dtype=np.float32)
    language, probability, all_probs = model.detect_language(features=quiet)
    assert all_probs[0] == (language, probability)
    assert sum(p for _, p in all_probs) == pytest.approx(1.0, abs=1e-3)
    # Two windows' worth, the first not sure enough at threshold 1: the vote of both.
    two = np.zeros((n_mels, 6000), dtype=np.float32)
    assert model.detect_language(features=two, language_detection_segments=2, language_detection_threshold=1.0)
    with pytest.raises(ValueError, match="features"):
        model.detect_language(features=np.zeros((n_mels + 1, 10), dtype=np.float32))
    with pytest.raises(ValueError, match="features"):
        model.detect_language(features=np.zeros(10, dtype=np.float32))


def test_an_english_only_model_is_english(micro_en, speech):
    m = hark.WhisperModel(micro_en)
    _, info = m.transcribe(speech)
    assert info.language == "en" and info.all_language_probs is None
    with pytest.raises(ValueError, match="English-only"):
        m.detect_language(hark.decode_audio(speech))


def test_word_timestamps(model, speech):
    segments, _ = model.transcribe(speech, language="en", beam_size=1, word_timestamps=True)
    got = list(segments)
    words = [w for s in got for w in s.words]
    assert words and all(isinstance(w, Word) for w in words)
    for s in got:
        assert "".join(w.word for w in s.words) == s.text
        for w in s.words:
            assert s.start - 0.01 <= w.start <= w.end <= s.end + 0.01 and 0 <= w.probability <= 1


def test_options_reach_the_engine(model, speech):
    base = list(model.transcribe(speech, language="en", beam_size=1, temperature=0.0)[0])
    assert list(model.transcribe(speech, language="en", beam_size=1, temperature=0.0)[0]) == base
    beams = list(model.transcribe(speech, language="en", beam_size=3, temperature=0.0)[0])
    assert beams
    no_ts = list(model.transcribe(speech, language="en", beam_size=1, without_timestamps=True)[0])
    assert len(no_ts) == 1 and no_ts[0].start == 0.0
    short = list(model.transcribe(speech, language="en", beam_size=1, max_new_tokens=1)[0])
    assert all(len([t for t in s.tokens if t < 50257]) <= 1 for s in short)


def test_repetition_penalty_and_no_repeat_ngram_size(model, speech):
    # The seeded model repeats itself: with no_repeat_ngram_size=1 no token comes twice in the
    # (single) window, and the penalties are refused where they make no sense.
    plain = [t for s in model.transcribe(speech, language="en", beam_size=1, temperature=0.0,
                                         without_timestamps=True)[0] for t in s.tokens]
    assert len(plain) > len(set(plain)), "the test needs a model that repeats tokens"
    once = [t for s in model.transcribe(speech, language="en", beam_size=1, temperature=0.0,
                                        without_timestamps=True, no_repeat_ngram_size=1)[0] for t in s.tokens]
    assert once and len(once) == len(set(once))
    assert list(model.transcribe(speech, language="en", beam_size=2, repetition_penalty=1.5)[0])
    with pytest.raises(ValueError, match="repetition_penalty"):
        list(model.transcribe(speech, language="en", repetition_penalty=0.0)[0])
    with pytest.raises(ValueError, match="no_repeat_ngram_size"):
        list(model.transcribe(speech, language="en", no_repeat_ngram_size=-1)[0])


def test_temperature_lists_prompts_and_low_logprob_skip(model, speech):
    # Any list of temperatures (faster-whisper's), the prompt as text or as ids, the low log-prob skip.
    assert list(model.transcribe(speech, language="en", beam_size=1, temperature=[0.0, 0.5, 0.7])[0])
    assert list(model.transcribe(speech, language="en", beam_size=1, temperature=(0.3,))[0])
    with pytest.raises(ValueError, match="temperatures"):
        list(model.transcribe(speech, language="en", temperature=[0.0, -1.0])[0])
    with pytest.raises(ValueError, match="temperature"):
        model.transcribe(speech, language="en", temperature=[])
    text = list(model.transcribe(speech, language="en", beam_size=1, initial_prompt="hello there")[0])
    ids = list(model.transcribe(speech, language="en", beam_size=1, initial_prompt=[31373, 612])[0])
    assert text and ids
    with pytest.raises(ValueError, match="initial_prompt_tokens"):
        list(model.transcribe(speech, language="en", initial_prompt=[50257])[0])  # end-of-text is no text token
    # The seeded model is never confident: a low-logprob threshold above its average skips every window.
    assert list(model.transcribe(speech, language="en", beam_size=1, log_prob_low_threshold=0.0)[0]) == []
    assert list(model.transcribe(speech, language="en", beam_size=1, log_prob_low_threshold=-100.0)[0])
    assert list(model.transcribe(speech, language="en", beam_size=1, prompt_reset_on_temperature=0.0)[0])


def test_clip_timestamps_transcribe_only_the_clips(model, speech):
    clip = hark.decode_audio(speech)
    audio = np.concatenate([clip, np.zeros(32000, np.float32), clip])
    first = list(model.transcribe(audio, language="en", beam_size=1, temperature=0.0, clip_timestamps="0,2")[0])
    assert first and all(s.end <= 2.0 + 1e-6 for s in first)
    start = len(clip) / 16000 + 2.0
    last = list(model.transcribe(audio, language="en", beam_size=1, temperature=0.0, clip_timestamps=[start])[0])
    assert last and all(s.start >= start - 1e-6 for s in last)
    # "0" (the default) is all of it.
    assert list(model.transcribe(audio, language="en", beam_size=1, temperature=0.0, clip_timestamps="0")[0]) == \
        list(model.transcribe(audio, language="en", beam_size=1, temperature=0.0)[0])
    with pytest.raises(ValueError, match="clip_timestamps"):
        model.transcribe(audio, clip_timestamps="1,x")
    with pytest.raises(ValueError, match="clip_timestamps"):
        list(model.transcribe(audio, language="en", clip_timestamps=[-1.0])[0])


def test_prefix_hotwords_multilingual_and_length_penalty(model, micro_en, speech):
    # The prefix begins the text (faster-whisper's: part of the first segment); never a silence skip here.
    got = list(model.transcribe(speech, language="en", beam_size=1, temperature=0.0, no_speech_threshold=None,
                                prefix="  Hello hark ")[0])
    assert got and got[0].text.startswith(" Hello hark") and got[0].start == 0.0
    # Hotwords condition the decoding but are not text.
    hot = list(model.transcribe(speech, language="en", beam_size=1, temperature=0.0, hotwords="Kubernetes Istio")[0])
    assert all("Kubernetes Istio" not in s.text for s in hot)
    # multilingual: each window in its own language; an English-only model warns and goes on (faster-whisper's).
    assert list(model.transcribe(speech, beam_size=1, temperature=0.0, multilingual=True)[0]) is not None
    english = hark.WhisperModel(micro_en)
    assert list(english.transcribe(speech, beam_size=1, temperature=0.0, multilingual=True)[0]) is not None
    # length_penalty: CTranslate2's exponent; 1 ranks as the default does.
    base = list(model.transcribe(speech, language="en", beam_size=3, temperature=0.0)[0])
    assert list(model.transcribe(speech, language="en", beam_size=3, temperature=0.0, length_penalty=1.0)[0]) == base
    assert list(model.transcribe(speech, language="en", beam_size=3, temperature=0.0, length_penalty=0.2)[0])
    # output_language: "hybrid" is multilingual's own behaviour; "en" translates what is not English.
    own = list(model.transcribe(speech, beam_size=1, temperature=0.0, multilingual=True)[0])
    assert list(model.transcribe(speech, beam_size=1, temperature=0.0, multilingual=True,
                                 output_language="hybrid")[0]) == own
    segments, info = model.transcribe(speech, beam_size=1, temperature=0.0, multilingual=True, output_language="en")
    assert list(segments) is not None and info.transcription_options.output_language == "en"
    with pytest.raises(ValueError, match="output_language"):
        model.transcribe(speech, multilingual=True, output_language="fr")


def test_bad_inputs_raise_the_fitting_python_errors(micro, model, tmp_path):
    with pytest.raises(FileNotFoundError):
        hark.WhisperModel(str(tmp_path / "none.bin"))
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a model at all" * 10)
    with pytest.raises(ValueError):
        hark.WhisperModel(str(junk))
    with pytest.raises(ValueError, match="device"):
        hark.WhisperModel(micro, device="cuda")
    with pytest.raises(FileNotFoundError):
        model.transcribe(str(tmp_path / "missing.wav"))
    not_audio = tmp_path / "x.wav"
    not_audio.write_bytes(b"RIFF....WAVEjunk")
    with pytest.raises(ValueError):
        list(model.transcribe(str(not_audio))[0])
    with pytest.raises(ValueError, match="task"):
        model.transcribe(np.zeros(1600, np.float32), task="summarize")
    with pytest.raises(ValueError, match="language"):
        list(model.transcribe(np.zeros(16000, np.float32), language="klingon")[0])
    with pytest.raises(ValueError, match="num_workers"):
        hark.WhisperModel(micro, num_workers=0)


def test_two_threads_transcribe_at_once_on_two_workers(model, speech):
    audio = np.tile(hark.decode_audio(speech), 12)
    inside = 0
    both_at_once = threading.Event()
    lock = threading.Lock()
    results = {}

    def run(k):
        nonlocal inside
        segments, _ = model.transcribe(audio, language="en", beam_size=1, temperature=0.0)
        it = iter(segments)
        first = next(it)
        with lock:
            inside += 1
            if inside == 2:
                both_at_once.set()
        both_at_once.wait(timeout=60)
        results[k] = [first] + list(it)
        with lock:
            inside -= 1

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert both_at_once.is_set(), "the two jobs were never in progress at the same moment"
    assert results[0] == results[1]


def test_decode_audio_and_helpers(speech):
    flac = os.environ.get("HARK_TEST_SPEECH_FLAC", "")
    a = hark.decode_audio(speech)
    assert a.dtype == np.float32 and a.ndim == 1 and len(a) > 16000
    if flac:
        b = hark.decode_audio(flac)
        assert abs(len(b) - len(a)) < 1600  # 44.1 kHz stereo resampled and mixed to 16 kHz mono
    with pytest.raises(ValueError):
        hark.decode_audio(speech, sampling_rate=8000)
    # split_stereo: each channel on its own (a stereo WAV made here: the speech left, silence right).
    import wave

    pcm = (np.clip(a, -1, 1) * 32767).astype(np.int16)
    stereo = np.stack([pcm, np.zeros_like(pcm)], axis=1)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(stereo.tobytes())
    left, right = hark.decode_audio(io.BytesIO(buf.getvalue()), split_stereo=True)
    assert len(left) == len(right) == len(a)
    assert np.max(np.abs(left - a)) < 1e-3 and not np.any(right)
    mixed = hark.decode_audio(io.BytesIO(buf.getvalue()))
    assert np.max(np.abs(mixed - left / 2)) < 1e-6
    with pytest.raises(ValueError, match="1 channel"):
        hark.decode_audio(speech, split_stereo=True)
    assert "tiny.en" in hark.available_models() and "large-v3" in hark.available_models()
    assert hark.format_timestamp(3725.5) == "01:02:05.500"
    assert hark.format_timestamp(5.25) == "00:05.250"


def test_vad(model, speech, vad_model, monkeypatch):
    monkeypatch.setenv("HARK_VAD_MODEL", vad_model)
    from hark.vad import VadOptions, get_speech_timestamps

    audio = np.concatenate([np.zeros(16000 * 3, np.float32), hark.decode_audio(speech), np.zeros(16000 * 3, np.float32)])
    stamps = get_speech_timestamps(audio, VadOptions(min_silence_duration_ms=500, speech_pad_ms=100))
    assert stamps and all(0 <= s["start"] < s["end"] <= len(audio) for s in stamps)
    assert stamps[0]["start"] > 16000 * 2
    segments, info = model.transcribe(audio, language="en", beam_size=1, vad_filter=True,
                                      vad_parameters={"min_silence_duration_ms": 500})
    assert info.duration_after_vad < info.duration
    assert isinstance(info.vad_options, VadOptions)
    got = list(segments)
    assert got and got[0].start >= 2.0  # times are the original audio's


def test_batched_pipeline(model, speech, vad_model, monkeypatch):
    monkeypatch.setenv("HARK_VAD_MODEL", vad_model)
    gap = np.zeros(16000 * 2, np.float32)
    clip = hark.decode_audio(speech)
    audio = np.concatenate([clip, gap, clip, gap, clip])
    pipeline = hark.BatchedInferencePipeline(model)
    segments, info = pipeline.transcribe(audio, language="en", beam_size=1, batch_size=4)
    got = list(segments)
    assert got and info.language == "en"
    assert [s.id for s in got] == list(range(1, len(got) + 1))
    assert all(a.start <= b.start for a, b in zip(got, got[1:]))
    with pytest.raises(ValueError, match="batch_size"):
        pipeline.transcribe(audio, batch_size=0)
    # Hotwords and multilingual chunks run batched; a prefix (a first window's) is refused by name.
    assert list(pipeline.transcribe(audio, beam_size=1, batch_size=2, hotwords="hark", multilingual=True)[0])
    with pytest.raises(NotImplementedError, match="prefix"):
        list(pipeline.transcribe(audio, language="en", batch_size=2, prefix="Hello")[0])


def test_ctrl_c_stops_a_running_transcription(micro, speech):
    script = f"""
import os, signal, threading, time
import numpy as np
import hark
m = hark.WhisperModel({micro!r}, cpu_threads=1)
audio = np.tile(hark.decode_audio({speech!r}), 200)
segments, _ = m.transcribe(audio, language="en", beam_size=1, temperature=0.0)
next(segments)
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
t0 = time.monotonic()
try:
    for s in segments:
        pass
    print("finished")
except KeyboardInterrupt:
    print("interrupted after", round(time.monotonic() - t0, 1), "s")
"""
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "interrupted" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_thousand_load_transcribe_delete_cycles_keep_memory_flat(micro):
    audio = (np.random.default_rng(0).standard_normal(8000) * 0.01).astype(np.float32)

    def cycle():
        m = hark.WhisperModel(micro, cpu_threads=1)
        segments, _ = m.transcribe(audio, language="en", beam_size=1, temperature=0.0, max_new_tokens=8)
        list(segments)
        del m, segments

    for _ in range(50):  # the allocator and the caches settle
        cycle()
    gc.collect()
    before = _rss_bytes()
    for _ in range(950):
        cycle()
    gc.collect()
    grown = _rss_bytes() - before
    assert grown < 32 * 1024 * 1024, f"RSS grew by {grown / 1e6:.1f} MB over 950 cycles"
