// NativeContext: one loaded model (hark::Context) as a JS object, and the jobs running on it.
//
// The JS layer (index.js) wraps it in whisper.rn's WhisperContext. Everything here is called on
// the JS thread; the work itself (loading, transcribing, bench) runs on threads of its own and
// comes back through a JsThreadQueue. The context keeps a table of its running jobs so that a
// job's stop() can resolve once the job has returned, and release() can stop every job first
// and free the model only when the last one is done.
#pragma once
#include <napi.h>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "hark/hark.hpp"

namespace hark_node {

class NativeContext : public Napi::ObjectWrap<NativeContext> {
 public:
  static Napi::Function define(Napi::Env env);
  // loadContext(path, { useGpu, useFlashAttn, device }) -> Promise<NativeContext>
  static Napi::Value load(const Napi::CallbackInfo& info);

  explicit NativeContext(const Napi::CallbackInfo& info);

  // For other native objects running work on this context (realtime streams). The model, or a
  // Napi::Error when the context has been released.
  std::shared_ptr<hark::Context> acquire(Napi::Env env, const char* what);
  // Registers a running job: `abort` stops it (any thread may finish it later). Keeps this
  // object alive until job_finished(job_id).
  void job_started(int job_id, std::function<void()> abort);
  // On the JS thread, when the job has returned: stop() promises resolve; a pending release()
  // completes when it was the last.
  void job_finished(int job_id);

 private:
  Napi::Value transcribe(const Napi::CallbackInfo& info);  // (kind 'file'|'data', input, options) -> { jobId, promise }
  Napi::Value abort_job(const Napi::CallbackInfo& info);   // (jobId) -> Promise<void> once it returned
  Napi::Value bench(const Napi::CallbackInfo& info);       // (maxThreads) -> Promise<BenchResult>
  Napi::Value release(const Napi::CallbackInfo& info);     // () -> Promise<void>
  Napi::Value running_jobs(const Napi::CallbackInfo& info);  // number of jobs running now

  struct Running {
    std::function<void()> abort;
    std::vector<Napi::Promise::Deferred> stop_waiters;
  };

  std::shared_ptr<hark::Context> ctx_;
  int id_ = 0;
  bool released_ = false;
  std::map<int, Running> running_;
  std::vector<Napi::Promise::Deferred> release_waiters_;
};

}  // namespace hark_node
