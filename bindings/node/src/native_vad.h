// NativeVad: a loaded Silero VAD model (hark::VadModel) as a JS object, under whisper.rn's
// WhisperVadContext (index.js). detectSpeech / detectSpeechData run on threads of their own;
// release() lets running calls finish (they hold the model) and refuses new ones.
#pragma once
#include <napi.h>

#include <memory>

#include "hark/hark.hpp"

namespace hark_node {

class NativeVad : public Napi::ObjectWrap<NativeVad> {
 public:
  static Napi::Function define(Napi::Env env);
  // loadVad(path, { nThreads, useGpu }) -> Promise<NativeVad>
  static Napi::Value load(const Napi::CallbackInfo& info);
  explicit NativeVad(const Napi::CallbackInfo& info);

 private:
  // (kind 'file'|'data', input, options) -> Promise<[{ t0, t1 }]>
  Napi::Value detect(const Napi::CallbackInfo& info);
  Napi::Value release(const Napi::CallbackInfo& info);

  std::shared_ptr<hark::VadModel> vad_;
  int id_ = 0;
};

}  // namespace hark_node
