// NativeRealtime (see the header).
#include "native_realtime.h"

#include <cmath>
#include <cstring>

#include "addon_data.h"
#include "js_options.h"
#include "js_thread_queue.h"
#include "native_context.h"
#include "transcribe_options.h"

namespace hark_node {

struct NativeRealtime::Shared {
  std::shared_ptr<hark::Context> ctx;             // must outlive the transcriber
  std::shared_ptr<hark::PushSource> push_source;  // null when the microphone feeds the stream
  std::unique_ptr<hark::RealtimeTranscriber> rt;
  std::shared_ptr<JsThreadQueue> queue;
  std::mutex mu;
  std::condition_variable cv;
  struct Chunk {
    std::vector<float> samples;  // interleaved, at the push rate and channel count
    bool end = false;            // end(): no more audio
    uint64_t seq = 0;
  };
  std::deque<Chunk> chunks;
  bool quit = false;
  std::thread feeder, watcher;
};

namespace {

// whisper.rn's TranscribeRealtimeOptions (+ hark's) -> hark::RealtimeOptions.
hark::RealtimeOptions realtime_options_from_js(const Napi::Object& o) {
  hark::RealtimeOptions r;
  r.audio_sec = get_number(o, "realtimeAudioSec", 30, 0.5, 1e7);
  r.audio_slice_sec = get_number(o, "realtimeAudioSliceSec", 0, 0, 1e7);
  r.audio_min_sec = get_number(o, "realtimeAudioMinSec", 1, 0.0005, 1e7);
  r.audio_output_path = get_string(o, "audioOutputPath", "");
  r.use_vad = get_bool(o, "useVad", false);
  r.vad_ms = int(get_int(o, "vadMs", 2000, 2000, 1 << 30));
  r.vad_thold = float(get_number(o, "vadThold", 0.6, 0.0, 1e6));
  r.vad_freq_thold = float(get_number(o, "vadFreqThold", 100.0, 0.0, 1e6));
  r.vad_model_path = get_string(o, "vadModelPath", "");
  r.partial_sec = get_number(o, "partialSec", 1.0, 0.0, 1e7);
  // hark's: the recording's samples ('int16': whisper.rn's 16-bit PCM; 'float32': exactly as fed).
  r.audio_output_bits = get_enum(o, "audioOutputFormat", {"int16", "float32"}, "int16") == "float32" ? 32 : 16;
  r.vad_threshold = float(get_number(o, "vadThreshold", r.vad_threshold, -1e30, 1e30));
  r.vad_silence_ms = int(get_int(o, "vadSilenceMs", r.vad_silence_ms, -(1 << 30), 1 << 30));
  r.vad_events = get_bool(o, "vadEvents", false);
  r.prompt_previous_slice = get_bool(o, "promptPreviousSlices", true);
  auto t = std::make_shared<hark::TranscribeParams>(transcribe_params_from_js(o));
  r.n_threads = t->n_threads;
  r.transcribe = t;
  return r;
}

// Interleaved values from a chunk of JS audio; `carry` keeps the bytes of a part frame between
// chunks (a Readable cuts where it likes).
std::vector<float> chunk_values(const Napi::Value& v, bool float_bytes, int channels,
                                std::vector<unsigned char>& carry) {
  const Napi::Env env = v.Env();
  const unsigned char* data = nullptr;
  size_t n = 0;
  bool is_float = float_bytes;
  if (v.IsTypedArray()) {
    const auto ta = v.As<Napi::TypedArray>();
    if (ta.TypedArrayType() == napi_float32_array)
      is_float = true;
    else if (ta.TypedArrayType() == napi_int16_array)
      is_float = false;
    else if (ta.TypedArrayType() != napi_uint8_array && ta.TypedArrayType() != napi_int8_array)
      throw Napi::TypeError::New(env, "push: a typed array of audio must be a Float32Array, an Int16Array or a Buffer");
    data = static_cast<const unsigned char*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    n = ta.ByteLength();
  } else if (v.IsArrayBuffer()) {
    auto ab = v.As<Napi::ArrayBuffer>();
    data = static_cast<const unsigned char*>(ab.Data());
    n = ab.ByteLength();
  } else {
    throw Napi::TypeError::New(
        env,
        "push: expected a Float32Array, an Int16Array, a Buffer or an ArrayBuffer of PCM, got " + describe_js_type(v));
  }
  std::vector<unsigned char> bytes(carry);
  bytes.insert(bytes.end(), data, data + n);
  const size_t width = is_float ? sizeof(float) : sizeof(int16_t);
  const size_t frame = width * size_t(channels);
  const size_t whole = bytes.size() / frame * frame;
  carry.assign(bytes.begin() + ptrdiff_t(whole), bytes.end());
  std::vector<float> out(whole / width);
  if (is_float) {
    std::memcpy(out.data(), bytes.data(), whole);
    for (size_t i = 0; i < out.size(); ++i)
      if (!std::isfinite(out[i]))
        throw Napi::Error::New(env, "push: sample " + std::to_string(i) + " is " +
                                        (std::isnan(out[i]) ? "NaN" : "infinite") + "; audio must be finite");
  } else {
    for (size_t i = 0; i < out.size(); ++i) {
      int16_t s;
      std::memcpy(&s, bytes.data() + i * 2, 2);
      out[i] = float(s) / 32768.0f;
    }
  }
  return out;
}

}  // namespace

Napi::Function NativeRealtime::define(Napi::Env env) {
  return DefineClass(env, "NativeRealtime",
                     {InstanceMethod<&NativeRealtime::push>("push"), InstanceMethod<&NativeRealtime::end>("end"),
                      InstanceMethod<&NativeRealtime::stop>("stop"), InstanceMethod<&NativeRealtime::abort>("abort"),
                      InstanceMethod<&NativeRealtime::next_slice>("nextSlice")});
}

Napi::Value NativeRealtime::start(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject() || !info[2].IsFunction())
    throw Napi::TypeError::New(env, "startRealtime(context, options, onEvent)");
  return addon_data(env).realtime_ctor.New({info[0], info[1], info[2]});
}

NativeRealtime::NativeRealtime(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeRealtime>(info) {
  const Napi::Env env = info.Env();
  const Napi::Object ctx_obj = info[0].As<Napi::Object>();
  if (!ctx_obj.InstanceOf(addon_data(env).context_ctor.Value()))
    throw Napi::TypeError::New(env, "transcribeRealtime: not a WhisperContext");
  owner_ = NativeContext::Unwrap(ctx_obj);
  auto s = std::make_shared<Shared>();
  s->ctx = owner_->acquire(env, "transcribeRealtime");
  const Napi::Object o = options_object(info[1], "transcribeRealtime");
  const hark::RealtimeOptions options = realtime_options_from_js(o);
  const std::string source = get_enum(o, "audioSource", {"microphone", "push"}, "microphone");
  std::shared_ptr<hark::AudioSource> src;
  try {
    if (source == "push") {
      const int rate = int(get_int(o, "sampleRate", 16000, 1000, 768000));
      channels_ = int(get_int(o, "channels", 1, 1, 256));
      is_float_bytes_ = get_enum(o, "pcmFormat", {"int16", "float32"}, "int16") == "float32";
      // Not live by default: audio pushed faster than real time (a file, a stream) waits for
      // room instead of being dropped. live: true for a microphone's chunks.
      s->push_source = hark::open_push_source(get_bool(o, "live", false), rate, channels_);
      src = s->push_source;
    } else {
      src = hark::open_capture_source(get_string(o, "captureDevice", "default"));
    }
  } catch (const hark::Error& e) {
    throw Napi::Error::New(
        env, std::string("transcribeRealtime: ") + e.what() +
                 (source == "push" ? "" : " (pass audioSource: 'push' or audioStream to feed PCM yourself)"));
  }
  on_event_ = Napi::Persistent(info[2].As<Napi::Function>());
  s->queue = JsThreadQueue::create(env, "hark.realtime");
  auto queue = s->queue;
  try {
    s->rt = hark::RealtimeTranscriber::start(*s->ctx, src, options, [this, queue](const hark::RealtimeEvent& e) {
      std::string json = hark::to_json(e);
      queue->post([this, json = std::move(json)](Napi::Env env) {
        if (!on_event_.IsEmpty()) on_event_.Call({Napi::String::New(env, json)});
      });
    });
  } catch (...) {
    s->queue->close();
    CaughtError e = current_error();
    e.message = "transcribeRealtime: " + e.message;
    throw js_error(env, e);
  }
  job_id_ = s->rt->job_id();
  info.This().As<Napi::Object>().Set("jobId", Napi::Number::New(env, job_id_));
  Ref();  // alive until the last event, whatever JS holds
  owner_->job_started(job_id_, [id = job_id_] { hark::jobs::abort(id); });
  shared_ = s;
  if (s->push_source) s->feeder = std::thread(feed, s, this);
  s->watcher = std::thread(watch, s, this);
}

NativeRealtime::~NativeRealtime() {
  if (shared_ && shared_->watcher.joinable()) shared_->watcher.join();
}

void NativeRealtime::feed(std::shared_ptr<Shared> s, NativeRealtime* self) {
  for (;;) {
    Shared::Chunk c;
    {
      std::unique_lock<std::mutex> lock(s->mu);
      s->cv.wait(lock, [&] { return s->quit || !s->chunks.empty(); });
      if (s->chunks.empty()) return;  // quit
      c = std::move(s->chunks.front());
      s->chunks.pop_front();
    }
    std::string error;
    try {
      if (c.end)
        s->push_source->finish();
      else if (!c.samples.empty())
        s->push_source->push(c.samples);
    } catch (...) {
      error = current_exception_message();
    }
    // A refused chunk (a NaN sample, a part frame) ends nothing: its push() rejects, the
    // stream goes on. Its result travels on the stream's queue, in order with the events.
    const uint64_t seq = c.seq;
    if (seq) s->queue->post([self, seq, error](Napi::Env) { self->resolve_pushes(seq, error); });
  }
}

void NativeRealtime::watch(std::shared_ptr<Shared> s, NativeRealtime* self) {
  s->rt->wait();
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->quit = true;
  }
  s->cv.notify_all();
  if (s->feeder.joinable()) s->feeder.join();
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->rt.reset();  // stops the source, forgets the job
  }
  s->queue->post([self](Napi::Env) { self->finish(); });
  s->queue->close();
}

void NativeRealtime::resolve_pushes(uint64_t fed_up_to, const std::string& error) {
  while (!pending_pushes_.empty() && pending_pushes_.begin()->first <= fed_up_to) {
    auto& d = pending_pushes_.begin()->second;
    if (pending_pushes_.begin()->first == fed_up_to && !error.empty())
      d.Reject(Napi::Error::New(Env(), "push: " + error).Value());
    else
      d.Resolve(Env().Undefined());
    pending_pushes_.erase(pending_pushes_.begin());
  }
}

void NativeRealtime::finish() {
  finished_ = true;
  resolve_pushes(UINT64_MAX, "");  // what was never fed is dropped, as pushes after the end are
  if (!on_event_.IsEmpty()) on_event_.Call({Env().Null()});
  on_event_.Reset();
  for (auto& d : stop_waiters_) d.Resolve(Env().Undefined());
  stop_waiters_.clear();
  owner_->job_finished(job_id_);
  Unref();
}

Napi::Value NativeRealtime::push(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  if (!shared_ || !shared_->push_source)
    throw Napi::Error::New(env, "push: this stream takes its audio from the microphone (audioSource 'push' to push)");
  std::vector<float> values =
      chunk_values(info.Length() > 0 ? info[0] : env.Undefined(), is_float_bytes_, channels_, carry_);
  auto d = Napi::Promise::Deferred::New(env);
  if (finished_) {
    d.Resolve(env.Undefined());
    return d.Promise();
  }
  const uint64_t seq = next_seq_++;
  pending_pushes_.emplace(seq, d);
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->chunks.push_back({std::move(values), false, seq});
  }
  shared_->cv.notify_all();
  return d.Promise();
}

Napi::Value NativeRealtime::end(const Napi::CallbackInfo& info) {
  if (shared_ && shared_->push_source && !finished_) {
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      shared_->chunks.push_back({{}, true, 0});
    }
    shared_->cv.notify_all();
  }
  return info.Env().Undefined();
}

Napi::Value NativeRealtime::stop(const Napi::CallbackInfo& info) {
  auto d = Napi::Promise::Deferred::New(info.Env());
  if (finished_) {
    d.Resolve(info.Env().Undefined());
    return d.Promise();
  }
  stop_waiters_.push_back(d);
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (shared_->rt) shared_->rt->stop();
  }
  return d.Promise();
}

Napi::Value NativeRealtime::next_slice(const Napi::CallbackInfo& info) {
  if (shared_ && !finished_) {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (shared_->rt) shared_->rt->next_slice();
  }
  return info.Env().Undefined();
}

Napi::Value NativeRealtime::abort(const Napi::CallbackInfo& info) {
  hark::jobs::abort(job_id_);
  return stop(info);
}

}  // namespace hark_node
