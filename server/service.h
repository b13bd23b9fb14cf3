// The server's work, apart from any transport: the models, admission, running a transcription
// as a hark Job that is aborted when its deadline passes, its client goes away or the server
// stops, switching models (/load), health and metrics. The HTTP layer (http_server.h) only
// parses, calls this and writes answers; a WebSocket layer would do the same.
#pragma once
#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "admission.h"
#include "hark/hark.hpp"
#include "metrics.h"
#include "model_pools.h"
#include "options.h"
#include "request.h"

namespace hark::server {

// A request that passed every check and holds a state: ready to run.
struct Prepared {
  TranscriptionRequest request;
  std::vector<float> samples;
  double audio_s = 0;
  std::unique_ptr<Lease> lease;
};

struct Health {
  bool ready = false;  // models loaded and not shutting down
  std::vector<std::string> models;
  int running = 0, queued = 0;
};

class Service {
 public:
  // Loads every model of `o` (throws hark::Error naming the file) and starts the watchdog.
  explicit Service(ServerOptions o);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  const ServerOptions& options() const { return opt_; }

  // Finds the model (404), takes a place for the request (running or queued: 503 when the queue
  // is full, before any decoding), decodes the audio (415; 413 as soon as it passes
  // --max-audio-sec, never holding more), then waits for a state (504 deadline, 499 client gone,
  // 503 shutdown). `gone` says whether the client left. Per request, memory peaks at the upload
  // plus max_audio_sec x 64 KB/s of samples, plus the decoder's buffers (under 1 MB).
  Prepared prepare(TranscriptionRequest r, Clock::time_point deadline, std::function<bool()> gone);
  // Transcribes; on_segments (may be empty) sees segments as they become final. A job stopped
  // by the deadline throws 504, by a client that left 499, by shutdown 503.
  Transcript run(Prepared& p, Clock::time_point deadline, std::function<bool()> gone,
                 std::function<void(const NewSegments&)> on_segments);

  // A realtime session's state: the named model's (404 when none), at once or not at all (503
  // with Retry-After when every state is busy, or when shutting down).
  std::unique_ptr<Lease> lease_for_session(const std::string& model);
  // Whether `key` (from "Authorization: Bearer KEY") opens the API: always when no --api-key.
  bool accepts_key(const std::string& key) const;
  // Shutting down: long-lived work (realtime sessions) should wind down; grace_over: abort it.
  bool stopping() const { return shutting_down_; }
  bool grace_over() const { return shutting_down_abort_; }

  // POST /load: `model` is a loaded model's name (it becomes the default) or a path, accepted only
  // inside options().load_allow (403 otherwise). Returns the default model's name after.
  std::string load(const std::string& model);

  Health health() const;
  std::string metrics_text() const;
  Metrics& metrics() { return metrics_; }
  ModelPools& models() { return models_; }
  Admission& admission() { return sched_; }

  // Graceful stop: refuse new work, let running jobs finish until `grace` passes, abort the rest
  // and wait for them (bounded by the abort latency). Returns the number of jobs aborted.
  int drain(Clock::duration grace);

 private:
  struct Running {
    std::shared_ptr<Job> job;
    Clock::time_point deadline;
    std::function<bool()> gone;
    std::atomic<int> why{0};  // 0 running, 1 deadline, 2 client gone, 3 shutdown
  };
  void watch();  // the watchdog thread: every 20 ms, aborts jobs past deadline or without client

  ServerOptions opt_;
  ModelPools models_;
  Admission sched_;
  Metrics metrics_;
  std::mutex load_mu_;  // one /load at a time

  mutable std::mutex run_mu_;
  std::list<Running*> running_;
  std::atomic<bool> stop_watch_{false};
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> shutting_down_abort_{false};  // drain's grace is over: the watchdog aborts what runs
  std::thread watcher_;
};

// Threads per state when --threads is 0: the machine's cores shared by the parallel states.
int default_threads(int parallel);

}  // namespace hark::server
