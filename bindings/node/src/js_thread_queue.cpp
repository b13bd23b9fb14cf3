// JsThreadQueue and run_off_js_thread (see the header).
#include "js_thread_queue.h"

#include <exception>
#include <new>
#include <stdexcept>
#include <thread>

namespace hark_node {

std::shared_ptr<JsThreadQueue> JsThreadQueue::create(Napi::Env env, const char* name, bool keep_alive) {
  std::shared_ptr<JsThreadQueue> q(new JsThreadQueue());
  // Unlimited queue (0): a worker never blocks on a slow JS thread; one owning thread.
  q->tsfn_ = Tsfn::New(env, name, 0, 1);
  if (!keep_alive) q->tsfn_.Unref(env);
  return q;
}

JsThreadQueue::~JsThreadQueue() { close(); }

void JsThreadQueue::run(Napi::Env env, Napi::Function, std::nullptr_t*, JsTask* task) {
  std::unique_ptr<JsTask> owned(task);
  if (env == nullptr) return;  // the environment is going away: nothing can run
  try {
    (*owned)(env);
  } catch (const Napi::Error& e) {
    // A user callback threw: report it as Node reports a throwing listener.
    napi_fatal_exception(env, e.Value());
  }
}

void JsThreadQueue::post(JsTask task) {
  if (closed_) return;
  auto* heap = new JsTask(std::move(task));
  if (tsfn_.NonBlockingCall(heap) != napi_ok) delete heap;  // closing: dropped
}

void JsThreadQueue::close() {
  if (closed_) return;
  closed_ = true;
  tsfn_.Release();
}

std::string current_exception_message() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return "out of memory";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

Napi::Promise run_off_js_thread(Napi::Env env, const char* name, std::function<ValueBuilder()> work,
                                std::shared_ptr<JsThreadQueue> queue) {
  auto deferred = Napi::Promise::Deferred::New(env);
  if (!queue) queue = JsThreadQueue::create(env, name);
  std::thread([work = std::move(work), queue, deferred]() mutable {
    ValueBuilder build;
    std::string error;
    try {
      build = work();
    } catch (...) {
      error = current_exception_message();
      if (error.empty()) error = "failed";
    }
    queue->post([deferred, build = std::move(build), error](Napi::Env env) {
      if (!error.empty()) {
        deferred.Reject(Napi::Error::New(env, error).Value());
        return;
      }
      try {
        deferred.Resolve(build ? build(env) : env.Undefined());
      } catch (const Napi::Error& e) {
        deferred.Reject(e.Value());
      }
    });
    queue->close();
  }).detach();
  return deferred.Promise();
}

}  // namespace hark_node
