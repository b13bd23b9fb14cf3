// hark.node: the module's exports. The addon only converts between JavaScript and hark's public
// C++ API (include/hark/); index.js builds whisper.rn's API on these.
//
//   loadContext(path, options) -> Promise<NativeContext>
//   loadVad(path, options)     -> Promise<NativeVad>
//   startRealtime(context, options, onEvent) -> NativeRealtime
//   openAudioSource(spec, onData, onEnd) -> { stop }
//   setLogSink(fn | null), version, systemInfo, captureSupported
#include <napi.h>

#include "addon_data.h"
#include "hark/hark.hpp"
#include "native_audio_source.h"
#include "native_context.h"
#include "native_log.h"
#include "native_realtime.h"
#include "native_vad.h"

namespace hark_node {
namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  env.SetInstanceData(data);  // deleted with the environment
  Napi::Function context_ctor = NativeContext::define(env);
  Napi::Function vad_ctor = NativeVad::define(env);
  Napi::Function realtime_ctor = NativeRealtime::define(env);
  data->context_ctor = Napi::Persistent(context_ctor);
  data->vad_ctor = Napi::Persistent(vad_ctor);
  data->realtime_ctor = Napi::Persistent(realtime_ctor);
  stop_log_on_exit(env);

  exports.Set("loadContext", Napi::Function::New(env, NativeContext::load, "loadContext"));
  exports.Set("loadVad", Napi::Function::New(env, NativeVad::load, "loadVad"));
  exports.Set("startRealtime", Napi::Function::New(env, NativeRealtime::start, "startRealtime"));
  exports.Set("openAudioSource", Napi::Function::New(env, open_audio_source, "openAudioSource"));
  exports.Set("setLogSink", Napi::Function::New(env, set_log_sink, "setLogSink"));
  exports.Set("version", Napi::String::New(env, hark::version()));
  exports.Set("systemInfo", Napi::String::New(env, hark::system_info()));
  exports.Set("captureSupported", Napi::Boolean::New(env, hark::capture_supported()));
  return exports;
}

}  // namespace
}  // namespace hark_node

// The registration macro wants a plain name.
static Napi::Object InitHarkAddon(Napi::Env env, Napi::Object exports) { return hark_node::init(env, exports); }
NODE_API_MODULE(hark, InitHarkAddon)
