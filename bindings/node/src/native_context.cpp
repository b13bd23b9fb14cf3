// NativeContext (see the header).
#include "native_context.h"

#include <thread>

#include "addon_data.h"
#include "audio_input.h"
#include "js_options.h"
#include "js_thread_queue.h"
#include "result_to_js.h"
#include "transcribe_options.h"

namespace hark_node {

Napi::Function NativeContext::define(Napi::Env env) {
  return DefineClass(
      env, "NativeContext",
      {InstanceMethod<&NativeContext::transcribe>("transcribe"), InstanceMethod<&NativeContext::abort_job>("abortJob"),
       InstanceMethod<&NativeContext::bench>("bench"), InstanceMethod<&NativeContext::release>("release"),
       InstanceMethod<&NativeContext::running_jobs>("runningJobs")});
}

NativeContext::NativeContext(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NativeContext>(info) {
  if (info.Length() != 1 || !info[0].IsExternal())
    throw Napi::TypeError::New(info.Env(), "NativeContext is made by loadContext(), not directly");
  ctx_ = *info[0].As<Napi::External<std::shared_ptr<hark::Context>>>().Data();
  id_ = addon_data(info.Env()).next_context_id++;
  Napi::Object self = info.This().As<Napi::Object>();
  const hark::DeviceChoice& dev = ctx_->device();
  self.Set("id", Napi::Number::New(info.Env(), id_));
  // whisper.rn's ptr: the native context's address (a number; under 2^53 on 64-bit Linux).
  self.Set("ptr", Napi::Number::New(info.Env(), double(reinterpret_cast<uintptr_t>(ctx_.get()))));
  self.Set("gpu", Napi::Boolean::New(info.Env(), dev.gpu));
  self.Set("reasonNoGPU", dev.reason_no_gpu);
  self.Set("device", dev.name);
  const hark::ModelInfo& mi = ctx_->info();
  Napi::Object model = Napi::Object::New(info.Env());
  model.Set("path", mi.path);
  model.Set("type", mi.size_name);
  model.Set("weightType", mi.weight_type);
  model.Set("multilingual", Napi::Boolean::New(info.Env(), mi.multilingual));
  self.Set("model", model);
}

Napi::Value NativeContext::load(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString() || info[0].As<Napi::String>().Utf8Value().empty())
    throw Napi::TypeError::New(env, "initWhisper: filePath must be a non-empty string (the model file), got " +
                                        (info.Length() < 1 ? std::string("nothing") : describe_js_type(info[0])));
  std::string path = info[0].As<Napi::String>().Utf8Value();
  if (path.rfind("file://", 0) == 0) path.erase(0, 7);
  const Napi::Object o = options_object(info.Length() > 1 ? info[1] : env.Undefined(), "initWhisper");
  hark::ContextParams params;
  params.use_gpu = get_bool(o, "useGpu", true);
  params.flash_attn = get_bool(o, "useFlashAttn", false);  // whisper.rn's default
  params.device = get_string(o, "device", "");
  const std::string kv = get_string(o, "crossKvType", "f16");
  try {
    params.cross_kv_type = hark::parse_kv_cache_type(kv);
  } catch (const hark::Error&) {
    throw Napi::TypeError::New(env, "initWhisper: crossKvType must be 'f16' or 'q8_0', got '" + kv + "'");
  }
  return run_off_js_thread(env, "hark.initWhisper", [path, params]() -> ValueBuilder {
    std::shared_ptr<hark::Context> ctx = hark::Context::load(path, params);
    return [ctx](Napi::Env env) mutable -> Napi::Value {
      return addon_data(env).context_ctor.New({Napi::External<std::shared_ptr<hark::Context>>::New(env, &ctx)});
    };
  });
}

std::shared_ptr<hark::Context> NativeContext::acquire(Napi::Env env, const char* what) {
  if (released_ || !ctx_)
    throw Napi::Error::New(env, std::string(what) + ": WhisperContext " + std::to_string(id_) + " has been released");
  return ctx_;
}

void NativeContext::job_started(int job_id, std::function<void()> abort) {
  running_[job_id] = Running{std::move(abort), {}};
  Ref();  // the JS object must outlive its jobs: their completions come back to it
}

void NativeContext::job_finished(int job_id) {
  auto it = running_.find(job_id);
  if (it == running_.end()) return;
  std::vector<Napi::Promise::Deferred> waiters = std::move(it->second.stop_waiters);
  running_.erase(it);
  for (auto& d : waiters) d.Resolve(Env().Undefined());
  if (released_ && running_.empty()) {
    ctx_.reset();
    std::vector<Napi::Promise::Deferred> rw = std::move(release_waiters_);
    for (auto& d : rw) d.Resolve(Env().Undefined());
  }
  Unref();
}

namespace {

// The JS callbacks of one transcription. Made and read on the JS thread only; the worker holds
// the pointer, never touches the references (the last task resets them on the JS thread).
struct JobCallbacks {
  Napi::FunctionReference on_progress;
  Napi::FunctionReference on_new_segments;
  ResultShape shape;
};

}  // namespace

Napi::Value NativeContext::transcribe(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  const std::string kind = info.Length() > 0 && info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  const char* what = kind == "data" ? "transcribeData" : "transcribe";
  std::shared_ptr<hark::Context> ctx = acquire(env, what);
  const Napi::Object o = options_object(info.Length() > 2 ? info[2] : env.Undefined(), what);
  AudioInput input = kind == "data" ? audio_from_data_arg(info.Length() > 1 ? info[1] : env.Undefined(), o, what)
                                    : audio_from_path_arg(info.Length() > 1 ? info[1] : env.Undefined(), what);
  hark::TranscribeParams params = transcribe_params_from_js(o);
  auto callbacks = std::make_shared<JobCallbacks>();
  callbacks->shape.tokens = params.token_timestamps;
  callbacks->shape.speaker_turns = params.tdrz_enable;
  if (Napi::Function f = get_function(o, "onProgress"); !f.IsEmpty()) callbacks->on_progress = Napi::Persistent(f);
  if (Napi::Function f = get_function(o, "onNewSegments"); !f.IsEmpty())
    callbacks->on_new_segments = Napi::Persistent(f);

  std::shared_ptr<hark::Job> job = hark::jobs::create();
  const int job_id = job->id();
  params.job = job;
  auto queue = JsThreadQueue::create(env, "hark.transcribe");
  if (!callbacks->on_progress.IsEmpty())
    params.on_progress = [queue, callbacks](int percent) {
      queue->post([callbacks, percent](Napi::Env env) {
        if (!callbacks->on_progress.IsEmpty()) callbacks->on_progress.Call({Napi::Number::New(env, percent)});
      });
    };
  if (!callbacks->on_new_segments.IsEmpty())
    params.on_new_segments = [queue, callbacks](const hark::NewSegments& ns) {
      auto segs = std::make_shared<std::vector<hark::Segment>>(ns.segments.begin(), ns.segments.end());
      const int n_new = ns.n_new, total = ns.total;
      queue->post([callbacks, segs, n_new, total](Napi::Env env) {
        if (callbacks->on_new_segments.IsEmpty()) return;
        callbacks->on_new_segments.Call({new_segments_to_js(env, *segs, n_new, total, callbacks->shape)});
      });
    };

  auto deferred = Napi::Promise::Deferred::New(env);
  job_started(job_id, [job] { job->abort(); });
  std::thread([this, ctx, input = std::move(input), params = std::move(params), queue, callbacks, deferred, job_id,
               job]() mutable {
    std::shared_ptr<hark::Transcript> result;
    CaughtError error;
    try {
      const std::vector<float> samples = decode_audio_input(input);
      result = std::make_shared<hark::Transcript>(ctx->transcribe(samples, params));
    } catch (...) {
      error = current_error();
      // The library names the C++ field; say this API's name for it too.
      if (const std::string js = js_option_name(error.field); !js.empty()) error.message += " (option '" + js + "')";
    }
    hark::jobs::remove(job_id);
    params = hark::TranscribeParams{};  // drops the callbacks' copies on this thread
    ctx.reset();
    queue->post([this, callbacks, deferred, job_id, result, error](Napi::Env env) {
      if (result)
        deferred.Resolve(transcript_to_js(env, *result, callbacks->shape));
      else
        deferred.Reject(js_error(env, error).Value());
      callbacks->on_progress.Reset();
      callbacks->on_new_segments.Reset();
      job_finished(job_id);
    });
    queue->close();
  }).detach();

  Napi::Object out = Napi::Object::New(env);
  out.Set("jobId", Napi::Number::New(env, job_id));
  out.Set("promise", deferred.Promise());
  return out;
}

Napi::Value NativeContext::abort_job(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  auto d = Napi::Promise::Deferred::New(env);
  if (info.Length() < 1 || !info[0].IsNumber()) {
    d.Reject(Napi::TypeError::New(env, "abortJob: jobId must be a number").Value());
    return d.Promise();
  }
  auto it = running_.find(info[0].As<Napi::Number>().Int32Value());
  if (it == running_.end()) {
    d.Resolve(env.Undefined());  // already returned: nothing to stop
    return d.Promise();
  }
  it->second.abort();
  it->second.stop_waiters.push_back(d);
  return d.Promise();
}

Napi::Value NativeContext::bench(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  std::shared_ptr<hark::Context> ctx = acquire(env, "bench");
  int n_threads = default_max_threads();
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    const double d = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 1 && d <= 256 && d == double(int(d))))
      throw Napi::TypeError::New(env,
                                 "bench: maxThreads must be an integer in [1, 256], got " + describe_js_type(info[0]));
    n_threads = int(d);
  }
  // bench cannot be aborted; release() waits for it. Its id is below 0, never a job's.
  static int next_bench_id = -1;
  const int id = next_bench_id--;
  job_started(id, [] {});
  auto deferred = Napi::Promise::Deferred::New(env);
  auto queue = JsThreadQueue::create(env, "hark.bench");
  std::thread([this, ctx, n_threads, deferred, queue, id]() mutable {
    std::shared_ptr<hark::BenchResult> result;
    CaughtError error;
    try {
      result = std::make_shared<hark::BenchResult>(ctx->bench(n_threads));
    } catch (...) {
      error = current_error();
    }
    ctx.reset();
    queue->post([this, deferred, result, error, id](Napi::Env env) {
      if (result)
        deferred.Resolve(bench_to_js(env, *result));
      else
        deferred.Reject(js_error(env, error).Value());
      job_finished(id);
    });
    queue->close();
  }).detach();
  return deferred.Promise();
}

Napi::Value NativeContext::release(const Napi::CallbackInfo& info) {
  const Napi::Env env = info.Env();
  auto d = Napi::Promise::Deferred::New(env);
  released_ = true;
  if (running_.empty()) {
    ctx_.reset();
    d.Resolve(env.Undefined());
    return d.Promise();
  }
  for (auto& [id, r] : running_) r.abort();
  release_waiters_.push_back(d);
  return d.Promise();
}

Napi::Value NativeContext::running_jobs(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), double(running_.size()));
}

}  // namespace hark_node
