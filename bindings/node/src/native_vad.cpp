// NativeVad (see the header).
#include "native_vad.h"

#include "addon_data.h"
#include "audio_input.h"
#include "js_options.h"
#include "js_thread_queue.h"
#include "result_to_js.h"

namespace hark_node {
namespace {

// whisper.rn's VadOptions -> hark::VadOptions (whisper.cpp's whisper_vad_params).
hark::VadOptions vad_options_from_js(const Napi::Object& o) {
  hark::VadOptions v;
  v.threshold = float(get_number(o, "threshold", v.threshold, 0.0, 1.0));
  v.min_speech_duration_ms = int(get_int(o, "minSpeechDurationMs", v.min_speech_duration_ms, 0, 1 << 30));
  v.min_silence_duration_ms = int(get_int(o, "minSilenceDurationMs", v.min_silence_duration_ms, 0, 1 << 30));
  if (has_option(o, "maxSpeechDurationS"))
    v.max_speech_duration_s = float(get_number(o, "maxSpeechDurationS", 30.0, 1e-3, 1e9));
  v.speech_pad_ms = int(get_int(o, "speechPadMs", v.speech_pad_ms, 0, 1 << 30));
  v.samples_overlap = float(get_number(o, "samplesOverlap", v.samples_overlap, 0.0, 1e6));
  return v;
}

}  // namespace

Napi::Function NativeVad::define(Napi::Env env) {
  return DefineClass(env, "NativeVad",
                     {InstanceMethod<&NativeVad::detect>("detect"), InstanceMethod<&NativeVad::release>("release")});
}

NativeVad::NativeVad(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeVad>(info) {
  if (info.Length() != 1 || !info[0].IsExternal())
    throw Napi::TypeError::New(info.Env(), "NativeVad is made by loadVad(), not directly");
  vad_ = *info[0].As<Napi::External<std::shared_ptr<hark::VadModel>>>().Data();
  id_ = addon_data(info.Env()).next_context_id++;
  Napi::Object self = info.This().As<Napi::Object>();
  self.Set("id", Napi::Number::New(info.Env(), id_));
  self.Set("gpu", Napi::Boolean::New(info.Env(), false));
  self.Set("reasonNoGPU", "hark runs the Silero VAD on the CPU (the network is small)");
}

Napi::Value NativeVad::load(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString() || info[0].As<Napi::String>().Utf8Value().empty())
    throw Napi::TypeError::New(env, "initWhisperVad: filePath must be a non-empty string (the Silero VAD model), got " +
                                        (info.Length() < 1 ? std::string("nothing") : describe_js_type(info[0])));
  std::string path = info[0].As<Napi::String>().Utf8Value();
  if (path.rfind("file://", 0) == 0) path.erase(0, 7);
  const Napi::Object o = options_object(info.Length() > 1 ? info[1] : env.Undefined(), "initWhisperVad");
  hark::VadModelParams params;
  params.n_threads = int(get_int(o, "nThreads", 1, 1, 256));
  get_bool(o, "useGpu", true);  // accepted for whisper.rn's sake; the VAD runs on the CPU
  return run_off_js_thread(env, "hark.initWhisperVad", [path, params]() -> ValueBuilder {
    std::shared_ptr<hark::VadModel> vad = hark::VadModel::load(path, params);
    return [vad](Napi::Env env) mutable -> Napi::Value {
      return addon_data(env).vad_ctor.New({Napi::External<std::shared_ptr<hark::VadModel>>::New(env, &vad)});
    };
  });
}

Napi::Value NativeVad::detect(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  const std::string kind = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  const char* what = kind == "data" ? "detectSpeechData" : "detectSpeech";
  if (!vad_)
    throw Napi::Error::New(env,
                           std::string(what) + ": WhisperVadContext " + std::to_string(id_) + " has been released");
  const Napi::Object o = options_object(info.Length() > 2 ? info[2] : env.Undefined(), what);
  AudioInput input = kind == "data" ? audio_from_data_arg(info.Length() > 1 ? info[1] : env.Undefined(), o, what)
                                    : audio_from_path_arg(info.Length() > 1 ? info[1] : env.Undefined(), what);
  const hark::VadOptions options = vad_options_from_js(o);
  return run_off_js_thread(env, "hark.detectSpeech", [vad = vad_, input = std::move(input), options]() -> ValueBuilder {
    const std::vector<float> samples = decode_audio_input(input);
    auto segments = std::make_shared<std::vector<hark::VadSegment>>(vad->detect_speech(samples, options).segments);
    return [segments](Napi::Env env) -> Napi::Value { return vad_segments_to_js(env, *segments); };
  });
}

Napi::Value NativeVad::release(const Napi::CallbackInfo& info) {
  vad_.reset();  // running calls hold their own reference and finish
  auto d = Napi::Promise::Deferred::New(info.Env());
  d.Resolve(info.Env().Undefined());
  return d.Promise();
}

}  // namespace hark_node
