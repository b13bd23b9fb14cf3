// Per-environment state of the addon (Node may load it in several worker threads): the
// constructors native objects are made with, the log sink, and the counter that numbers contexts.
#pragma once
#include <napi.h>

namespace hark_node {

struct AddonData {
  Napi::FunctionReference context_ctor;
  Napi::FunctionReference vad_ctor;
  Napi::FunctionReference realtime_ctor;
  Napi::FunctionReference log_sink;  // JS (level, text) => void while the native log is on
  int next_context_id = 1;
};

inline AddonData& addon_data(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

}  // namespace hark_node
