"""WhisperModel and BatchedInferencePipeline: faster-whisper 1.2's API on hark's engine.

The names, defaults and result types are faster-whisper's, so a script written for it runs by
changing its import. The work is hark's: the sequential long-form loop (OpenAI's), or the batched
pipeline (VAD chunks decoded together), both in C++ with the GIL released. Segments come from a
generator as the engine finishes them; closing or dropping the generator stops the job.
"""

import logging
import os
from typing import BinaryIO, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

import numpy as np

from hark import _hark
from hark.audio import SAMPLING_RATE, to_samples
from hark.vad import VadOptions, get_speech_timestamps, vad_model_path

logger = logging.getLogger("hark")


class Word(NamedTuple):
    start: float
    end: float
    word: str
    probability: float


class Segment(NamedTuple):
    id: int
    seek: int
    start: float
    end: float
    text: str
    tokens: List[int]
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    words: Optional[List[Word]]
    temperature: Optional[float] = 1.0


class TranscriptionOptions(NamedTuple):
    beam_size: int
    best_of: int
    patience: float
    length_penalty: float
    repetition_penalty: float
    no_repeat_ngram_size: int
    log_prob_threshold: Optional[float]
    log_prob_low_threshold: Optional[float]
    no_speech_threshold: Optional[float]
    compression_ratio_threshold: Optional[float]
    condition_on_previous_text: bool
    prompt_reset_on_temperature: float
    temperatures: List[float]
    initial_prompt: Optional[Union[str, Iterable[int]]]
    prefix: Optional[str]
    suppress_blank: bool
    suppress_tokens: Optional[List[int]]
    without_timestamps: bool
    max_initial_timestamp: float
    word_timestamps: bool
    prepend_punctuations: str
    append_punctuations: str
    multilingual: bool
    output_language: Optional[str]
    max_new_tokens: Optional[int]
    clip_timestamps: Union[str, List[float]]
    hallucination_silence_threshold: Optional[float]
    hotwords: Optional[str]


class TranscriptionInfo(NamedTuple):
    language: str
    language_probability: float
    duration: float
    duration_after_vad: float
    all_language_probs: Optional[List[Tuple[str, float]]]
    transcription_options: TranscriptionOptions
    vad_options: Optional[VadOptions]


_DEFAULT_TEMPERATURES = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
_COMPUTE_TYPES = {"default", "auto", "float32", "float16", "bfloat16", "int8", "int8_float32", "int8_float16",
                  "int8_bfloat16", "int16"}


class WhisperModel:
    """A Whisper model in whisper.cpp's ggml format, loaded once and shared by every transcription.

    model_size_or_path: a ggml .bin file, or an official name ("tiny", "base.en", "large-v3",
    "large-v3-turbo-q5_0", ...: hark.available_models()) found in download_root (default: hark's
    models folder) and downloaded there with a checked download when missing, unless
    local_files_only. device: "auto" or "cpu" (hark computes on the CPU). compute_type: accepted
    for compatibility; the weights compute in the file's own type (quantize a file with
    `hark quantize` for int8-like speed). cpu_threads: compute threads per transcription (0: the
    machine's cores, at most 8). num_workers: transcriptions that may run at once, from several
    Python threads (each its own state on the shared weights).
    """

    def __init__(
        self,
        model_size_or_path: str,
        device: str = "auto",
        device_index: Union[int, List[int]] = 0,
        compute_type: str = "default",
        cpu_threads: int = 0,
        num_workers: int = 1,
        download_root: Optional[str] = None,
        local_files_only: bool = False,
        files: Optional[dict] = None,
        revision: Optional[str] = None,
        use_auth_token: Optional[Union[str, bool]] = None,
        **model_kwargs,
    ):
        if device not in ("auto", "cpu"):
            raise ValueError(f"device: hark computes on the CPU ('auto' or 'cpu'), not {device!r}")
        if compute_type not in _COMPUTE_TYPES:
            raise ValueError(f"compute_type: unknown type {compute_type!r}")
        if files is not None or revision is not None or use_auth_token is not None:
            raise NotImplementedError("files, revision and use_auth_token are Hugging Face Hub options; hark loads ggml files")
        if model_kwargs:
            raise TypeError(f"WhisperModel: unexpected argument {next(iter(model_kwargs))!r}")
        if not isinstance(cpu_threads, int) or cpu_threads < 0:
            raise ValueError(f"cpu_threads must be 0 (the machine's cores) or more, not {cpu_threads!r}")
        self.model_path = _model_path(model_size_or_path, download_root, local_files_only)
        self._engine = _hark.Model(self.model_path, cpu_threads, num_workers)
        info = self._engine.info()
        self.model_info = info
        self.is_multilingual = bool(info["multilingual"])
        self._n_mels = int(info["n_mels"])
        self.num_workers = num_workers

    @property
    def supported_languages(self) -> List[str]:
        return list(_hark.language_codes()) if self.is_multilingual else ["en"]

    def detect_language(
        self,
        audio: Optional[np.ndarray] = None,
        features: Optional[np.ndarray] = None,
        vad_filter: bool = False,
        vad_parameters: Union[dict, VadOptions, None] = None,
        language_detection_segments: int = 1,
        language_detection_threshold: float = 0.5,
    ) -> Tuple[str, float, List[Tuple[str, float]]]:
        """The spoken language of the audio's first 30 s (of speech, with vad_filter):
        (code, probability, [(code, probability), ...] most likely first)."""
        if not self.is_multilingual:
            raise ValueError("detect_language: this model is English-only")
        if features is not None:
            return self._detect_features(np.asarray(features, dtype=np.float32), language_detection_segments,
                                         language_detection_threshold)
        if audio is None:
            raise ValueError("detect_language: no audio given")
        samples = to_samples(audio)
        if vad_filter:
            samples = _speech_only(samples, _vad_options(vad_parameters))
        return self._detect(samples, language_detection_segments, language_detection_threshold)

    def _detect_features(self, features: np.ndarray, segments: int, threshold: Optional[float]):
        """faster-whisper's features: a log-mel [n_mels, frames], listened to 3000 frames (30 s) at a time."""
        if features.ndim != 2 or features.shape[0] != self._n_mels:
            raise ValueError(f"features: expected shape ({self._n_mels}, frames), got {features.shape}")
        empty = np.zeros(0, dtype=np.float32)
        windows = [np.ascontiguousarray(features[:, i:i + 3000]) for i in range(0, max(features.shape[1], 1), 3000)]
        return self._vote(lambda i: self._engine.detect_language(empty, 0, windows[i]),
                          min(max(segments or 1, 1), len(windows)), threshold)

    def _detect(self, samples: np.ndarray, segments: int, threshold: Optional[float]):
        n = 1 + max(0, (len(samples) * 1000 // SAMPLING_RATE - 1) // 30_000)
        return self._vote(lambda i: self._engine.detect_language(samples, i * 30_000),
                          min(max(segments or 1, 1), n), threshold)

    @staticmethod
    def _vote(detect, segments: int, threshold: Optional[float]):
        votes: dict = {}
        first = None
        for i in range(segments):
            language, probability, all_probs = detect(i)
            if first is None:
                first = all_probs
            if threshold is None or probability > threshold:
                return language, probability, all_probs
            votes.setdefault(language, []).append(probability)
        # No window was sure enough: the language most windows chose, at its best probability.
        language = max(votes, key=lambda code: len(votes[code]))
        return language, max(votes[language]), first

    def transcribe(
        self,
        audio: Union[str, BinaryIO, np.ndarray],
        language: Optional[str] = None,
        task: str = "transcribe",
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1,
        length_penalty: float = 1,
        repetition_penalty: float = 1,
        no_repeat_ngram_size: int = 0,
        temperature: Union[float, List[float], Tuple[float, ...]] = _DEFAULT_TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        log_prob_low_threshold: Optional[float] = None,
        no_speech_threshold: Optional[float] = 0.6,
        condition_on_previous_text: bool = True,
        prompt_reset_on_temperature: float = 0.5,
        initial_prompt: Optional[Union[str, Iterable[int]]] = None,
        prefix: Optional[str] = None,
        suppress_blank: bool = True,
        suppress_tokens: Optional[List[int]] = [-1],
        without_timestamps: bool = False,
        max_initial_timestamp: float = 1.0,
        word_timestamps: bool = False,
        prepend_punctuations: str = "\"'\u201c\u00bf([{-",
        append_punctuations: str = "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001",
        multilingual: bool = False,
        output_language: Optional[str] = None,
        vad_filter: bool = False,
        vad_parameters: Optional[Union[dict, VadOptions]] = None,
        max_new_tokens: Optional[int] = None,
        chunk_length: Optional[int] = None,
        clip_timestamps: Union[str, List[float]] = "0",
        hallucination_silence_threshold: Optional[float] = None,
        hotwords: Optional[str] = None,
        language_detection_threshold: Optional[float] = None,
        language_detection_segments: int = 1,
        log_progress: bool = False,
    ) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """Transcribes audio (a path, a binary file-like object, or 16 kHz mono samples as a NumPy
        array) with faster-whisper's options. Returns (segments, info): segments is a generator
        that runs the transcription as it is iterated."""
        if multilingual and not self.is_multilingual:
            logger.warning("the model is English-only: multilingual is set to False")
            multilingual = False
        options = _options(locals())
        engine = _engine_options(options, task, chunk_length)
        samples = to_samples(audio)
        duration = len(samples) / SAMPLING_RATE
        duration_after_vad = duration
        vad_options = None
        if vad_filter and clip_timestamps in ("0", "", None, []):
            vad_options = _vad_options(vad_parameters)
            # The VAD runs once: info needs the speech's length now, and the engine takes the
            # stretches found (10 ms units) instead of finding them again.
            speech = get_speech_timestamps(samples, vad_options)
            duration_after_vad = sum(s["end"] - s["start"] for s in speech) / SAMPLING_RATE
            engine.update(vad=True, vad_model_path=vad_model_path(), vad_params=vad_options._engine(),
                          vad_speech=[(s["start"] // 160, -(-s["end"] // 160)) for s in speech])
        language, probability, all_probs = self._language(samples, language, language_detection_segments,
                                                          language_detection_threshold)
        engine["language"] = language
        info = TranscriptionInfo(
            language=language, language_probability=probability, duration=duration,
            duration_after_vad=duration_after_vad, all_language_probs=all_probs,
            transcription_options=options, vad_options=vad_options,
        )
        return _segments(self._engine, samples, engine, word_timestamps, duration, log_progress), info

    def _language(self, samples, language, segments, threshold):
        if language is not None:
            if not self.is_multilingual and language != "en":
                logger.warning("the model is English-only but language is %r: using 'en'", language)
                language = "en"
            return language, 1.0, None
        if not self.is_multilingual:
            return "en", 1.0, None
        return self._detect(samples, segments, threshold)


class BatchedInferencePipeline:
    """faster-whisper's batched pipeline on hark's: the Silero VAD cuts the audio at pauses into
    chunks of at most 30 s, and batch_size chunks are decoded together (continuous batching)."""

    def __init__(self, model: WhisperModel, options: Optional[NamedTuple] = None, tokenizer=None,
                 language: Optional[str] = None):
        if options is not None or tokenizer is not None:
            raise NotImplementedError("BatchedInferencePipeline(options=..., tokenizer=...): pass the options to transcribe()")
        self.model = model
        self.preset_language = language

    def transcribe(
        self,
        audio: Union[str, BinaryIO, np.ndarray],
        language: Optional[str] = None,
        task: Optional[str] = None,
        log_progress: bool = False,
        beam_size: int = 5,
        best_of: int = 5,
        patience: float = 1,
        length_penalty: float = 1,
        repetition_penalty: float = 1,
        no_repeat_ngram_size: int = 0,
        temperature: Union[float, List[float], Tuple[float, ...]] = _DEFAULT_TEMPERATURES,
        compression_ratio_threshold: Optional[float] = 2.4,
        log_prob_threshold: Optional[float] = -1.0,
        log_prob_low_threshold: Optional[float] = None,
        no_speech_threshold: Optional[float] = 0.6,
        initial_prompt: Optional[Union[str, Iterable[int]]] = None,
        prefix: Optional[str] = None,
        suppress_blank: bool = True,
        suppress_tokens: Optional[List[int]] = [-1],
        without_timestamps: bool = True,
        word_timestamps: bool = False,
        prepend_punctuations: str = "\"'\u201c\u00bf([{-",
        append_punctuations: str = "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001",
        vad_filter: bool = True,
        vad_parameters: Optional[Union[dict, VadOptions]] = None,
        max_new_tokens: Optional[int] = None,
        chunk_length: Optional[int] = None,
        clip_timestamps: Optional[List[dict]] = None,
        batch_size: int = 16,
        hotwords: Optional[str] = None,
        multilingual: bool = False,
    ) -> Tuple[Iterator[Segment], TranscriptionInfo]:
        """Transcribes audio in VAD chunks, batch_size at a time. Returns (segments, info)."""
        if not vad_filter:
            raise NotImplementedError("BatchedInferencePipeline needs vad_filter=True (hark's pipeline cuts chunks with the VAD)")
        if clip_timestamps:
            raise NotImplementedError("clip_timestamps is not offered by hark's batched pipeline yet")
        if not isinstance(batch_size, int) or not 1 <= batch_size <= 32:
            raise ValueError(f"batch_size must be 1..32, not {batch_size!r}")
        if multilingual and not self.model.is_multilingual:
            logger.warning("the model is English-only: multilingual is set to False")
            multilingual = False
        # The options the batched pipeline fixes (faster-whisper's "static params").
        options = _options({**locals(), "condition_on_previous_text": False, "prompt_reset_on_temperature": 0.5,
                            "max_initial_timestamp": 0.0, "output_language": None,
                            "clip_timestamps": "0", "hallucination_silence_threshold": None})
        engine = _engine_options(options, task or "transcribe", chunk_length)
        vad_options = _vad_options(vad_parameters, max_speech_duration_s=float(chunk_length or 30),
                                   min_silence_duration_ms=160)
        samples = to_samples(audio)
        duration = len(samples) / SAMPLING_RATE
        speech = get_speech_timestamps(samples, vad_options)
        duration_after_vad = sum(s["end"] - s["start"] for s in speech) / SAMPLING_RATE
        engine.update(batch_size=batch_size, vad_model_path=vad_model_path(), vad_params=vad_options._engine())
        language, probability, all_probs = self.model._language(samples, language or self.preset_language, 1, None)
        engine["language"] = language
        info = TranscriptionInfo(
            language=language, language_probability=probability, duration=duration,
            duration_after_vad=duration_after_vad, all_language_probs=all_probs,
            transcription_options=options, vad_options=vad_options,
        )
        return _segments(self.model._engine, samples, engine, word_timestamps, duration, log_progress), info


# ---- faster-whisper's options as hark's ---------------------------------------------------------

def _options(args: dict) -> TranscriptionOptions:
    """TranscriptionOptions from transcribe()'s arguments (its locals(): the same names), the
    temperature as the list of temperatures."""
    t = args["temperature"]
    values = {name: args[name] for name in TranscriptionOptions._fields if name != "temperatures"}
    return TranscriptionOptions(temperatures=list(t) if isinstance(t, (list, tuple)) else [t], **values)


def _engine_options(o: TranscriptionOptions, task: str, chunk_length: Optional[int]) -> dict:
    """hark's TranscribeParams (by name) for faster-whisper's options. A value hark cannot honour
    yet is NotImplementedError naming the option, never silently ignored."""

    def not_yet(name: str, why: str = "") -> None:
        raise NotImplementedError(f"{name}: not offered by hark yet{': ' + why if why else ''}")

    if task not in ("transcribe", "translate"):
        raise ValueError(f"task must be 'transcribe' or 'translate', not {task!r}")
    if o.output_language not in (None, "en", "hybrid"):
        raise ValueError(f"output_language must be 'en' or 'hybrid', not {o.output_language!r}")
    # With multilingual each window's task follows output_language: "en" translates the windows
    # not in English (hark's multilingual + translate), "hybrid" (or none) transcribes each in its
    # own language. Without multilingual the task is the task.
    translate = o.output_language == "en" if o.multilingual else task == "translate"
    if chunk_length not in (None, 30):
        not_yet("chunk_length", "Whisper's windows are 30 s")
    if not isinstance(o.beam_size, int) or o.beam_size < 1:
        raise ValueError(f"beam_size must be 1 or more, not {o.beam_size!r}")
    if not isinstance(o.best_of, int) or o.best_of < 1:
        raise ValueError(f"best_of must be 1 or more, not {o.best_of!r}")
    e: dict = {
        "translate": translate,
        "beam_size": o.beam_size,
        "best_of": o.best_of,
        "patience": float(o.patience),
        "repetition_penalty": float(o.repetition_penalty),
        "no_repeat_ngram_size": int(o.no_repeat_ngram_size),
        "length_penalty": float(o.length_penalty),
        "length_penalty_power": True,  # CTranslate2's meaning: log-probability / length^length_penalty
        "multilingual": bool(o.multilingual),
        "suppress_blank": bool(o.suppress_blank),
        "timestamps": not o.without_timestamps,
        "max_initial_timestamp": float(o.max_initial_timestamp),
        "word_timestamps": bool(o.word_timestamps),
        "prepend_punctuations": o.prepend_punctuations,
        "append_punctuations": o.append_punctuations,
        "no_context": not o.condition_on_previous_text,
        "max_tokens_per_window": int(o.max_new_tokens or 0),
        "hallucination_silence_threshold": float(o.hallucination_silence_threshold or 0.0),
    }
    clips = _clip_seconds(o.clip_timestamps)
    if clips:
        e["clip_timestamps"] = clips
    if not o.temperatures:
        raise ValueError("temperature: an empty list")
    e["temperatures"] = [float(t) for t in o.temperatures]
    e["prompt_reset_temperature"] = float(o.prompt_reset_on_temperature)
    if o.log_prob_low_threshold is not None:
        e["logprob_low_threshold"] = float(o.log_prob_low_threshold)
    e["compression_ratio_threshold"] = (
        float(np.finfo(np.float32).max) if o.compression_ratio_threshold is None else float(o.compression_ratio_threshold)
    )
    e["logprob_threshold"] = (
        float(np.finfo(np.float32).min) if o.log_prob_threshold is None else float(o.log_prob_threshold)
    )
    e["no_speech_threshold"] = 1.0 if o.no_speech_threshold is None else float(o.no_speech_threshold)
    tokens = list(o.suppress_tokens or [])
    e["suppress_nst"] = -1 in tokens
    e["suppress_tokens"] = [int(t) for t in tokens if t != -1]
    if o.prefix:
        e["prefix"] = str(o.prefix)
    if o.hotwords:
        e["hotwords"] = str(o.hotwords)
    if isinstance(o.initial_prompt, str):
        e["initial_prompt"] = o.initial_prompt
    elif o.initial_prompt is not None:
        e["initial_prompt_tokens"] = [int(t) for t in o.initial_prompt]
    return e


def _clip_seconds(clip_timestamps) -> List[float]:
    """faster-whisper's clip_timestamps ("start,end,start,..." in seconds, or a list) as hark's
    list; "0" (the default: from the start to the end) is none."""
    if clip_timestamps is None:
        return []
    if isinstance(clip_timestamps, str):
        parts = [p for p in clip_timestamps.replace(" ", "").split(",") if p]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"clip_timestamps: {clip_timestamps!r} is not a comma-separated list of seconds") from None
    else:
        values = [float(v) for v in clip_timestamps]
    return [] if values in ([], [0.0]) else values


def _vad_options(given: Union[dict, VadOptions, None], **defaults) -> VadOptions:
    if given is None:
        return VadOptions(**defaults)
    if isinstance(given, VadOptions):
        return given
    if isinstance(given, dict):
        merged = dict(defaults)
        merged.update(given)
        return VadOptions(**merged)
    raise ValueError(f"vad_parameters: a dict or VadOptions, not {type(given).__name__}")


def _speech_only(samples: np.ndarray, options: VadOptions) -> np.ndarray:
    parts = [samples[s["start"]:s["end"]] for s in get_speech_timestamps(samples, options)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)


def _model_path(name: str, download_root: Optional[str], local_files_only: bool) -> str:
    name = os.fspath(name)
    if os.path.isfile(name):
        return name
    if name in _hark.available_models():
        folder = download_root or ""
        local = os.path.join(folder or _hark.models_dir(), f"ggml-{name}.bin")
        if os.path.isfile(local):
            return local
        if local_files_only:
            raise FileNotFoundError(f"model {name!r} is not in {os.path.dirname(local)} and local_files_only is set")
        return _hark.download_model(name, folder)
    return _hark.find_model(name)  # raises FileNotFoundError naming what is missing


# ---- the generator -------------------------------------------------------------------------------

def _segments(engine, samples: np.ndarray, options: dict, with_words: bool, duration: float,
              log_progress: bool) -> Iterator[Segment]:
    job = engine.start(samples, options)
    bar = None
    if log_progress:
        from tqdm import tqdm

        bar = tqdm(total=round(duration, 2), unit="audio seconds")
    try:
        n = 0
        while True:
            batch = job.next()
            if batch is None:
                break
            for s in batch:
                n += 1
                words = [Word(w["start"], w["end"], w["word"], w["probability"]) for w in s["words"]] if with_words else None
                seg = Segment(
                    id=n, seek=int(s["seek"]), start=s["t0"] / 100.0, end=s["t1"] / 100.0, text=s["text"],
                    tokens=list(s["tokens"]), avg_logprob=s["avg_logprob"], compression_ratio=s["compression_ratio"],
                    no_speech_prob=s["no_speech_prob"], words=words, temperature=s["temperature"],
                )
                if bar is not None:
                    bar.update(min(seg.end, duration) - bar.n)
                yield seg
        if bar is not None:
            bar.update(round(duration, 2) - bar.n)
    finally:
        job.abort()
        if bar is not None:
            bar.close()
