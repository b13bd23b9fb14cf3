// openAudioSource (see the header).
#include "native_audio_source.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "hark/hark.hpp"
#include "js_options.h"
#include "js_thread_queue.h"

namespace hark_node {
namespace {

// Float samples in [-1, 1] as 16-bit little-endian bytes, as whisper.rn's audio streams deliver.
std::vector<uint8_t> pcm16_bytes(std::span<const float> samples) {
  std::vector<uint8_t> out(samples.size() * 2);
  for (size_t i = 0; i < samples.size(); ++i) {
    const float v = std::clamp(samples[i], -1.0f, 1.0f) * 32767.0f;
    const auto s = int16_t(std::lrint(v));
    out[2 * i] = uint8_t(uint16_t(s) & 0xff);
    out[2 * i + 1] = uint8_t(uint16_t(s) >> 8);
  }
  return out;
}

}  // namespace

Napi::Value open_audio_source(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[1].IsFunction() || !info[2].IsFunction())
    throw Napi::TypeError::New(env, "openAudioSource(spec, onData, onEnd)");
  const Napi::Object spec = options_object(info[0], "openAudioSource");
  const std::string kind = get_enum(spec, "kind", {"microphone", "file"}, "microphone");
  std::shared_ptr<hark::AudioSource> source;
  try {
    if (kind == "file")
      source = hark::open_file_source(get_string(spec, "path", ""), get_number(spec, "speed", 1.0, 0.0, 1000.0),
                                      int(get_int(spec, "chunkMs", 100, 10, 10000)));
    else
      source = hark::open_capture_source(get_string(spec, "device", "default"));
  } catch (...) {
    throw js_error(env, current_error());
  }
  auto on_data = std::make_shared<Napi::FunctionReference>(Napi::Persistent(info[1].As<Napi::Function>()));
  auto on_end = std::make_shared<Napi::FunctionReference>(Napi::Persistent(info[2].As<Napi::Function>()));
  // Every callback comes from the source's one thread (or stop()'s, once that thread is joined):
  // posts and the closing post come in order from one thread at a time.
  std::shared_ptr<JsThreadQueue> queue = JsThreadQueue::create(env, "hark.audioSource");
  try {
    source->start(
        [queue, on_data](std::span<const float> s) {
          auto bytes = std::make_shared<std::vector<uint8_t>>(pcm16_bytes(s));
          queue->post([on_data, bytes](Napi::Env env) {
            auto buf = Napi::Uint8Array::New(env, bytes->size());
            std::copy(bytes->begin(), bytes->end(), buf.Data());
            on_data->Call({buf});
          });
        },
        [queue, on_data, on_end](const std::string& error) {
          queue->post([on_data, on_end, error](Napi::Env env) {
            on_end->Call({error.empty() ? env.Null() : Napi::String::New(env, error).As<Napi::Value>()});
            on_end->Reset();
            on_data->Reset();
          });
          queue->close();
        });
  } catch (...) {
    queue->close();
    throw js_error(env, current_error());
  }
  Napi::Object handle = Napi::Object::New(env);
  handle.Set("stop", Napi::Function::New(env, [source](const Napi::CallbackInfo& i) {
               source->stop();
               return i.Env().Undefined();
             }));
  handle.Set("name", Napi::String::New(env, source->name()));
  return handle;
}

}  // namespace hark_node
