// The log bridge (see the header).
#include "native_log.h"

#include <memory>
#include <mutex>
#include <string>

#include "addon_data.h"
#include "hark/hark.hpp"
#include "js_options.h"
#include "js_thread_queue.h"

namespace hark_node {
namespace {

// The queue hark's callback posts to; the mutex orders posts against turning the log off. One
// process-wide log in hark, so one sink: the environment that set it last.
std::mutex g_mu;
std::shared_ptr<JsThreadQueue> g_queue;

void turn_off() {
  hark::set_log_callback(nullptr);
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_queue) g_queue->close();
  g_queue.reset();
}

}  // namespace

Napi::Value set_log_sink(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  const Napi::Value v = info.Length() > 0 ? info[0] : env.Undefined();
  if (v.IsNull() || v.IsUndefined()) {
    turn_off();
    addon_data(env).log_sink.Reset();
    return env.Undefined();
  }
  if (!v.IsFunction())
    throw Napi::TypeError::New(env, "setLogSink: expected a function or null, got " + describe_js_type(v));
  turn_off();
  addon_data(env).log_sink = Napi::Persistent(v.As<Napi::Function>());
  {
    std::lock_guard<std::mutex> lock(g_mu);
    // The log alone must not keep a finished program running.
    g_queue = JsThreadQueue::create(env, "hark.log", /*keep_alive=*/false);
  }
  hark::set_log_callback([](hark::LogLevel level, const std::string& message) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_queue) return;
    std::string text = message;
    const char* name = hark::log_level_name(level);
    g_queue->post([name, text = std::move(text)](Napi::Env env) {
      Napi::FunctionReference& sink = addon_data(env).log_sink;
      if (!sink.IsEmpty()) sink.Call({Napi::String::New(env, name), Napi::String::New(env, text)});
    });
  });
  return env.Undefined();
}

void stop_log_on_exit(Napi::Env env) {
  env.AddCleanupHook([] { turn_off(); });
}

}  // namespace hark_node
