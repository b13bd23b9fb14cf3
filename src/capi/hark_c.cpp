// The C API (include/hark/hark.h): a thin front end over the public C++ API and nothing else.
//
// What this layer adds is what C needs and C++ gives by other means: handles checked against a
// registry instead of smart pointers, status codes and a thread-local message instead of
// exceptions (every exception stops here), params structs that carry their size instead of
// default member initialisers, and a way for hark_context_free to stop and wait for the jobs a
// unique_ptr's destructor would simply have outlived.
#include "hark/hark.h"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <regex>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "capi/handles.h"
#include "hark/hark.hpp"

namespace hark::capi {

// What runs on a context or a state: the calls in progress, so that freeing it can wait for them,
// and their jobs, so that it can stop them first.
struct Activity {
  std::mutex mu;
  std::condition_variable idle;
  int calls = 0;
  bool closing = false;  // being freed: a job that registers now is aborted at once
  std::vector<std::shared_ptr<Job>> jobs;
};

}  // namespace hark::capi

struct hark_context {
  std::unique_ptr<hark::Context> impl;
  std::string describe;
  hark::capi::Activity activity;
};

struct hark_state {
  std::unique_ptr<hark::State> impl;
  hark::capi::Activity activity;
  // The stream the state is lent to (hark_stream_create_on_state), under activity.mu: live until
  // that stream is freed. The handle only names it (t_in_callback_of); it is never followed.
  std::weak_ptr<hark::RealtimeTranscriber> lent_to;
  const void* lent_to_handle = nullptr;
  bool lending = false;  // hark_stream_create_on_state is starting a stream on it
  bool lent() const { return lending || !lent_to.expired(); }
};

struct hark_result {
  hark::Transcript t;
  std::string text;
  // hark_result_format's strings, made on first use (a result is otherwise immutable).
  std::mutex format_mu;
  std::string formats[6];
  bool formatted[6] = {false, false, false, false, false, false};
};

namespace {

using hark::capi::Activity;
using hark::capi::handles;
using hark::capi::Kind;

// ---- errors ---------------------------------------------------------------------------------

thread_local std::string t_last_error;

// An error this layer finds itself (a bad argument or handle), with its status, or one of a
// phase of a call that reads data (phase()), with the code it had.
struct CallError {
  hark_status status;
  std::string message;
  hark::ErrorCode code = hark::ErrorCode::InvalidArgument;
};

[[noreturn]] void raise(hark_status status, std::string message,
                        hark::ErrorCode code = hark::ErrorCode::InvalidArgument) {
  throw CallError{status, std::move(message), code};
}

void require(bool ok, const std::string& message) {
  if (!ok) raise(HARK_ERR_INVALID_ARGUMENT, message);
}

hark_status set_error(hark_status status, const char* fn, const char* message) noexcept {
  try {
    t_last_error = std::string(fn) + ": " + message;
  } catch (...) {
    t_last_error = "out of memory";  // fits the string's inline buffer: no allocation
  }
  return status;
}

// The status of a hark::Error, by its code. Corrupt data is the data the call reads: a model
// file (HARK_ERR_MODEL), audio (HARK_ERR_AUDIO), or a file the run opens itself, such as the VAD
// model of a transcription (HARK_ERR_FAILED): `data_status`.
hark_status status_of(const hark::Error& e, hark_status data_status) {
  switch (e.code()) {
    case hark::ErrorCode::InvalidArgument:
    case hark::ErrorCode::Unsupported: return HARK_ERR_INVALID_ARGUMENT;
    case hark::ErrorCode::NotFound:
    case hark::ErrorCode::Io: return HARK_ERR_IO;
    case hark::ErrorCode::CorruptData: return data_status;
    case hark::ErrorCode::ResourceExhausted: return HARK_ERR_OUT_OF_MEMORY;
    case hark::ErrorCode::Aborted: return HARK_ERR_FAILED;
    case hark::ErrorCode::Internal: return HARK_ERR_INTERNAL;
  }
  return HARK_ERR_FAILED;
}

// The code of the last failing call on this thread, for hark_last_error_code().
thread_local const char* t_last_code = "";

// Runs body and turns whatever it throws into a status and hark_last_error(): a hark::Error by
// its code (status_of, with `data_status` for corrupt data), what this layer finds itself
// (CallError) by its own status.
template <typename F>
hark_status guarded(const char* fn, hark_status data_status, F&& body) noexcept {
  try {
    body();
    return HARK_OK;
  } catch (const CallError& e) {
    t_last_code = e.status == HARK_ERR_BAD_HANDLE ? "invalid_argument" : hark::error_code_name(e.code);
    return set_error(e.status, fn, e.message.c_str());
  } catch (const hark::Error& e) {
    t_last_code = hark::error_code_name(e.code());
    return set_error(status_of(e, data_status), fn, e.what());
  } catch (const std::bad_alloc&) {
    t_last_code = hark::error_code_name(hark::ErrorCode::ResourceExhausted);
    return set_error(HARK_ERR_OUT_OF_MEMORY, fn, "out of memory");
  } catch (const std::exception& e) {
    t_last_code = hark::error_code_name(hark::ErrorCode::Internal);
    return set_error(HARK_ERR_INTERNAL, fn, (std::string("internal error: ") + e.what()).c_str());
  } catch (...) {
    t_last_code = hark::error_code_name(hark::ErrorCode::Internal);
    return set_error(HARK_ERR_INTERNAL, fn, "internal error: unknown exception");
  }
}

// Runs one phase of a call that reads data (decoding audio, finding the model) so that a
// hark::Error about that data is reported with the phase's status: a file that cannot be read is
// HARK_ERR_IO, anything else wrong with it (corrupt, of a format hark does not know, too long) is
// `status`; a failure of hark itself stays HARK_ERR_INTERNAL.
template <typename F>
auto phase(hark_status status, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const hark::Error& e) {
    const hark::ErrorCode c = e.code();
    const bool io = c == hark::ErrorCode::NotFound || c == hark::ErrorCode::Io;
    raise(io ? HARK_ERR_IO : c == hark::ErrorCode::Internal ? HARK_ERR_INTERNAL : status, e.what(), c);
  }
}

// A C caller may pass any int as an enum; in C++ a value outside the enumerators is undefined
// once read as the enum, so enum arguments are read as their bytes.
template <typename E>
int enum_value(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are ints here");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// ---- handles ----------------------------------------------------------------------------------

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Context: return "hark_context (from hark_context_load)";
    case Kind::State: return "hark_state (from hark_state_new)";
    case Kind::Result: return "hark_result (from a hark_transcribe* call)";
    case Kind::BorrowedResult: return "hark_result";
    case Kind::Samples: return "sample buffer (from a hark_audio_* call)";
    case Kind::VadContext: return "hark_vad_context (from hark_vad_context_load)";
    case Kind::VadStream: return "hark_vad_stream (from hark_vad_stream_new)";
    case Kind::VadResult: return "hark_vad_result (from hark_vad_detect_speech)";
    case Kind::Stream: return "hark_stream (from hark_stream_create)";
  }
  return "handle";
}

[[noreturn]] void bad_handle(const void* p, Kind k, const char* arg) {
  if (!p) raise(HARK_ERR_BAD_HANDLE, std::string(arg) + " is NULL");
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", p);
  raise(HARK_ERR_BAD_HANDLE, std::string(arg) + " (" + addr + ") is not a live " + kind_name(k) +
                                 ": freed already, or never made by hark");
}

// The registry's shared lock, held while a short call reads the object: a concurrent free waits.
std::shared_lock<std::shared_mutex> read_lock(const void* p, Kind k, const char* arg) {
  std::shared_lock<std::shared_mutex> lock(handles().mutex());
  if (!handles().is(p, k)) bad_handle(p, k, arg);
  return lock;
}

std::shared_lock<std::shared_mutex> read_result(const hark_result* r, const char* arg = "result") {
  std::shared_lock<std::shared_mutex> lock(handles().mutex());
  if (!handles().is(r, Kind::Result) && !handles().is(r, Kind::BorrowedResult)) bad_handle(r, Kind::Result, arg);
  return lock;
}

// A long call (a transcription, a bench) on a context or state counts itself in its Activity, so
// hark_*_free can stop it and wait for it instead of freeing the object under it.
class Lease {
 public:
  // With the registry lock held, so a free cannot slip in between the check and the count.
  explicit Lease(Activity& a) : a_(a) {
    std::lock_guard<std::mutex> lock(a_.mu);
    ++a_.calls;
  }
  ~Lease() {
    std::lock_guard<std::mutex> lock(a_.mu);
    if (job_) {
      const auto it = std::find(a_.jobs.begin(), a_.jobs.end(), job_);
      if (it != a_.jobs.end()) a_.jobs.erase(it);
    }
    if (--a_.calls == 0) a_.idle.notify_all();
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  // The job this call runs as; stopped at once when the owner is already being freed.
  void track(std::shared_ptr<hark::Job> job) {
    std::lock_guard<std::mutex> lock(a_.mu);
    a_.jobs.push_back(job);
    job_ = std::move(job);
    if (a_.closing) job_->abort();
  }

 private:
  Activity& a_;
  std::shared_ptr<hark::Job> job_;
};

template <typename H>
void lease(H* h, Kind k, const char* arg, std::optional<Lease>& out) {
  const auto lock = read_lock(h, k, arg);
  out.emplace(h->activity);
}

// Handles whose job's callback is running on this thread (a stack: a callback may transcribe on
// another context). Freeing one of them from there would wait for the callback itself.
thread_local std::vector<const void*> t_in_callback_of;

struct CallbackScope {
  explicit CallbackScope(const void* owner) { t_in_callback_of.push_back(owner); }
  ~CallbackScope() { t_in_callback_of.pop_back(); }
};

// Takes h out of the registry (later calls: bad handle), stops its jobs, waits for its calls.
template <typename H>
void close_and_wait(H* h, Kind k, const char* arg) {
  if (std::find(t_in_callback_of.begin(), t_in_callback_of.end(), static_cast<const void*>(h)) !=
      t_in_callback_of.end())
    raise(HARK_ERR_INVALID_ARGUMENT, std::string(arg) + " is running the job whose callback this call comes from; "
                                                         "free it after the job returns");
  {
    std::unique_lock<std::shared_mutex> lock(handles().mutex());
    if (!handles().remove_locked(h, k)) bad_handle(h, k, arg);
  }
  std::unique_lock<std::mutex> lock(h->activity.mu);
  h->activity.closing = true;
  for (const auto& job : h->activity.jobs) job->abort();
  h->activity.idle.wait(lock, [&] { return h->activity.calls == 0; });
}

template <typename T>
void require_out(T** out, const char* arg = "out") {
  require(out != nullptr, std::string(arg) + " is NULL");
  *out = nullptr;  // failures leave NULL behind
}

// ---- structs that carry their size --------------------------------------------------------
// Fields are only appended, and each params struct ends on a pointer-sized field (no tail
// padding), so a caller's struct_size covers exactly the fields its header had. The library reads
// that prefix over its defaults. The first release's size is the smallest it accepts.

constexpr size_t kContextParamsV1 = offsetof(hark_context_params, device) + sizeof(const char*);
constexpr size_t kTranscribeParamsV1 = offsetof(hark_transcribe_params, abort_user_data) + sizeof(void*);
// No tail padding: when a field is appended, name the new last field here.
static_assert(sizeof(hark_context_params) == offsetof(hark_context_params, cross_kv_type) + sizeof(int64_t) &&
                  sizeof(int64_t) == sizeof(void*),
              "hark_context_params must end on a pointer-sized field");
static_assert(sizeof(hark_transcribe_params) == offsetof(hark_transcribe_params, batch_size) + sizeof(int64_t) &&
                  sizeof(int64_t) == sizeof(const char*),
              "hark_transcribe_params must end on a pointer-sized field");

template <typename P>
void init_params(P* params, size_t size, size_t v1, const P& defaults, const char* name) {
  require(params != nullptr, "params is NULL");
  require(size >= v1 && size <= sizeof(P), "params_size " + std::to_string(size) + " is not the size of a " + name +
                                               " this library knows (" + std::to_string(v1) + ".." +
                                               std::to_string(sizeof(P)) + ")");
  std::memcpy(static_cast<void*>(params), &defaults, size);
  params->struct_size = size;
}

template <typename P>
P read_params(const P* in, size_t v1, const P& defaults, const char* default_fn) {
  if (!in) return defaults;
  const size_t size = in->struct_size;
  require(size != 0, std::string("params->struct_size is 0: initialise params with ") + default_fn + "()");
  require(size >= v1, "params->struct_size " + std::to_string(size) + " is smaller than any version's (" +
                          std::to_string(v1) + "): initialise params with " + default_fn + "()");
  require(size <= sizeof(P), "params->struct_size " + std::to_string(size) + " is larger than this library's (" +
                                 std::to_string(sizeof(P)) + "): the program was built with a newer hark.h");
  P p = defaults;
  std::memcpy(static_cast<void*>(&p), in, size);
  p.struct_size = sizeof(P);
  return p;
}

// Output structs: filled as far as the caller's size reaches (an older caller: its fields only).
constexpr size_t kDeviceInfoV1 = offsetof(hark_device_info, reason_no_gpu) + sizeof(const char*);
constexpr size_t kModelInfoV1 = offsetof(hark_model_info, load_ms) + sizeof(double);
constexpr size_t kQuantizeResultV1 = offsetof(hark_quantize_result, n_kept_f16) + sizeof(int);
constexpr size_t kTokenDataV1 = offsetof(hark_token_data, t1) + sizeof(int64_t);
constexpr size_t kSegmentDecodingV1 = offsetof(hark_segment_decoding, no_speech_prob) + sizeof(float);
constexpr size_t kWindowV1 = offsetof(hark_window, skipped_as_silence) + sizeof(bool);
constexpr size_t kTimingsV1 = offsetof(hark_timings, real_time_factor) + sizeof(double);
constexpr size_t kBenchResultV1 = offsetof(hark_bench_result, prompt_ms) + sizeof(double);
constexpr size_t kWordV1 = offsetof(hark_word, p) + sizeof(float);

template <typename S>
void write_out(S* out, size_t out_size, size_t v1, const S& value) {
  require(out != nullptr, "out is NULL");
  require(out_size >= v1, "out_size " + std::to_string(out_size) + " is smaller than the struct (" +
                              std::to_string(v1) + "); pass sizeof *out");
  std::memcpy(static_cast<void*>(out), &value, std::min(out_size, sizeof(S)));
}

hark_context_params context_defaults() {
  hark_context_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.n_threads = 0;
  p.use_gpu = true;
  p.flash_attn = true;
  p.device = nullptr;
  p.load_progress_callback = nullptr;
  p.load_progress_user_data = nullptr;
  p.cross_kv_type = HARK_KV_F16;
  return p;
}

hark_transcribe_params transcribe_defaults() {
  hark_transcribe_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);  // callbacks, user data, prompt: NULL
  p.struct_size = sizeof p;
  p.language = "en";
  p.translate = false;
  p.n_threads = 0;
  p.n_processors = 1;
  p.offset_ms = 0;
  p.duration_ms = 0;
  p.timestamps = true;
  p.max_tokens_per_window = 0;
  p.job_id = 0;
  const hark::TranscribeParams d;
  p.temperature = d.temperature;
  p.temperature_inc = d.temperature_inc;
  p.best_of = d.best_of;
  p.length_penalty = d.length_penalty;
  p.compression_ratio_threshold = d.compression_ratio_threshold;
  p.logprob_threshold = d.logprob_threshold;
  p.no_speech_threshold = d.no_speech_threshold;
  p.suppress_blank = d.suppress_blank;
  p.suppress_nst = d.suppress_nst;
  p.carry_initial_prompt = d.carry_initial_prompt;
  p.no_context = d.no_context;
  p.single_segment = d.single_segment;
  p.max_context = d.max_context;
  p.max_initial_timestamp = d.max_initial_timestamp;
  p.seed = d.seed;
  p.suppress_tokens = nullptr;
  p.n_suppress_tokens = 0;
  p.suppress_regex = nullptr;
  p.word_timestamps = d.word_timestamps;
  p.dtw_n_top = d.dtw_n_top;
  p.hallucination_silence_threshold = d.hallucination_silence_threshold;
  p.dtw_preset = nullptr;
  p.dtw_heads = nullptr;
  p.prepend_punctuations = nullptr;
  p.append_punctuations = nullptr;
  p.token_timestamps = d.token_timestamps;
  p.thold_pt = d.thold_pt;
  p.thold_ptsum = d.thold_ptsum;
  p.max_len = d.max_len;
  p.split_on_word = d.split_on_word;
  p.tdrz_enable = d.tdrz_enable;
  p.beam_size = d.beam_size;
  p.patience = d.patience;
  p.vad = d.vad;
  p.vad_threshold = d.vad_params.threshold;
  p.vad_min_speech_duration_ms = d.vad_params.min_speech_duration_ms;
  p.vad_min_silence_duration_ms = d.vad_params.min_silence_duration_ms;
  p.vad_speech_pad_ms = d.vad_params.speech_pad_ms;
  p.vad_samples_overlap = d.vad_params.samples_overlap;
  p.vad_max_speech_duration_s = d.vad_params.max_speech_duration_s;
  p.vad_model_path = nullptr;
  p.batch_size = d.batch_size;
  return p;
}

// The C structs' VAD options (hark_vad_params, hark_transcribe_params' vad_* fields) as the C++
// ones; the C maximum is a double, so a value beyond float's range means "no limit" as FLT_MAX does.
hark::VadOptions vad_options(float threshold, int min_speech_ms, int min_silence_ms, int pad_ms, float overlap,
                             double max_speech_s) {
  hark::VadOptions o;
  o.threshold = threshold;
  o.min_speech_duration_ms = min_speech_ms;
  o.min_silence_duration_ms = min_silence_ms;
  o.speech_pad_ms = pad_ms;
  o.samples_overlap = overlap;
  o.max_speech_duration_s = static_cast<float>(std::min<double>(max_speech_s, FLT_MAX));
  return o;
}

// ---- transcription ----------------------------------------------------------------------------

// What only the C form of the params can get wrong: a NULL array with a count, a job id that is
// no id, numbers wider than the C++ fields. Every option's value and range is checked once, by the
// library (TranscribeParams), whose messages name the field.
void check_c_params(const hark_transcribe_params& p) {
  require(p.job_id >= 0, "params->job_id must be 0 (a new job) or an id from hark_job_new(), got " +
                             std::to_string(p.job_id));
  require(p.n_suppress_tokens == 0 || p.suppress_tokens != nullptr,
          "params->suppress_tokens is NULL but n_suppress_tokens is " + std::to_string(p.n_suppress_tokens));
  require(p.max_len >= INT32_MIN && p.max_len <= INT32_MAX,
          "params->max_len must fit in 32 bits, got " + std::to_string(p.max_len));
  require(p.batch_size >= INT32_MIN && p.batch_size <= INT32_MAX,
          "params->batch_size must fit in 32 bits, got " + std::to_string(p.batch_size));
}

// The C arguments of the audio: the library checks the samples themselves (offset, NaN).
void check_samples(const float* samples, size_t n) {
  require(samples != nullptr, "samples is NULL");
  require(n > 0, "n_samples is 0: no audio");
}

hark_result* publish(hark::Transcript&& t) {
  auto r = std::make_unique<hark_result>();
  r->t = std::move(t);
  r->text = r->t.text();
  handles().add(r.get(), Kind::Result);
  return r.release();
}

// The C params as C++ params: callbacks wrapped so they know their owner (see CallbackScope) and
// new segments arrive as a borrowed hark_result.
hark::TranscribeParams to_cpp(const hark_transcribe_params& p, const void* owner, int job_id) {
  hark::TranscribeParams c;
  c.language = (!p.language || !*p.language) ? "auto" : p.language;
  c.translate = p.translate;
  c.n_threads = p.n_threads;
  c.n_processors = p.n_processors;
  c.offset_ms = p.offset_ms;
  c.duration_ms = p.duration_ms;
  c.timestamps = p.timestamps;
  c.max_tokens_per_window = p.max_tokens_per_window;
  if (p.initial_prompt) c.initial_prompt = p.initial_prompt;
  c.temperature = p.temperature;
  c.temperature_inc = p.temperature_inc;
  c.best_of = p.best_of;
  c.length_penalty = p.length_penalty;
  c.compression_ratio_threshold = p.compression_ratio_threshold;
  c.logprob_threshold = p.logprob_threshold;
  c.no_speech_threshold = p.no_speech_threshold;
  c.suppress_blank = p.suppress_blank;
  c.suppress_nst = p.suppress_nst;
  c.carry_initial_prompt = p.carry_initial_prompt;
  c.no_context = p.no_context;
  c.single_segment = p.single_segment;
  c.max_context = p.max_context;
  c.max_initial_timestamp = p.max_initial_timestamp;
  c.seed = p.seed;
  if (p.suppress_tokens) c.suppress_tokens.assign(p.suppress_tokens, p.suppress_tokens + p.n_suppress_tokens);
  if (p.suppress_regex) c.suppress_regex = p.suppress_regex;
  c.word_timestamps = p.word_timestamps;
  c.dtw_n_top = p.dtw_n_top;
  c.hallucination_silence_threshold = p.hallucination_silence_threshold;
  if (p.dtw_preset) c.dtw_preset = p.dtw_preset;
  if (p.dtw_heads) c.dtw_heads = p.dtw_heads;
  if (p.prepend_punctuations) c.prepend_punctuations = p.prepend_punctuations;
  if (p.append_punctuations) c.append_punctuations = p.append_punctuations;
  c.token_timestamps = p.token_timestamps;
  c.thold_pt = p.thold_pt;
  c.thold_ptsum = p.thold_ptsum;
  c.max_len = static_cast<int>(p.max_len);
  c.split_on_word = p.split_on_word;
  c.tdrz_enable = p.tdrz_enable;
  c.beam_size = p.beam_size;
  c.patience = p.patience;
  c.vad = p.vad;
  if (p.vad_model_path) c.vad_model_path = p.vad_model_path;
  c.batch_size = static_cast<int>(p.batch_size);
  c.vad_params = vad_options(p.vad_threshold, p.vad_min_speech_duration_ms, p.vad_min_silence_duration_ms,
                             p.vad_speech_pad_ms, p.vad_samples_overlap, p.vad_max_speech_duration_s);
  if (p.progress_callback)
    c.on_progress = [cb = p.progress_callback, ud = p.progress_user_data, owner](int percent) {
      CallbackScope scope(owner);
      cb(percent, ud);
    };
  if (p.new_segments_callback)
    c.on_new_segments = [cb = p.new_segments_callback, ud = p.new_segments_user_data, owner,
                         job_id](const hark::NewSegments& ns) {
      CallbackScope scope(owner);
      hark_result view;
      view.t.job_id = job_id;
      view.t.segments.assign(ns.segments.begin(), ns.segments.end());
      view.text = ns.text;
      handles().add(&view, Kind::BorrowedResult);
      struct Unregister {
        hark_result* r;
        ~Unregister() { handles().remove(r, Kind::BorrowedResult); }
      } unregister{&view};
      cb(&view, ns.n_new, ns.total, ud);
    };
  if (p.encoder_begin_callback)
    c.on_encoder_begin = [cb = p.encoder_begin_callback, ud = p.encoder_begin_user_data, owner] {
      CallbackScope scope(owner);
      return cb(ud);
    };
  if (p.abort_callback)
    c.should_abort = [cb = p.abort_callback, ud = p.abort_user_data, owner] {
      CallbackScope scope(owner);
      return cb(ud);
    };
  return c;
}

// The job a call runs as: the caller's (by id) or a new one, registered only for the call.
struct CallJob {
  std::shared_ptr<hark::Job> job;
  bool own = false;
  explicit CallJob(int id) {
    if (id == 0) {
      job = hark::jobs::create();
      own = true;
    } else {
      job = hark::jobs::get(id);
      require(job != nullptr, "params->job_id " + std::to_string(id) +
                                  " is not a registered job (make one with hark_job_new; it stays until hark_job_remove)");
    }
  }
  ~CallJob() {
    if (own) hark::jobs::remove(job->id());
  }
  CallJob(const CallJob&) = delete;
  CallJob& operator=(const CallJob&) = delete;
};


// The common end of every transcribe call: owner already leased, params read and checked.
template <typename Run>
void run_job(Lease& lease, const void* owner, const hark_transcribe_params& p, const float* samples, size_t n,
             hark_result** out, Run&& run) {
  check_samples(samples, n);
  // A VAD model that cannot be opened is HARK_ERR_IO, as for hark_vad_context_load; one that is
  // not a VAD model is HARK_ERR_FAILED (the loader's message); both before any compute.
  CallJob job(p.job_id);
  hark::TranscribeParams c = to_cpp(p, owner, job.job->id());
  c.job = job.job;
  lease.track(job.job);
  hark::Transcript t = run(std::span<const float>(samples, n), c);
  *out = publish(std::move(t));
}


// The hark_transcribe_params field of a TranscribeParams field an error names, when it is spelled
// differently ("vad_params.threshold" is vad_threshold); "" when it is the same or no option.
std::string c_param_name(const std::string& field) {
  const std::string vad = "vad_params.";
  if (field.compare(0, vad.size(), vad) == 0) return "vad_" + field.substr(vad.size());
  return "";
}

// A state lent to a stream runs nothing else until the stream is freed.
void require_not_lent(hark_context*) {}
void require_not_lent(hark_state* s) {
  std::lock_guard<std::mutex> lock(s->activity.mu);
  require(!s->lent(),
          "state is lent to a stream (hark_stream_create_on_state); free the stream before using the state again");
}

// A transcription on a context or a state (kind k, argument name `arg`) of the samples that
// `audio(storage)` gives as {pointer, count}: the caller's samples (checked by run_job, so a
// NULL pointer is an error, not a span), or `storage` once filled.
template <typename Handle, typename Audio>
hark_status transcribe_on(const char* fn, Handle* h, Kind k, const char* arg, const hark_transcribe_params* params,
                          hark_result** out, Audio&& audio) {
  return guarded(fn, HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(h, k, arg, l);
    require_not_lent(h);
    const hark_transcribe_params p = read_params(params, kTranscribeParamsV1, transcribe_defaults(),
                                                 "hark_transcribe_default_params");
    check_c_params(p);
    std::vector<float> storage;
    const auto [samples, n] = audio(storage);
    try {
      run_job(*l, h, p, samples, n, out,
              [&](std::span<const float> s, const hark::TranscribeParams& c) { return h->impl->transcribe(s, c); });
    } catch (const hark::Error& e) {
      // The library names the C++ field; say the C one too where its name differs.
      const std::string c_field = c_param_name(e.field());
      if (c_field.empty()) throw;
      throw hark::Error(e.code(), std::string(e.what()) + " (params->" + c_field + ")", e.field());
    }
  });
}

// A transcription on a context of audio that `make_audio` produces (decoded or converted first:
// its hark::Error is HARK_ERR_AUDIO, the run's is HARK_ERR_FAILED).
template <typename MakeAudio>
hark_status transcribe_on_context(const char* fn, hark_context* ctx, const hark_transcribe_params* params,
                                  hark_result** out, MakeAudio&& make_audio) {
  return transcribe_on(fn, ctx, Kind::Context, "ctx", params, out, [&](std::vector<float>& storage) {
    storage = phase(HARK_ERR_AUDIO, make_audio);
    return std::pair<const float*, size_t>(storage.data(), storage.size());
  });
}

// A path argument: the library opens the file and says why it cannot (HARK_ERR_IO).
void check_path(const char* path, const char* arg) {
  require(path != nullptr, std::string(arg) + " is NULL");
  require(*path != '\0', std::string(arg) + " is empty");
}

void check_pcm(const void* samples, size_t n_values, int sample_rate, int channels) {
  require(samples != nullptr, "samples is NULL");
  require(n_values > 0, "n_values is 0: no audio");
  require(sample_rate > 0, "sample_rate must be > 0, got " + std::to_string(sample_rate));
  require(channels >= 1, "channels must be >= 1, got " + std::to_string(channels));
  require(n_values % static_cast<size_t>(channels) == 0,
          "n_values " + std::to_string(n_values) + " is not a multiple of channels (" + std::to_string(channels) + ")");
}

// hark_audio_*: a registered copy of the samples, so hark_audio_free can check what it is given.
template <typename MakeAudio>
hark_status audio_call(const char* fn, float** out, size_t* n_out, MakeAudio&& make_audio) {
  return guarded(fn, HARK_ERR_AUDIO, [&] {
    require_out(out);
    require(n_out != nullptr, "n_out is NULL");
    *n_out = 0;
    const std::vector<float> audio = phase(HARK_ERR_AUDIO, make_audio);
    auto buf = std::make_unique<float[]>(std::max<size_t>(audio.size(), 1));  // never a 0-byte (shared) address
    std::copy(audio.begin(), audio.end(), buf.get());
    handles().add(buf.get(), Kind::Samples);
    *n_out = audio.size();
    *out = buf.release();
  });
}

// Result getters: the value, or `sentinel` (and hark_last_error) on a bad handle or index.
template <typename T, typename F>
T get(const char* fn, const hark_result* r, T sentinel, F&& f) noexcept {
  T v = sentinel;
  guarded(fn, HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(r);
    v = f(*r);
  });
  return v;
}

const hark::Segment& segment(const hark_result& r, int i) {
  require(i >= 0 && static_cast<size_t>(i) < r.t.segments.size(),
          "segment index " + std::to_string(i) + " is out of range (n_segments " + std::to_string(r.t.segments.size()) +
              ")");
  return r.t.segments[static_cast<size_t>(i)];
}

// Element j of segment i's list (tokens, words), named `what` in the message when out of range.
template <typename T>
const T& segment_item(const std::vector<T>& list, int i, int j, const char* what) {
  require(j >= 0 && static_cast<size_t>(j) < list.size(),
          std::string(what) + " index " + std::to_string(j) + " is out of range (segment " + std::to_string(i) +
              " has " + std::to_string(list.size()) + " " + what + "s)");
  return list[static_cast<size_t>(j)];
}

const std::vector<hark::DeviceChoice>& all_devices() {
  static const std::vector<hark::DeviceChoice> d = hark::devices();  // fixed for the process
  return d;
}

hark_device_info device_info(const hark::DeviceChoice& d) {
  hark_device_info i;
  std::memset(static_cast<void*>(&i), 0, sizeof i);
  i.name = d.name.c_str();
  i.description = d.description.c_str();
  i.gpu = d.gpu;
  i.reason_no_gpu = d.reason_no_gpu.c_str();
  return i;
}

}  // namespace

// ==== the API ===================================================================================

extern "C" {

const char* hark_last_error(void) { return t_last_error.c_str(); }

const char* hark_last_error_code(void) { return t_last_code; }

const char* hark_status_name(hark_status status) {
  switch (enum_value(status)) {
    case HARK_OK: return "HARK_OK";
    case HARK_ERR_INVALID_ARGUMENT: return "HARK_ERR_INVALID_ARGUMENT";
    case HARK_ERR_BAD_HANDLE: return "HARK_ERR_BAD_HANDLE";
    case HARK_ERR_IO: return "HARK_ERR_IO";
    case HARK_ERR_MODEL: return "HARK_ERR_MODEL";
    case HARK_ERR_AUDIO: return "HARK_ERR_AUDIO";
    case HARK_ERR_OUT_OF_MEMORY: return "HARK_ERR_OUT_OF_MEMORY";
    case HARK_ERR_FAILED: return "HARK_ERR_FAILED";
    case HARK_ERR_INTERNAL: return "HARK_ERR_INTERNAL";
  }
  return "HARK_ERR_UNKNOWN";
}

const char* hark_version(void) { return hark::version(); }

const char* hark_system_info(void) {
  const char* s = "";
  guarded("hark_system_info", HARK_ERR_INTERNAL, [&] {
    static const std::string info = hark::system_info();  // fixed for the process
    s = info.c_str();
  });
  return s;
}

int hark_language_count(void) { return hark::language_count(); }

int hark_language_id(const char* code) {
  int id = -1;
  guarded("hark_language_id", HARK_ERR_INVALID_ARGUMENT, [&] {
    require(code != nullptr, "code is NULL");
    id = hark::language_id(code);
    require(id >= 0, std::string("unknown language '") + code + "'");
  });
  return id;
}

const char* hark_language_code(int id) {
  const char* code = nullptr;
  guarded("hark_language_code", HARK_ERR_INVALID_ARGUMENT, [&] {
    code = hark::language_code_at(id);
    require(code != nullptr, "id " + std::to_string(id) + " is out of range [0, " +
                                 std::to_string(hark::language_count()) + ")");
  });
  return code;
}

const char* hark_language_name(int id) {
  const char* name = nullptr;
  guarded("hark_language_name", HARK_ERR_INVALID_ARGUMENT, [&] {
    name = hark::language_name_at(id);
    require(name != nullptr, "id " + std::to_string(id) + " is out of range [0, " +
                                 std::to_string(hark::language_count()) + ")");
  });
  return name;
}

// ---- logging ----

hark_status hark_set_log_callback(hark_log_callback callback, void* user_data) {
  return guarded("hark_set_log_callback", HARK_ERR_INTERNAL, [&] {
    if (!callback) {
      hark::set_log_callback(nullptr);
      return;
    }
    hark::set_log_callback([callback, user_data](hark::LogLevel level, const std::string& message) {
      callback(static_cast<hark_log_level>(level), message.c_str(), user_data);
    });
  });
}

hark_status hark_set_log_level(hark_log_level min_level) {
  return guarded("hark_set_log_level", HARK_ERR_INTERNAL, [&] {
    const int l = enum_value(min_level);
    require(l >= HARK_LOG_DEBUG && l <= HARK_LOG_ERROR,
            "min_level " + std::to_string(l) + " is not a hark_log_level (0..3)");
    hark::set_log_level(static_cast<hark::LogLevel>(l));
  });
}

// ---- devices ----

int hark_device_count(void) {
  int n = -1;
  guarded("hark_device_count", HARK_ERR_INTERNAL, [&] { n = static_cast<int>(all_devices().size()); });
  return n;
}

hark_status hark_device_get(int index, hark_device_info* out, size_t out_size) {
  return guarded("hark_device_get", HARK_ERR_INTERNAL, [&] {
    const auto& d = all_devices();
    require(index >= 0 && static_cast<size_t>(index) < d.size(),
            "index " + std::to_string(index) + " is out of range (hark_device_count() is " + std::to_string(d.size()) +
                ")");
    write_out(out, out_size, kDeviceInfoV1, device_info(d[static_cast<size_t>(index)]));
  });
}

// ---- contexts ----

hark_status hark_context_params_init(hark_context_params* params, size_t params_size) {
  return guarded("hark_context_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kContextParamsV1, context_defaults(), "hark_context_params");
  });
}

hark_status hark_context_load(const char* model_path, const hark_context_params* params, hark_context** out) {
  return guarded("hark_context_load", HARK_ERR_MODEL, [&] {
    require_out(out);
    require(model_path != nullptr, "model_path is NULL");
    const hark_context_params p = read_params(params, kContextParamsV1, context_defaults(), "hark_context_default_params");
    // The enum read as its bytes (any int may come from C); the library checks the rest.
    require(p.cross_kv_type == HARK_KV_F16 || p.cross_kv_type == HARK_KV_Q8_0,
            "params->cross_kv_type must be HARK_KV_F16 (0) or HARK_KV_Q8_0 (1), got " + std::to_string(p.cross_kv_type));
    hark::ContextParams cp;
    cp.n_threads = p.n_threads;
    cp.use_gpu = p.use_gpu;
    cp.flash_attn = p.flash_attn;
    cp.cross_kv_type = p.cross_kv_type == HARK_KV_Q8_0 ? hark::KvCacheType::Q8_0 : hark::KvCacheType::F16;
    if (p.device) cp.device = p.device;
    if (p.load_progress_callback)
      cp.on_load_progress = [&p](uint64_t done, uint64_t total) {
        p.load_progress_callback(done, total, p.load_progress_user_data);
      };
    // A bare name that is no file here is found in the models folder (not there: HARK_ERR_IO); a
    // file that is not a model is HARK_ERR_MODEL.
    auto ctx = std::make_unique<hark_context>();
    ctx->impl = hark::Context::load(model_path, cp);
    ctx->describe = ctx->impl->info().describe();
    handles().add(ctx.get(), Kind::Context);
    *out = ctx.release();
  });
}

hark_status hark_context_free(hark_context* ctx) {
  return guarded("hark_context_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(ctx, Kind::Context, "ctx");
    delete ctx;
  });
}

hark_status hark_context_info(const hark_context* ctx, hark_model_info* out, size_t out_size) {
  return guarded("hark_context_info", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(ctx, Kind::Context, "ctx");
    const hark::ModelInfo& m = ctx->impl->info();
    hark_model_info i;
    std::memset(static_cast<void*>(&i), 0, sizeof i);
    i.path = m.path.c_str();
    i.size_name = m.size_name.c_str();
    i.weight_type = m.weight_type.c_str();
    i.multilingual = m.multilingual;
    i.n_vocab = m.n_vocab;
    i.n_audio_ctx = m.n_audio_ctx;
    i.n_audio_state = m.n_audio_state;
    i.n_audio_head = m.n_audio_head;
    i.n_audio_layer = m.n_audio_layer;
    i.n_text_ctx = m.n_text_ctx;
    i.n_text_state = m.n_text_state;
    i.n_text_head = m.n_text_head;
    i.n_text_layer = m.n_text_layer;
    i.n_mels = m.n_mels;
    i.ftype = m.ftype;
    i.file_bytes = m.file_bytes;
    i.tensor_bytes = m.tensor_bytes;
    i.mapped = m.mapped;
    i.load_ms = m.load_ms;
    write_out(out, out_size, kModelInfoV1, i);
  });
}

const char* hark_context_describe(const hark_context* ctx) {
  const char* s = nullptr;
  guarded("hark_context_describe", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(ctx, Kind::Context, "ctx");
    s = ctx->describe.c_str();
  });
  return s;
}

hark_status hark_context_device(const hark_context* ctx, hark_device_info* out, size_t out_size) {
  return guarded("hark_context_device", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(ctx, Kind::Context, "ctx");
    write_out(out, out_size, kDeviceInfoV1, device_info(ctx->impl->device()));
  });
}

// ---- jobs ----

int hark_job_new(void) {
  int id = 0;
  guarded("hark_job_new", HARK_ERR_INTERNAL, [&] { id = hark::jobs::create()->id(); });
  return id;
}

hark_status hark_job_abort(int job_id) {
  return guarded("hark_job_abort", HARK_ERR_INTERNAL, [&] {
    require(hark::jobs::abort(job_id), "job_id " + std::to_string(job_id) + " is not a registered job");
  });
}

hark_status hark_job_remove(int job_id) {
  return guarded("hark_job_remove", HARK_ERR_INTERNAL, [&] {
    require(hark::jobs::remove(job_id), "job_id " + std::to_string(job_id) + " is not a registered job");
  });
}

void hark_job_abort_all(void) {
  guarded("hark_job_abort_all", HARK_ERR_INTERNAL, [] { hark::jobs::abort_all(); });
}

int hark_job_is_running(int job_id) {
  int on = -1;
  guarded("hark_job_is_running", HARK_ERR_INTERNAL, [&] {
    const std::shared_ptr<hark::Job> job = hark::jobs::get(job_id);
    require(job != nullptr, "job_id " + std::to_string(job_id) + " is not a registered job");
    on = job->running() ? 1 : 0;
  });
  return on;
}

int hark_is_transcribing(void) {
  int on = 0;
  guarded("hark_is_transcribing", HARK_ERR_INTERNAL, [&] { on = hark::jobs::is_transcribing() ? 1 : 0; });
  return on;
}

// ---- transcription ----

hark_status hark_transcribe_params_init(hark_transcribe_params* params, size_t params_size) {
  return guarded("hark_transcribe_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kTranscribeParamsV1, transcribe_defaults(), "hark_transcribe_params");
  });
}

hark_status hark_transcribe(hark_context* ctx, const float* samples, size_t n_samples,
                            const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on("hark_transcribe", ctx, Kind::Context, "ctx", params, out,
                       [&](std::vector<float>&) { return std::pair(samples, n_samples); });
}

hark_status hark_transcribe_with_state(hark_state* state, const float* samples, size_t n_samples,
                                       const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on("hark_transcribe_with_state", state, Kind::State, "state", params, out,
                       [&](std::vector<float>&) { return std::pair(samples, n_samples); });
}

hark_status hark_transcribe_file(hark_context* ctx, const char* path, const hark_transcribe_params* params,
                                 hark_result** out) {
  return transcribe_on_context("hark_transcribe_file", ctx, params, out, [&] {
    check_path(path, "path");
    return hark::load_audio(path);
  });
}

hark_status hark_transcribe_encoded(hark_context* ctx, const void* data, size_t size,
                                    const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on_context("hark_transcribe_encoded", ctx, params, out, [&] {
    require(data != nullptr, "data is NULL");
    require(size > 0, "size is 0: no data");
    return hark::decode_audio(data, size);
  });
}

hark_status hark_transcribe_data_uri(hark_context* ctx, const char* uri, const hark_transcribe_params* params,
                                     hark_result** out) {
  return transcribe_on_context("hark_transcribe_data_uri", ctx, params, out, [&] {
    require(uri != nullptr, "uri is NULL");
    return hark::decode_audio_data_uri(uri);
  });
}

hark_status hark_transcribe_pcm16(hark_context* ctx, const int16_t* samples, size_t n_values, int sample_rate,
                                  int channels, const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on_context("hark_transcribe_pcm16", ctx, params, out, [&] {
    check_pcm(samples, n_values, sample_rate, channels);
    return hark::pcm16_to_mono16k(samples, n_values, sample_rate, channels);
  });
}

// ---- states ----

hark_status hark_state_new(hark_context* ctx, int n_threads, hark_state** out) {
  return guarded("hark_state_new", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    require(n_threads >= 0, "n_threads must be >= 0 (0: the context's), got " + std::to_string(n_threads));
    auto state = std::make_unique<hark_state>();
    state->impl = ctx->impl->new_state(n_threads);
    handles().add(state.get(), Kind::State);
    *out = state.release();
  });
}

hark_status hark_state_free(hark_state* state) {
  return guarded("hark_state_free", HARK_ERR_INTERNAL, [&] {
    {
      const auto lock = read_lock(state, Kind::State, "state");
      std::lock_guard<std::mutex> guard(state->activity.mu);
      // Ending the stream waits for its thread, which runs its callback.
      require(!state->lent() || std::find(t_in_callback_of.begin(), t_in_callback_of.end(),
                                                    state->lent_to_handle) == t_in_callback_of.end(),
              "state is lent to the stream whose callback this call comes from; free it after hark_stream_free");
    }
    close_and_wait(state, Kind::State, "state");
    // No stream can be lent the state from now on (it is out of the registry, and a creation in
    // progress held a lease that close_and_wait waited for): end the one it is lent to, as
    // hark_job_abort would, and wait until its thread no longer touches the state.
    std::shared_ptr<hark::RealtimeTranscriber> stream;
    {
      std::lock_guard<std::mutex> guard(state->activity.mu);
      stream = state->lent_to.lock();
    }
    if (stream) {
      hark::jobs::abort(stream->job_id());
      stream->wait();
    }
    delete state;
  });
}

hark_status hark_state_bytes(const hark_state* state, size_t* out) {
  return guarded("hark_state_bytes", HARK_ERR_INTERNAL, [&] {
    require(out != nullptr, "out is NULL");
    const auto lock = read_lock(state, Kind::State, "state");
    *out = state->impl->bytes();
  });
}

// ---- audio ----

hark_status hark_audio_load_file(const char* path, float** out, size_t* n_out) {
  return audio_call("hark_audio_load_file", out, n_out, [&] {
    check_path(path, "path");
    return hark::load_audio(path);
  });
}

hark_status hark_audio_decode(const void* data, size_t size, float** out, size_t* n_out) {
  return audio_call("hark_audio_decode", out, n_out, [&] {
    require(data != nullptr, "data is NULL");
    require(size > 0, "size is 0: no data");
    return hark::decode_audio(data, size);
  });
}

hark_status hark_audio_decode_data_uri(const char* uri, float** out, size_t* n_out) {
  return audio_call("hark_audio_decode_data_uri", out, n_out, [&] {
    require(uri != nullptr, "uri is NULL");
    return hark::decode_audio_data_uri(uri);
  });
}

hark_status hark_audio_pcm16_to_mono16k(const int16_t* samples, size_t n_values, int sample_rate, int channels,
                                        float** out, size_t* n_out) {
  return audio_call("hark_audio_pcm16_to_mono16k", out, n_out, [&] {
    check_pcm(samples, n_values, sample_rate, channels);
    return hark::pcm16_to_mono16k(samples, n_values, sample_rate, channels);
  });
}

hark_status hark_audio_pcm_f32_to_mono16k(const float* samples, size_t n_values, int sample_rate, int channels,
                                          float** out, size_t* n_out) {
  return audio_call("hark_audio_pcm_f32_to_mono16k", out, n_out, [&] {
    check_pcm(samples, n_values, sample_rate, channels);
    return hark::pcm_f32_to_mono16k(samples, n_values, sample_rate, channels);
  });
}

hark_status hark_audio_free(float* samples) {
  return guarded("hark_audio_free", HARK_ERR_INTERNAL, [&] {
    if (!handles().remove(samples, Kind::Samples)) bad_handle(samples, Kind::Samples, "samples");
    delete[] samples;
  });
}

// ---- results ----

hark_status hark_result_free(hark_result* result) {
  return guarded("hark_result_free", HARK_ERR_INTERNAL, [&] {
    {
      std::unique_lock<std::shared_mutex> lock(handles().mutex());
      if (handles().is(result, Kind::BorrowedResult))
        raise(HARK_ERR_INVALID_ARGUMENT, "result is the one a new-segments callback was given; the library frees it");
      if (!handles().remove_locked(result, Kind::Result)) bad_handle(result, Kind::Result, "result");
    }
    delete result;
  });
}

int hark_result_job_id(const hark_result* result) {
  return get("hark_result_job_id", result, -1, [](const hark_result& r) { return r.t.job_id; });
}

int hark_result_aborted(const hark_result* result) {
  return get("hark_result_aborted", result, -1, [](const hark_result& r) { return r.t.aborted ? 1 : 0; });
}

const char* hark_result_language(const hark_result* result) {
  return get("hark_result_language", result, static_cast<const char*>(nullptr),
             [](const hark_result& r) { return r.t.language.c_str(); });
}

const char* hark_result_text(const hark_result* result) {
  return get("hark_result_text", result, static_cast<const char*>(nullptr),
             [](const hark_result& r) { return r.text.c_str(); });
}

int hark_result_n_segments(const hark_result* result) {
  return get("hark_result_n_segments", result, -1,
             [](const hark_result& r) { return static_cast<int>(r.t.segments.size()); });
}

int64_t hark_result_segment_t0(const hark_result* result, int i) {
  return get("hark_result_segment_t0", result, int64_t{-1}, [i](const hark_result& r) { return segment(r, i).t0; });
}

int64_t hark_result_segment_t1(const hark_result* result, int i) {
  return get("hark_result_segment_t1", result, int64_t{-1}, [i](const hark_result& r) { return segment(r, i).t1; });
}

const char* hark_result_segment_text(const hark_result* result, int i) {
  return get("hark_result_segment_text", result, static_cast<const char*>(nullptr),
             [i](const hark_result& r) { return segment(r, i).text.c_str(); });
}

int hark_result_segment_n_tokens(const hark_result* result, int i) {
  return get("hark_result_segment_n_tokens", result, -1,
             [i](const hark_result& r) { return static_cast<int>(segment(r, i).tokens.size()); });
}

hark_status hark_result_token(const hark_result* result, int i, int j, hark_token_data* out, size_t out_size) {
  return guarded("hark_result_token", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::TokenData& t = segment_item(segment(*result, i).tokens, i, j, "token");
    hark_token_data d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.id = t.id;
    d.text = t.text.c_str();
    d.p = t.p;
    d.t0 = t.t0;
    d.t1 = t.t1;
    d.logp = t.logp;
    write_out(out, out_size, kTokenDataV1, d);
  });
}

int hark_result_segment_n_words(const hark_result* result, int i) {
  return get("hark_result_segment_n_words", result, -1,
             [i](const hark_result& r) { return static_cast<int>(segment(r, i).words.size()); });
}

hark_status hark_result_word(const hark_result* result, int i, int j, hark_word* out, size_t out_size) {
  return guarded("hark_result_word", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::Word& w = segment_item(segment(*result, i).words, i, j, "word");
    hark_word d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.text = w.text.c_str();
    d.t0 = w.t0;
    d.t1 = w.t1;
    d.p = w.p;
    write_out(out, out_size, kWordV1, d);
  });
}

hark_status hark_result_segment_decoding(const hark_result* result, int i, hark_segment_decoding* out,
                                         size_t out_size) {
  return guarded("hark_result_segment_decoding", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::Segment& s = segment(*result, i);
    hark_segment_decoding d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.temperature = s.temperature;
    d.avg_logprob = s.avg_logprob;
    d.compression_ratio = s.compression_ratio;
    d.no_speech_prob = s.no_speech_prob;
    write_out(out, out_size, kSegmentDecodingV1, d);
  });
}

int hark_result_segment_speaker_turn_next(const hark_result* result, int i) {
  return get("hark_result_segment_speaker_turn_next", result, -1,
             [i](const hark_result& r) { return segment(r, i).speaker_turn_next ? 1 : 0; });
}

float hark_result_language_prob(const hark_result* result) {
  return get("hark_result_language_prob", result, -1.0f, [](const hark_result& r) { return r.t.language_prob; });
}

int hark_result_n_fallback_windows(const hark_result* result) {
  return get("hark_result_n_fallback_windows", result, -1,
             [](const hark_result& r) { return r.t.n_fallback_windows; });
}

int hark_result_n_windows(const hark_result* result) {
  return get("hark_result_n_windows", result, -1,
             [](const hark_result& r) { return static_cast<int>(r.t.windows.size()); });
}

hark_status hark_result_window(const hark_result* result, int i, hark_window* out, size_t out_size) {
  return guarded("hark_result_window", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const auto& w = result->t.windows;
    require(i >= 0 && static_cast<size_t>(i) < w.size(), "window index " + std::to_string(i) +
                                                             " is out of range (n_windows " +
                                                             std::to_string(w.size()) + ")");
    hark_window v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    v.t0 = w[static_cast<size_t>(i)].t0;
    v.t1 = w[static_cast<size_t>(i)].t1;
    v.skipped_as_silence = w[static_cast<size_t>(i)].skipped_as_silence;
    write_out(out, out_size, kWindowV1, v);
  });
}

hark_status hark_result_timings(const hark_result* result, hark_timings* out, size_t out_size) {
  return guarded("hark_result_timings", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::Timings& t = result->t.timings;
    hark_timings v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    v.load_ms = t.load_ms;
    v.mel_ms = t.mel_ms;
    v.encode_ms = t.encode_ms;
    v.decode_ms = t.decode_ms;
    v.total_ms = t.total_ms;
    v.n_windows = t.n_windows;
    v.n_decode_tokens = t.n_decode_tokens;
    v.audio_seconds = t.audio_seconds;
    v.real_time_factor = t.real_time_factor();
    v.vad_ms = t.vad_ms;
    v.n_threads = t.n_threads;
    write_out(out, out_size, kTimingsV1, v);
  });
}

const char* hark_result_format(const hark_result* result, hark_format format) {
  const char* s = nullptr;
  guarded("hark_result_format", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const int f = enum_value(format);
    require(f >= HARK_FORMAT_TXT && f <= HARK_FORMAT_LRC, "format " + std::to_string(f) + " is not a hark_format (0..5)");
    hark_result& r = const_cast<hark_result&>(*result);  // only the lazily made strings change
    std::lock_guard<std::mutex> fl(r.format_mu);
    if (!r.formatted[f]) {
      switch (f) {
        case HARK_FORMAT_TXT: r.formats[f] = hark::to_txt(r.t); break;
        case HARK_FORMAT_SRT: r.formats[f] = hark::to_srt(r.t); break;
        case HARK_FORMAT_VTT: r.formats[f] = hark::to_vtt(r.t); break;
        case HARK_FORMAT_JSON: r.formats[f] = hark::to_json(r.t); break;
        case HARK_FORMAT_CSV: r.formats[f] = hark::to_csv(r.t); break;
        case HARK_FORMAT_LRC: r.formats[f] = hark::to_lrc(r.t); break;
      }
      r.formatted[f] = true;
    }
    s = r.formats[f].c_str();
  });
  return s;
}

hark_status hark_format_timestamp(int64_t t, bool comma, char* buf, size_t buf_size) {
  return guarded("hark_format_timestamp", HARK_ERR_INTERNAL, [&] {
    require(buf != nullptr, "buf is NULL");
    require(t >= 0, "t must be >= 0, got " + std::to_string(t));
    const std::string s = hark::format_timestamp(t, comma);
    require(buf_size > s.size(), "buf_size " + std::to_string(buf_size) + " is too small: '" + s + "' needs " +
                                     std::to_string(s.size() + 1));
    std::memcpy(buf, s.c_str(), s.size() + 1);
  });
}

// ---- bench ----

hark_status hark_bench(hark_context* ctx, int n_threads, hark_bench_result* out, size_t out_size) {
  return guarded("hark_bench", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    require(n_threads >= 0, "n_threads must be >= 0 (0: the context's), got " + std::to_string(n_threads));
    write_out(out, out_size, kBenchResultV1, hark_bench_result{});  // checks out before the long run
    const hark::BenchResult b = ctx->impl->bench(n_threads);
    hark_bench_result v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    std::snprintf(v.config, sizeof v.config, "%s", b.config.c_str());
    v.n_threads = b.n_threads;
    v.encode_ms = b.encode_ms;
    v.decode_ms = b.decode_ms;
    v.batch_ms = b.batch_ms;
    v.prompt_ms = b.prompt_ms;
    write_out(out, out_size, kBenchResultV1, v);
  });
}

hark_status hark_detect_language(hark_context* ctx, const float* samples, size_t n_samples, int64_t offset_ms,
                                 int n_threads, int* lang_id, float* probability, float* probs, int n_probs) {
  return guarded("hark_detect_language", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    require(lang_id != nullptr, "lang_id is NULL");
    require(n_threads >= 0, "n_threads must be >= 0 (0: the context's), got " + std::to_string(n_threads));
    require(probs != nullptr || n_probs == 0, "probs is NULL but n_probs is " + std::to_string(n_probs));
    require(n_probs >= 0, "n_probs must be >= 0, got " + std::to_string(n_probs));
    check_samples(samples, n_samples);
    hark::DetectLanguageParams dp;
    dp.offset_ms = offset_ms;
    dp.n_threads = n_threads;
    const hark::LanguageDetection d = ctx->impl->detect_language(std::span<const float>(samples, n_samples), dp);
    *lang_id = hark::language_id(d.language);
    if (probability) *probability = d.probability;
    for (int i = 0; i < n_probs; ++i)
      probs[i] = static_cast<size_t>(i) < d.probs.size() ? d.probs[static_cast<size_t>(i)] : 0.0f;
  });
}

// ---- voice activity detection -------------------------------------------------------------

}  // extern "C"

struct hark_vad_context {
  std::shared_ptr<hark::VadModel> impl;
  hark::capi::Activity activity;
};

struct hark_vad_stream {
  std::unique_ptr<hark::VadStream> impl;
  hark::capi::Activity activity;
};

struct hark_vad_result {
  hark::VadResult r;
};

namespace {

constexpr size_t kVadContextParamsV1 = offsetof(hark_vad_context_params, device) + sizeof(const char*);
constexpr size_t kVadParamsV1 = offsetof(hark_vad_params, max_speech_duration_s) + sizeof(double);
constexpr size_t kEnergyVadParamsV1 = offsetof(hark_energy_vad_params, freq_thold) + sizeof(double);
constexpr size_t kEnergyVadResultV1 = offsetof(hark_energy_vad_result, energy_last) + sizeof(float);
static_assert(sizeof(hark_vad_context_params) == kVadContextParamsV1, "must end on a pointer-sized field");
static_assert(sizeof(hark_vad_params) == kVadParamsV1, "must end on a pointer-sized field");
static_assert(sizeof(hark_energy_vad_params) == kEnergyVadParamsV1, "must end on a pointer-sized field");

hark_vad_context_params vad_context_defaults() {
  hark_vad_context_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.n_threads = hark::VadModelParams{}.n_threads;
  p.device = nullptr;
  return p;
}

hark_vad_params vad_defaults() {
  const hark::VadOptions o;
  hark_vad_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.threshold = o.threshold;
  p.min_speech_duration_ms = o.min_speech_duration_ms;
  p.min_silence_duration_ms = o.min_silence_duration_ms;
  p.speech_pad_ms = o.speech_pad_ms;
  p.samples_overlap = o.samples_overlap;
  p.max_speech_duration_s = o.max_speech_duration_s;
  return p;
}

hark_energy_vad_params energy_vad_defaults() {
  const hark::EnergyVadOptions o;
  hark_energy_vad_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.vad_ms = o.vad_ms;
  p.last_ms = o.last_ms;
  p.vad_thold = o.vad_thold;
  p.freq_thold = o.freq_thold;
  return p;
}

void require_vad_samples(const float* samples, size_t n) {
  require(samples != nullptr || n == 0, "samples is NULL but n_samples is " + std::to_string(n));
}

std::span<const float> samples_span(const float* samples, size_t n) {
  return n == 0 ? std::span<const float>() : std::span<const float>(samples, n);
}

template <typename T, typename F>
T get_vad(const char* fn, const hark_vad_result* r, T sentinel, F&& f) noexcept {
  T v = sentinel;
  guarded(fn, HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(r, Kind::VadResult, "result");
    v = f(r->r);
  });
  return v;
}

const hark::VadSegment& vad_segment(const hark::VadResult& r, int i) {
  require(i >= 0 && static_cast<size_t>(i) < r.segments.size(),
          "segment index " + std::to_string(i) + " out of range (0.." + std::to_string(r.segments.size()) + ")");
  return r.segments[static_cast<size_t>(i)];
}

}  // namespace

extern "C" {

hark_status hark_vad_context_params_init(hark_vad_context_params* params, size_t params_size) {
  return guarded("hark_vad_context_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kVadContextParamsV1, vad_context_defaults(), "hark_vad_context_params");
  });
}

hark_status hark_vad_context_load(const char* model_path, const hark_vad_context_params* params,
                                  hark_vad_context** out) {
  return guarded("hark_vad_context_load", HARK_ERR_MODEL, [&] {
    require_out(out);
    const hark_vad_context_params p =
        read_params(params, kVadContextParamsV1, vad_context_defaults(), "hark_vad_context_default_params");
    require(p.n_threads >= 1, "params->n_threads must be >= 1, got " + std::to_string(p.n_threads));
    hark::VadModelParams mp;
    mp.n_threads = p.n_threads;
    mp.upstream_context = p.upstream_context;
    if (p.device) mp.device = p.device;
    require(mp.device.empty() || mp.device == "cpu" || mp.device == "cpu-ref",
            "params->device: unknown device '" + mp.device + "' (the VAD runs on cpu or cpu-ref)");
    check_path(model_path, "model_path");
    auto ctx = std::make_unique<hark_vad_context>();
    ctx->impl = hark::VadModel::load(model_path, mp);  // hark::Error: HARK_ERR_MODEL
    handles().add(ctx.get(), Kind::VadContext);
    *out = ctx.release();
  });
}

hark_status hark_vad_context_free(hark_vad_context* ctx) {
  return guarded("hark_vad_context_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(ctx, Kind::VadContext, "ctx");
    delete ctx;
  });
}

hark_status hark_vad_params_init(hark_vad_params* params, size_t params_size) {
  return guarded("hark_vad_params_init", HARK_ERR_INTERNAL,
                 [&] { init_params(params, params_size, kVadParamsV1, vad_defaults(), "hark_vad_params"); });
}

hark_status hark_vad_detect_speech(hark_vad_context* ctx, const float* samples, size_t n_samples,
                                   const hark_vad_params* params, hark_vad_result** out) {
  return guarded("hark_vad_detect_speech", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::VadContext, "ctx", l);
    require_vad_samples(samples, n_samples);
    const hark_vad_params p = read_params(params, kVadParamsV1, vad_defaults(), "hark_vad_default_params");
    require(p.max_speech_duration_s > 0.0, "params->max_speech_duration_s must be > 0");
    const hark::VadOptions o = vad_options(p.threshold, p.min_speech_duration_ms, p.min_silence_duration_ms,
                                           p.speech_pad_ms, p.samples_overlap, p.max_speech_duration_s);
    auto r = std::make_unique<hark_vad_result>();
    r->r = phase(HARK_ERR_INVALID_ARGUMENT, [&] { return ctx->impl->detect_speech(samples_span(samples, n_samples), o); });
    handles().add(r.get(), Kind::VadResult);
    *out = r.release();
  });
}

hark_status hark_vad_result_free(hark_vad_result* result) {
  return guarded("hark_vad_result_free", HARK_ERR_INTERNAL, [&] {
    if (!handles().remove(result, Kind::VadResult)) bad_handle(result, Kind::VadResult, "result");
    delete result;
  });
}

int hark_vad_result_n_segments(const hark_vad_result* result) {
  return get_vad("hark_vad_result_n_segments", result, -1,
                 [](const hark::VadResult& r) { return static_cast<int>(r.segments.size()); });
}

int64_t hark_vad_result_segment_t0(const hark_vad_result* result, int i) {
  return get_vad("hark_vad_result_segment_t0", result, int64_t{-1},
                 [i](const hark::VadResult& r) { return vad_segment(r, i).t0; });
}

int64_t hark_vad_result_segment_t1(const hark_vad_result* result, int i) {
  return get_vad("hark_vad_result_segment_t1", result, int64_t{-1},
                 [i](const hark::VadResult& r) { return vad_segment(r, i).t1; });
}

int hark_vad_result_n_probs(const hark_vad_result* result) {
  return get_vad("hark_vad_result_n_probs", result, -1,
                 [](const hark::VadResult& r) { return static_cast<int>(r.probs.size()); });
}

const float* hark_vad_result_probs(const hark_vad_result* result) {
  return get_vad("hark_vad_result_probs", result, static_cast<const float*>(nullptr),
                 [](const hark::VadResult& r) { return r.probs.data(); });
}

hark_status hark_vad_stream_new(hark_vad_context* ctx, hark_vad_stream** out) {
  return guarded("hark_vad_stream_new", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::VadContext, "ctx", l);
    auto s = std::make_unique<hark_vad_stream>();
    s->impl = ctx->impl->stream();
    handles().add(s.get(), Kind::VadStream);
    *out = s.release();
  });
}

hark_status hark_vad_stream_free(hark_vad_stream* stream) {
  return guarded("hark_vad_stream_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(stream, Kind::VadStream, "stream");
    delete stream;
  });
}

hark_status hark_vad_stream_push(hark_vad_stream* stream, const float* samples, size_t n_samples, float* probs,
                                 size_t probs_cap, size_t* n_probs) {
  return guarded("hark_vad_stream_push", HARK_ERR_FAILED, [&] {
    require(n_probs != nullptr, "n_probs is NULL");
    *n_probs = 0;
    std::optional<Lease> l;
    lease(stream, Kind::VadStream, "stream", l);
    require_vad_samples(samples, n_samples);
    const size_t w = static_cast<size_t>(stream->impl->frame_samples());
    const size_t completes = (stream->impl->pending_samples() + n_samples) / w;
    require(probs != nullptr || completes == 0, "probs is NULL but this chunk completes " +
                                                    std::to_string(completes) + " frames");
    require(probs_cap >= completes, "probs_cap " + std::to_string(probs_cap) + " is too small: this chunk completes " +
                                        std::to_string(completes) + " frames");
    const std::vector<float> p =
        phase(HARK_ERR_INVALID_ARGUMENT, [&] { return stream->impl->push(samples_span(samples, n_samples)); });
    std::copy(p.begin(), p.end(), probs);
    *n_probs = p.size();
  });
}

hark_status hark_vad_stream_flush(hark_vad_stream* stream, float* prob, bool* ran) {
  return guarded("hark_vad_stream_flush", HARK_ERR_FAILED, [&] {
    require(prob != nullptr && ran != nullptr, "prob and ran must not be NULL");
    *ran = false;
    std::optional<Lease> l;
    lease(stream, Kind::VadStream, "stream", l);
    const std::vector<float> p = stream->impl->flush();
    if (!p.empty()) {
      *prob = p[0];
      *ran = true;
    }
  });
}

hark_status hark_vad_stream_reset(hark_vad_stream* stream) {
  return guarded("hark_vad_stream_reset", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::VadStream, "stream", l);
    stream->impl->reset();
  });
}

hark_status hark_energy_vad_params_init(hark_energy_vad_params* params, size_t params_size) {
  return guarded("hark_energy_vad_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kEnergyVadParamsV1, energy_vad_defaults(), "hark_energy_vad_params");
  });
}

hark_status hark_energy_vad(const float* samples, size_t n_samples, const hark_energy_vad_params* params,
                            hark_energy_vad_result* out, size_t out_size) {
  return guarded("hark_energy_vad", HARK_ERR_INVALID_ARGUMENT, [&] {
    require_vad_samples(samples, n_samples);
    const hark_energy_vad_params p =
        read_params(params, kEnergyVadParamsV1, energy_vad_defaults(), "hark_energy_vad_default_params");
    hark::EnergyVadOptions o;
    o.vad_ms = p.vad_ms;
    o.last_ms = p.last_ms;
    o.vad_thold = p.vad_thold;
    o.freq_thold = static_cast<float>(p.freq_thold);
    const hark::EnergyVadResult r = hark::energy_vad(samples_span(samples, n_samples), o);
    hark_energy_vad_result v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    v.detected = r.detected;
    v.energy_all = r.energy_all;
    v.energy_last = r.energy_last;
    write_out(out, out_size, kEnergyVadResultV1, v);
  });
}

}  // extern "C"

// ---- realtime streams ------------------------------------------------------------------------

struct hark_stream {
  std::shared_ptr<hark::PushSource> source;
  // Shared with the state it runs on, if lent one (hark_state::lent_to), so that freeing the state
  // can end the stream while hark_stream_free runs at the same time.
  std::shared_ptr<hark::RealtimeTranscriber> impl;
  hark_stream_event_callback on_event = nullptr;
  void* user_data = nullptr;
  int channels = 1;
  hark::capi::Activity activity;
};

namespace {

constexpr size_t kStreamParamsV1 = offsetof(hark_stream_params, user_data) + sizeof(void*);
// sample_rate and channels, two ints after the pointer, fill 8 bytes: still no tail padding.
static_assert(sizeof(hark_stream_params) == offsetof(hark_stream_params, channels) + sizeof(int),
              "hark_stream_params must end without tail padding");

hark_stream_params stream_defaults() {
  const hark::RealtimeOptions o;
  hark_stream_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.audio_sec = o.audio_sec;
  p.audio_slice_sec = o.audio_slice_sec;
  p.audio_min_sec = o.audio_min_sec;
  p.partial_sec = o.partial_sec;
  p.use_vad = o.use_vad;
  p.live = true;
  p.vad_ms = o.vad_ms;
  p.vad_thold = o.vad_thold;
  p.vad_freq_thold = o.vad_freq_thold;
  p.language = "en";
  p.sample_rate = hark::kSampleRate;
  p.channels = 1;
  return p;
}

// The C view of an event, on the stream's thread; its strings live until the callback returns.
void deliver(const hark_stream* s, const hark::RealtimeEvent& e) {
  if (!s->on_event) return;
  const std::string json = hark::to_json(e);
  bool final = false;
  for (const hark::RealtimeSlice& sl : e.slices)
    if (sl.index == e.slice_index) final = sl.final;
  hark_stream_event c;
  std::memset(static_cast<void*>(&c), 0, sizeof c);
  c.job_id = e.job_id;
  c.code = e.code;
  c.error = e.error.c_str();
  c.is_capturing = e.is_capturing;
  c.is_stopped_by_action = e.is_stopped_by_action;
  c.slice_final = final;
  c.slice_index = e.slice_index;
  c.result = e.data.result.c_str();
  c.process_time_ms = e.process_time_ms;
  c.recording_time_ms = e.recording_time_ms;
  c.dropped_samples = e.dropped_samples;
  c.json = json.c_str();
  CallbackScope scope(s);
  s->on_event(&c, s->user_data);
}

}  // namespace

extern "C" {

hark_status hark_stream_params_init(hark_stream_params* params, size_t params_size) {
  return guarded("hark_stream_params_init", HARK_ERR_INTERNAL,
                 [&] { init_params(params, params_size, kStreamParamsV1, stream_defaults(), "hark_stream_params"); });
}

}  // extern "C"

namespace {

// What both ways of creating a stream share: params read and checked, the push source made, the
// transcriber started by `start(handle, source, options, on_event)` and the handle registered.
template <typename Start>
void create_stream(const hark_stream_params* params, hark_stream** out, Start&& start) {
  const hark_stream_params p = read_params(params, kStreamParamsV1, stream_defaults(), "hark_stream_default_params");
  hark::RealtimeOptions o;
  o.audio_sec = p.audio_sec;
  o.audio_slice_sec = p.audio_slice_sec;
  o.audio_min_sec = p.audio_min_sec;
  o.partial_sec = p.partial_sec;
  if (p.audio_output_path) o.audio_output_path = p.audio_output_path;
  o.use_vad = p.use_vad;
  o.vad_ms = p.vad_ms;
  o.vad_thold = p.vad_thold;
  o.vad_freq_thold = p.vad_freq_thold;
  if (p.vad_model_path) o.vad_model_path = p.vad_model_path;
  o.n_threads = p.n_threads;
  require(p.sample_rate >= 1000 && p.sample_rate <= 768000,
          "params->sample_rate " + std::to_string(p.sample_rate) + " Hz is out of range (1000..768000)");
  require(p.channels >= 1 && p.channels <= 256,
          "params->channels " + std::to_string(p.channels) + " is out of range (1..256)");
  require(p.n_threads >= 0, "params->n_threads must be >= 0 (0: the context's or state's), got " +
                                std::to_string(p.n_threads));
  auto tp = std::make_shared<hark::TranscribeParams>();
  if (p.language) tp->language = p.language;
  o.transcribe = tp;
  auto s = std::make_unique<hark_stream>();
  s->on_event = p.on_event;
  s->user_data = p.user_data;
  s->channels = p.channels;
  s->source = hark::open_push_source(p.live, p.sample_rate, p.channels);
  const hark_stream* raw = s.get();
  s->impl = start(raw, s->source, o, [raw](const hark::RealtimeEvent& e) { deliver(raw, e); });
  handles().add(s.get(), Kind::Stream);
  *out = s.release();
}

}  // namespace

extern "C" {

hark_status hark_stream_create(hark_context* ctx, const hark_stream_params* params, hark_stream** out) {
  return guarded("hark_stream_create", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    create_stream(params, out, [&](const hark_stream*, auto source, const hark::RealtimeOptions& o, auto on_event) {
      return hark::RealtimeTranscriber::start(*ctx->impl, std::move(source), o, std::move(on_event));
    });
  });
}

hark_status hark_stream_create_on_state(hark_state* state, const hark_stream_params* params, hark_stream** out) {
  return guarded("hark_stream_create_on_state", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(state, Kind::State, "state", l);
    // The state is marked lent before the transcriber starts, so that no transcription and no
    // second stream slips in meanwhile (not under the mutex: the stream's first event may call back).
    {
      std::lock_guard<std::mutex> guard(state->activity.mu);
      require(!state->lent(),
              "state is already lent to a stream (hark_stream_create_on_state); free that stream first");
      require(state->activity.calls == 1, "state is running a transcription; a stream needs the state to itself");
      state->lending = true;
    }
    struct Unmark {
      hark_state* st;
      ~Unmark() {
        std::lock_guard<std::mutex> guard(st->activity.mu);
        st->lending = false;
      }
    } unmark{state};
    create_stream(params, out, [&](const hark_stream* handle, auto source, const hark::RealtimeOptions& o,
                                   auto on_event) {
      {
        std::lock_guard<std::mutex> guard(state->activity.mu);
        state->lent_to_handle = handle;  // before its callback can run
      }
      std::shared_ptr<hark::RealtimeTranscriber> rt =
          hark::RealtimeTranscriber::start(*state->impl, std::move(source), o, std::move(on_event));
      std::lock_guard<std::mutex> guard(state->activity.mu);
      state->lent_to = rt;
      return rt;
    });
  });
}

hark_status hark_stream_push(hark_stream* stream, const float* samples, size_t n_samples) {
  return guarded("hark_stream_push", HARK_ERR_INVALID_ARGUMENT, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    require(samples != nullptr || n_samples == 0, "samples is NULL");
    require(n_samples % size_t(stream->channels) == 0,
            "n_samples " + std::to_string(n_samples) + " is not a whole number of frames of " +
                std::to_string(stream->channels) + " channels");
    if (n_samples) stream->source->push(std::span<const float>(samples, n_samples));
  });
}

hark_status hark_stream_stop(hark_stream* stream) {
  return guarded("hark_stream_stop", HARK_ERR_INTERNAL, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    stream->impl->stop();
  });
}

hark_status hark_stream_wait(hark_stream* stream) {
  return guarded("hark_stream_wait", HARK_ERR_INTERNAL, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    require(std::find(t_in_callback_of.begin(), t_in_callback_of.end(), static_cast<const void*>(stream)) ==
                t_in_callback_of.end(),
            "hark_stream_wait from the stream's own callback would wait for itself");
    stream->impl->wait();
  });
}

hark_status hark_stream_free(hark_stream* stream) {
  return guarded("hark_stream_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(stream, Kind::Stream, "stream");
    stream->impl.reset();  // stops and waits for the last event
    delete stream;
  });
}

}  // extern "C"

// ---- model conversion ----

namespace {
// The type names as static strings, for hark_quantize_result.
const char* static_type_name(const std::string& name) {
  for (const char* t : {"f32", "f16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
    if (name == t) return t;
  return "unknown";
}
}  // namespace

hark_status hark_quantize_model(const char* input_path, const char* output_path, const char* type,
                                hark_quantize_progress_callback progress, void* user_data, hark_quantize_result* out,
                                size_t out_size) {
  return guarded("hark_quantize_model", HARK_ERR_MODEL, [&] {
    require(input_path != nullptr && *input_path != '\0', "input_path is NULL or empty");
    require(output_path != nullptr && *output_path != '\0', "output_path is NULL or empty");
    require(type != nullptr, "type is NULL");
    const std::string t = type;
    require(std::string(static_type_name(t)) == t,
            "type \"" + t + "\" is not one of f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0");
    if (out) require(out_size >= kQuantizeResultV1, "out_size " + std::to_string(out_size) + " is smaller than the struct (" + std::to_string(kQuantizeResultV1) + "); pass sizeof *out");
    hark::QuantizeProgress cb;
    if (progress) cb = [&](uint64_t done, uint64_t total) { progress(done, total, user_data); };
    const hark::QuantizeResult r = hark::quantize_model(input_path, output_path, t, cb);
    if (!out) return;
    hark_quantize_result c;
    std::memset(static_cast<void*>(&c), 0, sizeof c);
    c.from_type = static_type_name(r.from_type);
    c.to_type = static_type_name(r.to_type);
    c.input_bytes = r.input_bytes;
    c.output_bytes = r.output_bytes;
    c.n_tensors = r.n_tensors;
    c.n_converted = r.n_converted;
    c.n_kept_f16 = r.n_kept_f16;
    write_out(out, out_size, kQuantizeResultV1, c);
  });
}

// ---- models: registry, models folder, download (hark/hark_models.h) -------------------------

namespace {

constexpr size_t kModelEntryV1 = offsetof(hark_model_entry, sha1) + sizeof(const char*);
constexpr size_t kDownloadParamsV1 = offsetof(hark_download_params, abort_user_data) + sizeof(void*);
static_assert(sizeof(hark_download_params) == kDownloadParamsV1, "must end on a pointer-sized field");
constexpr size_t kDownloadResultV1 = offsetof(hark_download_result, bytes_resumed) + sizeof(uint64_t);

thread_local std::string t_model_path;  // hark_models_dir, hark_find_model, hark_download_model

hark_download_params download_defaults() {
  hark_download_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  const hark::DownloadOptions d;
  p.connect_timeout_s = d.connect_timeout_s;
  p.low_speed_time_s = d.low_speed_time_s;
  p.low_speed_bytes = d.low_speed_bytes;
  return p;
}

std::string str_or_empty(const char* s) { return s ? std::string(s) : std::string(); }

}  // namespace

extern "C" {

int hark_model_count(void) { return static_cast<int>(hark::model_registry().size()); }

hark_status hark_model_at(int i, hark_model_entry* out, size_t out_size) {
  return guarded("hark_model_at", HARK_ERR_FAILED, [&] {
    const auto& reg = hark::model_registry();
    require(i >= 0 && static_cast<size_t>(i) < reg.size(),
            "i " + std::to_string(i) + " is out of range (0.." + std::to_string(reg.size() - 1) + ")");
    const hark::ModelEntry& e = reg[static_cast<size_t>(i)];  // the registry lives as long as the process
    hark_model_entry v;
    v.name = e.name.c_str();
    v.file_name = e.file_name.c_str();
    v.url = e.url.c_str();
    v.size = e.size;
    v.disk = e.disk.c_str();
    v.sha1 = e.sha1.c_str();
    write_out(out, out_size, kModelEntryV1, v);
  });
}

const char* hark_models_dir(void) {
  const char* r = nullptr;
  guarded("hark_models_dir", HARK_ERR_FAILED, [&] {
    t_model_path = hark::models_dir();
    r = t_model_path.c_str();
  });
  return r;
}

hark_status hark_find_model(const char* name_or_path, const char* dir, const char** out_path) {
  return guarded("hark_find_model", HARK_ERR_IO, [&] {
    require(out_path != nullptr, "out_path is NULL");
    *out_path = nullptr;
    require(name_or_path != nullptr, "name_or_path is NULL");
    t_model_path = hark::find_model(name_or_path, str_or_empty(dir));
    *out_path = t_model_path.c_str();
  });
}

hark_status hark_download_params_init(hark_download_params* params, size_t params_size) {
  return guarded("hark_download_params_init", HARK_ERR_FAILED, [&] {
    init_params(params, params_size, kDownloadParamsV1, download_defaults(), "hark_download_params");
  });
}

hark_status hark_download_model(const char* name, const hark_download_params* params, const char** out_path,
                                hark_download_result* out, size_t out_size) {
  return guarded("hark_download_model", HARK_ERR_FAILED, [&] {
    if (out_path) *out_path = nullptr;
    require(name != nullptr, "name is NULL");
    require(hark::find_model_entry(name) != nullptr,
            std::string("unknown model '") + name + "' (hark_model_at lists the official ones)");
    if (out) require(out_size >= kDownloadResultV1, "out_size " + std::to_string(out_size) +
                                                        " is smaller than the struct; pass sizeof *out");
    const hark_download_params p = read_params(params, kDownloadParamsV1, download_defaults(),
                                               "hark_download_default_params");
    require(p.connect_timeout_s > 0, "params->connect_timeout_s must be > 0, got " + std::to_string(p.connect_timeout_s));
    require(p.low_speed_time_s >= 0, "params->low_speed_time_s must be >= 0, got " + std::to_string(p.low_speed_time_s));
    require(p.low_speed_bytes >= 1, "params->low_speed_bytes must be >= 1, got " + std::to_string(p.low_speed_bytes));
    const std::string sha1 = str_or_empty(p.expected_sha1);
    require(sha1.empty() || (sha1.size() == 40 && sha1.find_first_not_of("0123456789abcdef") == std::string::npos),
            "params->expected_sha1 must be 40 lower-case hex digits, got '" + sha1 + "'");
    hark::DownloadOptions d;
    d.dir = str_or_empty(p.dir);
    d.base_url = str_or_empty(p.base_url);
    d.expected_sha1 = sha1;
    d.expected_size = p.expected_size;
    d.force = p.force;
    d.connect_timeout_s = p.connect_timeout_s;
    d.low_speed_time_s = p.low_speed_time_s;
    d.low_speed_bytes = p.low_speed_bytes;
    if (p.progress_callback)
      d.on_progress = [&p](const hark::DownloadProgress& g) {
        if (g.waiting) return;  // no byte moved yet: another download of the file runs
        p.progress_callback(g.bytes_done, g.bytes_total, g.bytes_per_second, g.seconds_left, g.verifying,
                            p.progress_user_data);
      };
    if (p.abort_callback) d.should_abort = [&p] { return p.abort_callback(p.abort_user_data); };
    const hark::DownloadResult r = hark::download_model(name, d);
    t_model_path = r.path;
    if (out_path) *out_path = t_model_path.c_str();
    if (out) {
      hark_download_result v;
      std::memset(static_cast<void*>(&v), 0, sizeof v);
      v.downloaded = r.downloaded;
      v.verified = r.verified;
      v.bytes = r.bytes;
      v.bytes_resumed = r.bytes_resumed;
      v.verified_by_server = r.verified_with == "server's SHA-256";
      write_out(out, out_size, kDownloadResultV1, v);
    }
  });
}

}  // extern "C"
