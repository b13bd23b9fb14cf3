// hark._hark: the extension module under the Python package (bindings/python/hark), over the
// public C++ API only (include/hark). It is deliberately small: the faster-whisper API (names,
// defaults, result types) is written in Python on top of it (hark/transcribe.py), and this file
// only moves audio, options and results across, with the GIL released while hark computes.
//
//   Model(path, n_threads, num_workers)  a loaded model; num_workers transcriptions at once
//   Model.start(samples, options) -> Job a transcription on its own thread; Job.next() waits for
//                                        the next segments (None at the end), Job.abort() stops it
//   Model.detect_language(samples, offset_ms, mel=None) -> (code, probability, [(code, probability)...])
//   decode_audio(path_or_bytes, channel=-1) -> float32 array, 16 kHz mono (or one channel)
//   speech_timestamps(samples, vad_model, options) -> [(start_sample, end_sample)...]
//
// Options arrive as a dict of TranscribeParams' own names (the Python layer maps faster-whisper's
// names onto them); an unknown key is a ValueError, so a misspelt mapping cannot pass silently.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "hark/hark.hpp"

namespace py = pybind11;

namespace {

// ---- errors: hark::Error's code picks the Python class; the message is hark's -------------------

PyObject* python_class(const hark::Error& e) {
  switch (e.code()) {
    case hark::ErrorCode::NotFound: return PyExc_FileNotFoundError;
    case hark::ErrorCode::Unsupported: return PyExc_NotImplementedError;
    case hark::ErrorCode::Io: return PyExc_OSError;
    case hark::ErrorCode::ResourceExhausted: return PyExc_MemoryError;
    case hark::ErrorCode::Aborted:
    case hark::ErrorCode::Internal: return PyExc_RuntimeError;
    default: return PyExc_ValueError;  // InvalidArgument, CorruptData
  }
}

[[noreturn]] void raise_as_python(const hark::Error& e) {
  PyErr_SetString(python_class(e), e.what());
  throw py::error_already_set();
}

// ---- options -------------------------------------------------------------------------------

template <typename T>
void take(py::dict& d, const char* key, T* out) {
  if (!d.contains(key)) return;
  *out = d[key].cast<T>();
  PyDict_DelItemString(d.ptr(), key);
}

// What is left in `d` once every known key was taken: a misspelt or unmapped option.
void refuse_unknown(const py::dict& d, const char* what) {
  if (!d.empty())
    throw py::value_error(std::string("unknown ") + what + " '" + py::str(d.begin()->first).cast<std::string>() + "'");
}

hark::VadOptions vad_options_from(py::dict d) {
  hark::VadOptions o;
  take(d, "threshold", &o.threshold);
  take(d, "min_speech_duration_ms", &o.min_speech_duration_ms);
  take(d, "min_silence_duration_ms", &o.min_silence_duration_ms);
  take(d, "max_speech_duration_s", &o.max_speech_duration_s);
  take(d, "speech_pad_ms", &o.speech_pad_ms);
  take(d, "samples_overlap", &o.samples_overlap);
  refuse_unknown(d, "VAD option");
  return o;
}

hark::TranscribeParams params_from(const py::dict& given) {
  py::dict d(given);  // a copy: keys are removed as they are read
  hark::TranscribeParams p;
  take(d, "language", &p.language);
  take(d, "translate", &p.translate);
  take(d, "n_threads", &p.n_threads);
  take(d, "timestamps", &p.timestamps);
  take(d, "max_tokens_per_window", &p.max_tokens_per_window);
  take(d, "initial_prompt", &p.initial_prompt);
  take(d, "temperature", &p.temperature);
  take(d, "temperature_inc", &p.temperature_inc);
  take(d, "temperatures", &p.temperatures);
  take(d, "clip_timestamps", &p.clip_timestamps);
  take(d, "initial_prompt_tokens", &p.initial_prompt_tokens);
  take(d, "logprob_low_threshold", &p.logprob_low_threshold);
  take(d, "prompt_reset_temperature", &p.prompt_reset_temperature);
  take(d, "best_of", &p.best_of);
  take(d, "length_penalty", &p.length_penalty);
  take(d, "length_penalty_power", &p.length_penalty_power);
  take(d, "hotwords", &p.hotwords);
  take(d, "prefix", &p.prefix);
  take(d, "multilingual", &p.multilingual);
  take(d, "beam_size", &p.beam_size);
  take(d, "patience", &p.patience);
  take(d, "repetition_penalty", &p.repetition_penalty);
  take(d, "no_repeat_ngram_size", &p.no_repeat_ngram_size);
  take(d, "compression_ratio_threshold", &p.compression_ratio_threshold);
  take(d, "logprob_threshold", &p.logprob_threshold);
  take(d, "no_speech_threshold", &p.no_speech_threshold);
  take(d, "seed", &p.seed);
  take(d, "suppress_blank", &p.suppress_blank);
  take(d, "suppress_nst", &p.suppress_nst);
  take(d, "suppress_tokens", &p.suppress_tokens);
  take(d, "no_context", &p.no_context);
  take(d, "max_initial_timestamp", &p.max_initial_timestamp);
  take(d, "word_timestamps", &p.word_timestamps);
  take(d, "prepend_punctuations", &p.prepend_punctuations);
  take(d, "append_punctuations", &p.append_punctuations);
  take(d, "hallucination_silence_threshold", &p.hallucination_silence_threshold);
  take(d, "vad", &p.vad);
  take(d, "vad_model_path", &p.vad_model_path);
  take(d, "batch_size", &p.batch_size);
  if (d.contains("vad_params")) {
    p.vad_params = vad_options_from(d["vad_params"].cast<py::dict>());
    PyDict_DelItemString(d.ptr(), "vad_params");
  }
  if (d.contains("vad_speech")) {  // [(t0, t1), ...] in 10 ms units: the speech already found
    for (const auto& [t0, t1] : d["vad_speech"].cast<std::vector<std::pair<int64_t, int64_t>>>())
      p.vad_speech.push_back({t0, t1});
    PyDict_DelItemString(d.ptr(), "vad_speech");
  }
  refuse_unknown(d, "option");
  return p;
}

// ---- audio in: a float32 array, C-contiguous, one dimension (the Python layer converts) --------

std::vector<float> samples_of(const py::array_t<float, py::array::c_style | py::array::forcecast>& a) {
  if (a.ndim() != 1) throw py::value_error("audio: a one-dimensional array of samples (16 kHz mono) is needed");
  return std::vector<float>(a.data(), a.data() + a.size());
}

py::array_t<float> to_array(std::vector<float>&& v) {
  auto* heap = new std::vector<float>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<float>*>(p); });
  return py::array_t<float>({static_cast<py::ssize_t>(heap->size())}, {sizeof(float)}, heap->data(), owner);
}

// ---- results out -----------------------------------------------------------------------------

py::dict segment_dict(const hark::Segment& s) {
  py::list tokens, words;
  for (const hark::TokenData& t : s.tokens) tokens.append(t.id);
  for (const hark::Word& w : s.words)
    words.append(py::dict(py::arg("start") = w.t0 / 100.0, py::arg("end") = w.t1 / 100.0,
                          py::arg("word") = py::bytes(w.text).attr("decode")("utf-8", "replace"),
                          py::arg("probability") = w.p));
  return py::dict(py::arg("t0") = s.t0, py::arg("t1") = s.t1, py::arg("seek") = s.seek,
                  py::arg("text") = py::bytes(s.text).attr("decode")("utf-8", "replace"), py::arg("tokens") = tokens,
                  py::arg("avg_logprob") = s.avg_logprob, py::arg("compression_ratio") = s.compression_ratio,
                  py::arg("no_speech_prob") = s.no_speech_prob, py::arg("temperature") = s.temperature,
                  py::arg("words") = words);
}

// ---- a transcription on its own thread, its segments through a queue ---------------------------

class Job {
 public:
  Job(std::shared_ptr<hark::Context> ctx, std::shared_ptr<std::counting_semaphore<>> workers, std::vector<float> audio,
      hark::TranscribeParams params)
      : ctx_(std::move(ctx)), workers_(std::move(workers)) {
    params.on_new_segments = [this](const hark::NewSegments& n) {
      std::lock_guard lock(mu_);
      for (const hark::Segment& s : n.segments) queue_.push_back(s);
      cv_.notify_all();
    };
    // Kept for the Python thread, which logs them (logging needs the GIL; this thread has none).
    params.on_fallback = [this](const hark::Fallback& f) {
      std::lock_guard lock(mu_);
      fallbacks_.push_back(f);
    };
    params.should_abort = [this] { return abort_.load(); };
    thread_ = std::thread([this, audio = std::move(audio), params = std::move(params)]() mutable {
      std::exception_ptr error;
      try {
        workers_->acquire();
        struct Release {
          std::counting_semaphore<>* s;
          ~Release() { s->release(); }
        } release{workers_.get()};
        if (!abort_) ctx_->transcribe(audio, params);  // the segments went out through on_new_segments
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(mu_);
      error_ = error;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~Job() {
    abort();
    py::gil_scoped_release nogil;
    if (thread_.joinable()) thread_.join();
  }

  // The segments finished since the last call (waiting for at least one), or None once the job has
  // ended and every segment was taken. Rethrows the job's error then.
  py::object next() {
    std::deque<hark::Segment> got;
    std::vector<hark::Fallback> fallbacks;
    {
      py::gil_scoped_release nogil;
      std::unique_lock lock(mu_);
      // Wake now and then so that Ctrl-C (a signal Python sees only when it runs) stops the wait.
      while (queue_.empty() && !done_) {
        cv_.wait_for(lock, std::chrono::milliseconds(100));
        if (!queue_.empty() || done_) break;
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          abort_ = true;
          throw py::error_already_set();
        }
      }
      got.swap(queue_);
      fallbacks.swap(fallbacks_);
    }
    log_fallbacks(fallbacks);
    if (!got.empty()) {
      py::list out;
      for (const hark::Segment& s : got) out.append(segment_dict(s));
      return out;
    }
    std::lock_guard lock(mu_);
    if (error_) {
      const std::exception_ptr e = error_;
      error_ = nullptr;
      try {
        std::rethrow_exception(e);
      } catch (const hark::Error& he) {
        raise_as_python(he);
      }
    }
    return py::none();
  }

  void abort() { abort_ = true; }

 private:
  // Each window decoded again, on the "hark" logger at DEBUG (as faster-whisper logs its
  // fallbacks), before the segments that window gave.
  static void log_fallbacks(const std::vector<hark::Fallback>& fallbacks) {
    if (fallbacks.empty()) return;
    const py::object logger = py::module_::import("logging").attr("getLogger")("hark");
    for (const hark::Fallback& f : fallbacks)
      logger.attr("debug")(
          "window %.2f-%.2f s decoded again at temperature %.1f (compression ratio %.2f, average log-probability %.2f)",
          f.t0 / 100.0, f.t1 / 100.0, f.temperature, f.compression_ratio, f.avg_logprob);
  }

  std::shared_ptr<hark::Context> ctx_;
  std::shared_ptr<std::counting_semaphore<>> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<hark::Segment> queue_;
  std::vector<hark::Fallback> fallbacks_;
  bool done_ = false;
  std::exception_ptr error_;
  std::atomic<bool> abort_{false};
  std::thread thread_;
};

class Model {
 public:
  Model(const std::string& path, int n_threads, int num_workers) {
    if (num_workers < 1) throw py::value_error("num_workers must be 1 or more, not " + std::to_string(num_workers));
    hark::ContextParams cp;
    cp.n_threads = n_threads;
    {
      py::gil_scoped_release nogil;
      ctx_ = std::shared_ptr<hark::Context>(hark::Context::load(path, cp).release());
    }
    workers_ = std::make_shared<std::counting_semaphore<>>(num_workers);
  }

  py::dict info() const {
    const hark::ModelInfo& i = ctx_->info();
    return py::dict(py::arg("path") = i.path, py::arg("size_name") = i.size_name,
                    py::arg("weight_type") = i.weight_type, py::arg("multilingual") = i.multilingual,
                    py::arg("n_mels") = i.n_mels, py::arg("n_vocab") = i.n_vocab);
  }

  std::unique_ptr<Job> start(const py::array_t<float, py::array::c_style | py::array::forcecast>& audio,
                             const py::dict& options) {
    hark::TranscribeParams p = params_from(options);
    return std::make_unique<Job>(ctx_, workers_, samples_of(audio), std::move(p));
  }

  // mel (optional): a log-mel spectrogram [n_mels, frames] listened to instead of the audio.
  py::tuple detect_language(const py::array_t<float, py::array::c_style | py::array::forcecast>& audio,
                            int64_t offset_ms,
                            const std::optional<py::array_t<float, py::array::c_style | py::array::forcecast>>& mel) {
    const std::vector<float> samples = samples_of(audio);
    hark::DetectLanguageParams p;
    p.offset_ms = offset_ms;
    if (mel) {
      if (mel->ndim() != 2)
        throw py::value_error("features: a 2-D array (n_mels, frames), not " + std::to_string(mel->ndim()) + "-D");
      p.mel.assign(mel->data(), mel->data() + mel->size());
    }
    hark::LanguageDetection d;
    {
      py::gil_scoped_release nogil;
      workers_->acquire();
      struct Release {
        std::counting_semaphore<>* s;
        ~Release() { s->release(); }
      } release{workers_.get()};
      d = ctx_->detect_language(samples, p);
    }
    py::list all;
    std::vector<std::pair<float, int>> order;
    for (size_t i = 0; i < d.probs.size(); ++i) order.emplace_back(d.probs[i], static_cast<int>(i));
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [p, id] : order)
      if (const char* code = hark::language_code_at(id)) all.append(py::make_tuple(code, p));
    return py::make_tuple(d.language, d.probability, all);
  }

 private:
  std::shared_ptr<hark::Context> ctx_;
  std::shared_ptr<std::counting_semaphore<>> workers_;
};

// channel -1: the channels averaged; else that one alone.
py::array_t<float> decode_audio(const py::object& source, int channel) {
  std::vector<float> v;
  if (py::isinstance<py::bytes>(source)) {
    const std::string data = source.cast<std::string>();
    py::gil_scoped_release nogil;
    v = channel < 0 ? hark::decode_audio(data.data(), data.size())
                    : hark::decode_audio_channel(data.data(), data.size(), channel);
  } else {
    const std::string path = py::str(source).cast<std::string>();
    py::gil_scoped_release nogil;
    v = channel < 0 ? hark::load_audio(path) : hark::load_audio_channel(path, channel);
  }
  return to_array(std::move(v));
}

py::list speech_timestamps(const py::array_t<float, py::array::c_style | py::array::forcecast>& audio,
                           const std::string& vad_model, const py::dict& options) {
  const std::vector<float> samples = samples_of(audio);
  const hark::VadOptions o = vad_options_from(py::dict(options));
  hark::VadResult r;
  {
    py::gil_scoped_release nogil;
    r = hark::VadModel::load(vad_model)->detect_speech(samples, o);
  }
  py::list out;
  for (const hark::VadSegment& s : r.segments)
    out.append(py::make_tuple(std::min<int64_t>(s.t0 * 160, static_cast<int64_t>(samples.size())),
                              std::min<int64_t>(s.t1 * 160, static_cast<int64_t>(samples.size()))));
  return out;
}

}  // namespace

PYBIND11_MODULE(_hark, m) {
  m.doc() = "hark's engine under the Python package (use `hark`, not this module)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hark::Error& e) {
      PyErr_SetString(python_class(e), e.what());
    }
  });
  py::class_<Job>(m, "Job").def("next", &Job::next).def("abort", &Job::abort);
  py::class_<Model>(m, "Model")
      .def(py::init<const std::string&, int, int>(), py::arg("path"), py::arg("n_threads") = 0,
           py::arg("num_workers") = 1)
      .def("info", &Model::info)
      .def("start", &Model::start, py::arg("audio"), py::arg("options"))
      .def("detect_language", &Model::detect_language, py::arg("audio"), py::arg("offset_ms") = 0,
           py::arg("mel") = py::none());
  m.def("decode_audio", &decode_audio, py::arg("source"), py::arg("channel") = -1);
  m.def("speech_timestamps", &speech_timestamps, py::arg("audio"), py::arg("vad_model"), py::arg("options"));
  m.def("find_model", [](const std::string& name) { return hark::find_model(name); });
  m.def("models_dir", [] { return hark::models_dir(); });
  m.def("available_models", [] {
    std::vector<std::string> names;
    // faster-whisper's list: the Whisper models (the registry's Silero VAD files are not).
    for (const hark::ModelEntry& e : hark::model_registry())
      if (!e.vad) names.push_back(e.name);
    return names;
  });
  m.def(
      "download_model",
      [](const std::string& name, const std::string& dir) {
        hark::DownloadOptions o;
        o.dir = dir;
        py::gil_scoped_release nogil;
        return hark::download_model(name, o).path;
      },
      py::arg("name"), py::arg("dir") = "");
  m.def("system_info", [] { return hark::system_info(); });
  m.def("language_codes", [] {
    std::vector<std::string> codes;
    for (int i = 0; i < hark::language_count(); ++i) codes.emplace_back(hark::language_code_at(i));
    return codes;
  });
}
