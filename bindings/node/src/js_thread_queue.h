// Getting work done off the JS thread and its results back onto it.
//
// Node runs JavaScript on one thread; hark's jobs take seconds. A JsThreadQueue is a channel from
// any thread to the JS thread (a Node-API thread-safe function carrying closures), so a worker
// can report progress, segments and its result in order, each closure running where JS values may
// be touched. run_off_js_thread() is the common case: work on a thread of its own, then settle a
// promise with what it returns.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <string>

namespace hark_node {

// A closure for the JS thread. It may throw Napi::Error (a JS callback threw): that becomes an
// uncaught exception in the process, as a throwing event listener would.
using JsTask = std::function<void(Napi::Env)>;

class JsThreadQueue {
 public:
  // On the JS thread. keep_alive false: the queue alone does not keep the process running (the
  // log listener's).
  static std::shared_ptr<JsThreadQueue> create(Napi::Env env, const char* name, bool keep_alive = true);
  ~JsThreadQueue();
  JsThreadQueue(const JsThreadQueue&) = delete;
  JsThreadQueue& operator=(const JsThreadQueue&) = delete;

  // Any thread; tasks run in the order posted. After close() they are dropped.
  void post(JsTask task);
  // Any thread, once: no more tasks; the queue's resources go once the posted ones have run.
  void close();

 private:
  JsThreadQueue() = default;
  static void run(Napi::Env env, Napi::Function, std::nullptr_t*, JsTask* task);
  using Tsfn = Napi::TypedThreadSafeFunction<std::nullptr_t, JsTask, run>;
  Tsfn tsfn_;
  bool closed_ = false;
};

// What a worker hands back: builds the promise's value on the JS thread.
using ValueBuilder = std::function<Napi::Value(Napi::Env)>;

// Runs work() on a new thread and settles the returned promise on the JS thread: resolved with
// the builder's value, or rejected with an Error carrying the message of what work() threw
// (hark::Error's messages name the file, field or value at fault). `queue`, when given, is the
// channel the promise is settled through (so it comes after everything work() posted to it);
// it is closed afterwards.
Napi::Promise run_off_js_thread(Napi::Env env, const char* name, std::function<ValueBuilder()> work,
                                std::shared_ptr<JsThreadQueue> queue = nullptr);

// The message of the exception being handled (inside a catch block).
std::string current_exception_message();

// The exception being handled, as a JS Error will carry it: the message, and for hark's errors
// the code ("ERR_HARK_INVALID_ARGUMENT": hark::ErrorCode's name, the word the C API, the CLI and
// the server use too) and the option it is about ("temperature"), both "" otherwise.
struct CaughtError {
  std::string message;
  std::string code;
  std::string field;
  bool empty() const { return message.empty(); }
};
CaughtError current_error();
// A JS Error of it (code and field set when known).
Napi::Error js_error(Napi::Env env, const CaughtError& e);

}  // namespace hark_node
