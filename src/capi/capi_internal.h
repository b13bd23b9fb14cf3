// The C API (include/hark/hark.h) is a thin front end over the public C++ API and nothing else.
// What it adds is what C needs and C++ gives by other means: handles checked against a registry
// instead of smart pointers, status codes and a thread-local message instead of exceptions (every
// exception stops here), params structs that carry their size instead of default member
// initialisers, and a way for hark_context_free to stop and wait for the jobs a unique_ptr's
// destructor would simply have outlived. It is split by the sections of hark.h, a file each
// (context.cpp, transcribe.cpp, results.cpp, ...), each C params struct converted from and
// defaulted by its C++ options in the file of its section.
//
// This header is what every one of those files shares: the structs behind the handles, errors (guarded: every exception
// stops here and becomes a status and hark_last_error()), the handle registry's checks and the leases that let
// hark_*_free stop and wait for running calls, and the plumbing of structs that carry their size.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capi/handles.h"
#include "hark/hark.h"
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

namespace hark::capi {

// ---- errors ---------------------------------------------------------------------------------

inline thread_local std::string t_last_error;

// An error this layer finds itself (a bad argument or handle), with its status, or one of a
// phase of a call that reads data (phase()), with the code it had.
struct CallError {
  hark_status status;
  std::string message;
  hark::ErrorCode code = hark::ErrorCode::InvalidArgument;
};

[[noreturn]] inline void raise(hark_status status, std::string message,
                               hark::ErrorCode code = hark::ErrorCode::InvalidArgument) {
  throw CallError{status, std::move(message), code};
}

inline void require(bool ok, const std::string& message) {
  if (!ok) raise(HARK_ERR_INVALID_ARGUMENT, message);
}

inline hark_status set_error(hark_status status, const char* fn, const char* message) noexcept {
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
inline hark_status status_of(const hark::Error& e, hark_status data_status) {
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
inline thread_local const char* t_last_code = "";

// Runs body and turns whatever it throws into a status and hark_last_error(): a hark::Error by
// its code (status_of, with `data_status` for corrupt data), what this layer finds itself
// (CallError) by its own status.
template <typename F>
hark_status guarded(const char* fn, hark_status data_status, F&& body) noexcept {
  try {
    body();
    return HARK_OK;
  } catch (const CallError& e) {
    t_last_code = hark::error_code_name(e.code);
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

inline const char* kind_name(Kind k) {
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

[[noreturn]] inline void bad_handle(const void* p, Kind k, const char* arg) {
  if (!p) raise(HARK_ERR_BAD_HANDLE, std::string(arg) + " is NULL");
  char addr[32];
  std::snprintf(addr, sizeof addr, "%p", p);
  raise(HARK_ERR_BAD_HANDLE,
        std::string(arg) + " (" + addr + ") is not a live " + kind_name(k) + ": freed already, or never made by hark");
}

// The registry's shared lock, held while a short call reads the object: a concurrent free waits.
inline std::shared_lock<std::shared_mutex> read_lock(const void* p, Kind k, const char* arg) {
  std::shared_lock<std::shared_mutex> lock(handles().mutex());
  if (!handles().is(p, k)) bad_handle(p, k, arg);
  return lock;
}

inline std::shared_lock<std::shared_mutex> read_result(const hark_result* r, const char* arg = "result") {
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
inline thread_local std::vector<const void*> t_in_callback_of;

struct CallbackScope {
  explicit CallbackScope(const void* owner) { t_in_callback_of.push_back(owner); }
  ~CallbackScope() { t_in_callback_of.pop_back(); }
};

// Takes h out of the registry (later calls: bad handle), stops its jobs, waits for its calls.
template <typename H>
void close_and_wait(H* h, Kind k, const char* arg) {
  if (std::find(t_in_callback_of.begin(), t_in_callback_of.end(), static_cast<const void*>(h)) !=
      t_in_callback_of.end())
    raise(HARK_ERR_INVALID_ARGUMENT, std::string(arg) +
                                         " is running the job whose callback this call comes from; "
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
static_assert(sizeof(hark_transcribe_params) == offsetof(hark_transcribe_params, n_vad_speech) + sizeof(int64_t) &&
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

// The C structs' VAD options (hark_vad_params, hark_transcribe_params' vad_* fields) as the C++
// ones; the C maximum is a double, so a value beyond float's range means "no limit" as FLT_MAX does.
inline hark::VadOptions vad_options(float threshold, int min_speech_ms, int min_silence_ms, int pad_ms, float overlap,
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

// A path argument: the library opens the file and says why it cannot (HARK_ERR_IO).
inline void check_path(const char* path, const char* arg) {
  require(path != nullptr, std::string(arg) + " is NULL");
  require(*path != '\0', std::string(arg) + " is empty");
}

inline void check_pcm(const void* samples, size_t n_values, int sample_rate, int channels) {
  require(samples != nullptr, "samples is NULL");
  require(n_values > 0, "n_values is 0: no audio");
  require(sample_rate > 0, "sample_rate must be > 0, got " + std::to_string(sample_rate));
  require(channels >= 1, "channels must be >= 1, got " + std::to_string(channels));
  require(n_values % static_cast<size_t>(channels) == 0,
          "n_values " + std::to_string(n_values) + " is not a multiple of channels (" + std::to_string(channels) + ")");
}

inline const std::vector<hark::DeviceChoice>& all_devices() {
  static const std::vector<hark::DeviceChoice> d = hark::devices();  // fixed for the process
  return d;
}

inline hark_device_info device_info(const hark::DeviceChoice& d) {
  hark_device_info i;
  std::memset(static_cast<void*>(&i), 0, sizeof i);
  i.name = d.name.c_str();
  i.description = d.description.c_str();
  i.gpu = d.gpu;
  i.reason_no_gpu = d.reason_no_gpu.c_str();
  return i;
}

}  // namespace hark::capi
