#include "service.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "api_error.h"

namespace hark::server {

namespace fs = std::filesystem;

int default_threads(int parallel) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min(8, cores / std::max(1, parallel)));
}

namespace {

ContextParams context_params(const ServerOptions& o) {
  ContextParams cp;
  cp.use_gpu = o.use_gpu;
  cp.flash_attn = o.flash_attn;
  cp.cross_kv_type = o.cross_kv_type;
  return cp;
}

int threads_of(const ServerOptions& o) { return o.threads > 0 ? o.threads : default_threads(o.parallel); }

}  // namespace

Service::Service(ServerOptions o) : opt_(std::move(o)), sched_(std::max(0, opt_.queue_size)) {
  if (opt_.models.empty()) throw Error("no model given (-m PATH or --model NAME=PATH)");
  if (opt_.max_batch_size < 1 || opt_.max_batch_size > kMaxBatchSize)
    throw Error("--max-batch-size must be in [1, " + std::to_string(kMaxBatchSize) + "], got " +
                std::to_string(opt_.max_batch_size));
  const int batch = opt_.decoding.batch_size;
  if (batch < 1 || batch > opt_.max_batch_size)
    throw Error("--batch-size must be in [1, " + std::to_string(opt_.max_batch_size) + "] (--max-batch-size), got " +
                std::to_string(batch));
  if (batch > 1 && opt_.vad_model.empty())
    throw Error("--batch-size " + std::to_string(batch) +
                " needs --vad-model (the batched pipeline cuts the audio at pauses)");
  // A VAD model that cannot be loaded fails the start, not the first request that asks for it.
  if (!opt_.vad_model.empty()) VadModel::load(opt_.vad_model);
  for (const ModelSpec& m : opt_.models) {
    for (const auto& loaded : models_.all())
      if (loaded->name() == m.name) throw Error("two models are named '" + m.name + "'");
    models_.add(std::make_shared<ModelPool>(m.name, m.path, opt_.parallel, threads_of(opt_), context_params(opt_)));
  }
  watcher_ = std::thread([this] { watch(); });
}

Service::~Service() {
  stop_watch_ = true;
  if (watcher_.joinable()) watcher_.join();
}

Prepared Service::prepare(TranscriptionRequest r, Clock::time_point deadline, std::function<bool()> gone) {
  if (shutting_down_) throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
  std::shared_ptr<ModelPool> model = models_.find(r.model);
  if (!model)
    throw ApiError(404, "The model '" + r.model + "' does not exist here (GET /v1/models lists them)",
                   "invalid_request_error", "model", "model_not_found");
  // A place first (running or queued; 503 at once when there is none), so a refused request
  // costs no decoding; a queued one holds its audio while it waits.
  std::unique_ptr<Ticket> ticket;
  try {
    ticket = sched_.enter(model);
  } catch (const ApiError& e) {
    metrics_.count_rejected(e.code);
    throw;
  }
  Prepared p;
  try {
    // Decoding stops as soon as the audio passes --max-audio-sec: never more is held.
    p.samples = decode_audio(r.audio.data(), r.audio.size(), opt_.max_audio_sec);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::ResourceExhausted && opt_.max_audio_sec > 0) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "file: the audio is longer than %.1f s, the most this server takes (--max-audio-sec)",
                    opt_.max_audio_sec);
      throw ApiError(413, msg, "invalid_request_error", "file", "audio_too_long");
    }
    if (e.code() == ErrorCode::ResourceExhausted)  // longer than the library's limit
      throw ApiError(413, std::string("file: ") + e.what(), "invalid_request_error", "file", "audio_too_long");
    if (e.code() == ErrorCode::Internal) throw api_error_of(e);
    // 415 Unsupported Media Type: the upload is no audio hark can read (the contract;
    // OpenAI itself answers 400 with the same error code, which its SDKs read the same way).
    throw ApiError(415,
                   std::string("file: the audio could not be decoded (WAV, FLAC, OGG Vorbis/Opus or MP3): ") + e.what(),
                   "invalid_request_error", "file", "invalid_file_format");
  }
  if (p.samples.empty()) throw bad_field("file", "file: the audio holds no samples");
  p.audio_s = static_cast<double>(p.samples.size()) / kSampleRate;
  if (opt_.max_audio_sec > 0 && p.audio_s > opt_.max_audio_sec) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "file: the audio is %.1f s long; this server takes at most %.1f s (--max-audio-sec)",
                  p.audio_s, opt_.max_audio_sec);
    throw ApiError(413, msg, "invalid_request_error", "file", "audio_too_long");
  }
  if (r.params.vad && opt_.vad_model.empty()) throw bad_field("vad", "vad: this server has no VAD model (--vad-model)");
  if (r.params.batch_size > 1) {
    if (r.params.batch_size > opt_.max_batch_size)
      throw bad_field("batch_size", "batch_size: " + std::to_string(r.params.batch_size) +
                                        " is above this server's limit of " + std::to_string(opt_.max_batch_size) +
                                        " (--max-batch-size)");
    // The batched pipeline cuts the audio at the pauses the Silero VAD finds.
    if (opt_.vad_model.empty())
      throw bad_field("batch_size", "batch_size: batching needs the server's VAD model, and it has none (--vad-model)");
  }
  if (r.params.vad || r.params.batch_size > 1)
    r.params.vad_model_path = opt_.vad_model;  // never a path from the request
  p.request = std::move(r);
  try {
    p.lease = ticket->wait(deadline, gone);
  } catch (const ApiError& e) {
    metrics_.count_rejected(e.code);
    throw;
  }
  return p;
}

std::unique_ptr<Lease> Service::lease_for_session(const std::string& name) {
  if (shutting_down_) throw ApiError(503, "the server is shutting down", "server_error", "", "shutting_down");
  std::shared_ptr<ModelPool> model = models_.find(name);
  if (!model)
    throw ApiError(404, "The model '" + name + "' does not exist here (GET /v1/models lists them)",
                   "invalid_request_error", "model", "model_not_found");
  const int states = model->size();
  std::unique_ptr<Lease> lease = sched_.try_acquire(std::move(model));
  if (!lease) {
    ApiError e(503,
               "the server is busy: all " + std::to_string(states) +
                   " states of this model are in use (--parallel); try again shortly",
               "server_error", "", "server_busy");
    e.retry_after_s = 1;
    metrics_.count_rejected("server_busy");
    throw e;
  }
  return lease;
}

namespace {
// Compares in time that does not depend on where the strings differ (the length may show).
bool same_key(const std::string& given, const std::string& key) {
  if (given.size() != key.size() || key.empty()) return false;
  unsigned diff = 0;
  for (size_t i = 0; i < key.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ key[i]);
  return diff == 0;
}
}  // namespace

bool Service::accepts_key(const std::string& key) const {
  if (opt_.api_keys.empty()) return true;
  bool ok = false;
  for (const std::string& k : opt_.api_keys) ok |= same_key(key, k);
  return ok;
}

Transcript Service::run(Prepared& p, Clock::time_point deadline, std::function<bool()> gone,
                        std::function<void(const NewSegments&)> on_segments) {
  Running me;
  me.job = jobs::create();
  me.deadline = deadline;
  me.gone = std::move(gone);
  {
    std::lock_guard lock(run_mu_);
    running_.push_back(&me);
    // A request that holds a state runs, also while draining; only once the grace is over is it
    // aborted (drain aborts those already running then).
    if (shutting_down_abort_) me.why = 3, me.job->abort();
  }
  struct Unlist {
    Service* s;
    Running* r;
    ~Unlist() {
      std::lock_guard lock(s->run_mu_);
      s->running_.remove(r);
      jobs::remove(r->job->id());
    }
  } unlist{this, &me};

  TranscribeParams params = p.request.params;
  params.job = me.job;
  params.on_new_segments = std::move(on_segments);
  Transcript t;
  try {
    t = p.lease->state().transcribe(p.samples, params);
  } catch (const Error& e) {
    // By what it is: a value the request got wrong (400), or the server's own failure (5xx).
    throw api_error_of(e);
  }
  if (t.aborted) {
    const int why = me.why.load();
    const char* code = why == 1 ? "timeout" : why == 2 ? "client_closed" : "shutting_down";
    metrics_.count_rejected(code);
    if (why == 1)
      throw ApiError(504, "the transcription took longer than this server allows (--timeout)", "server_error", "",
                     code);
    if (why == 2) throw ApiError(499, "the client closed the connection", "invalid_request_error", "", code);
    throw ApiError(503, "the server is shutting down", "server_error", "", code);
  }
  metrics_.add_transcription(p.audio_s, t.timings.total_ms / 1000.0);
  metrics_.add_windows(t.timings.n_windows, t.n_fallback_windows);
  return t;
}

void Service::watch() {
  while (!stop_watch_) {
    {
      std::lock_guard lock(run_mu_);
      const auto now = Clock::now();
      for (Running* r : running_) {
        if (r->why != 0) continue;
        if (now >= r->deadline)
          r->why = 1;
        else if (r->gone && r->gone())
          r->why = 2;
        else if (shutting_down_abort_)
          r->why = 3;
        if (r->why != 0) r->job->abort();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string Service::load(const std::string& model) {
  if (model.empty()) throw bad_field("model", "model: give a model name or an allowed path");
  std::lock_guard lock(load_mu_);
  if (models_.make_default(model)) return model;
  // A path: only where the operator allowed it, after every link is resolved.
  std::error_code ec;
  const fs::path want = fs::weakly_canonical(fs::path(model), ec);
  bool allowed = false;
  if (!ec && fs::is_regular_file(want, ec)) {
    for (const std::string& a : opt_.load_allow) {
      const fs::path allow = fs::weakly_canonical(fs::path(a), ec);
      if (ec) continue;
      if (want == allow || (fs::is_directory(allow, ec) && want.parent_path() == allow)) allowed = true;
    }
  }
  if (!allowed)
    throw ApiError(403,
                   "model: '" + model + "' is neither a loaded model nor a file this server may load (--load-allow)",
                   "permission_error", "model", "model_not_allowed");
  std::shared_ptr<ModelPool> pool;
  try {
    pool = std::make_shared<ModelPool>(model_name_from_path(want.string()), want.string(), opt_.parallel,
                                       threads_of(opt_), context_params(opt_));
  } catch (const Error& e) {
    // The operator allowed the file: one that is no model is the request's choice of it (400).
    // The message names the file as the client did: never the server's absolute path for it.
    std::string msg = e.what();
    for (size_t at = msg.find(want.string()); at != std::string::npos; at = msg.find(want.string(), at + model.size()))
      msg.replace(at, want.string().size(), model);
    if (e.code() == ErrorCode::Internal || e.code() == ErrorCode::ResourceExhausted)
      throw api_error_of(Error(e.code(), msg, e.field()));
    throw ApiError(400, "model: " + msg, "invalid_request_error", "model", "invalid_model");
  }
  const std::string name = pool->name();
  models_.replace_default(std::move(pool));
  return name;
}

Health Service::health() const {
  Health h;
  for (const auto& m : models_.all()) h.models.push_back(m->name());
  h.ready = !h.models.empty() && !shutting_down_;
  h.running = sched_.running();
  h.queued = sched_.queued();
  return h;
}

std::string Service::metrics_text() const {
  return metrics_.prometheus(sched_.running(), sched_.queued(), static_cast<int>(models_.all().size()));
}

int Service::drain(Clock::duration grace) {
  shutting_down_ = true;
  sched_.close();
  const auto until = Clock::now() + grace;
  while (sched_.running() > 0 && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  int aborted = 0;
  {
    std::lock_guard lock(run_mu_);
    shutting_down_abort_ = true;
    for (Running* r : running_) {
      if (r->why == 0) {
        r->why = 3;
        r->job->abort();
        ++aborted;
      }
    }
  }
  // Aborted jobs stop within a graph node; their requests then answer 503 and release the states
  // (a reply stuck on a client that does not read is bounded too).
  const auto hard = Clock::now() + std::chrono::seconds(5);
  while (sched_.running() > 0 && Clock::now() < hard) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return aborted;
}

}  // namespace hark::server
