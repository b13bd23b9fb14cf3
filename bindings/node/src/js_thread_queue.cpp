// JsThreadQueue and run_off_js_thread (see the header).
#include "js_thread_queue.h"

#include <cctype>
#include <exception>
#include <new>
#include <stdexcept>
#include <thread>

#include "hark/error.hpp"

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

CaughtError current_error() {
  CaughtError c;
  try {
    throw;
  } catch (const hark::Error& e) {
    c.message = e.what();
    std::string code = hark::error_code_name(e.code());
    for (char& ch : code) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    c.code = "ERR_HARK_" + code;
    c.field = e.field();
  } catch (...) {
    c.message = current_exception_message();
  }
  if (c.message.empty()) c.message = "failed";
  return c;
}

Napi::Error js_error(Napi::Env env, const CaughtError& e) {
  Napi::Error err = Napi::Error::New(env, e.message);
  if (!e.code.empty()) err.Set("code", Napi::String::New(env, e.code));
  if (!e.field.empty()) err.Set("field", Napi::String::New(env, e.field));
  return err;
}

Napi::Promise run_off_js_thread(Napi::Env env, const char* name, std::function<ValueBuilder()> work,
                                std::shared_ptr<JsThreadQueue> queue) {
  auto deferred = Napi::Promise::Deferred::New(env);
  if (!queue) queue = JsThreadQueue::create(env, name);
  std::thread([work = std::move(work), queue, deferred]() mutable {
    ValueBuilder build;
    CaughtError error;
    try {
      build = work();
    } catch (...) {
      error = current_error();
    }
    queue->post([deferred, build = std::move(build), error](Napi::Env env) {
      if (!error.empty()) {
        deferred.Reject(js_error(env, error).Value());
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
