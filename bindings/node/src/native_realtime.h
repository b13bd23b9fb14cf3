// NativeRealtime: one live transcription (hark::RealtimeTranscriber) as a JS object, under
// whisper.rn's transcribeRealtime (index.js).
//
// The audio comes from the microphone (hark's capture) or from JavaScript: push(chunk) hands PCM
// over (a Node Readable is fed through it), end() says there is no more. A feeder thread does the
// pushing, so a full ring (the transcriber is behind) holds back the push's promise, not the JS
// thread. Each event goes to onEvent(json) as whisper.rn's TranscribeRealtimeEvent keys; after the
// last one onEvent(null). The stream is one of its context's jobs: releasing the context aborts it.
#pragma once
#include <napi.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hark/hark.hpp"

namespace hark_node {

class NativeContext;

class NativeRealtime : public Napi::ObjectWrap<NativeRealtime> {
 public:
  static Napi::Function define(Napi::Env env);
  // startRealtime(context, options, onEvent) -> NativeRealtime
  static Napi::Value start(const Napi::CallbackInfo& info);
  explicit NativeRealtime(const Napi::CallbackInfo& info);
  ~NativeRealtime() override;

 private:
  Napi::Value push(const Napi::CallbackInfo& info);   // (Float32Array | Int16Array | Buffer | ArrayBuffer) -> Promise
  Napi::Value end(const Napi::CallbackInfo& info);    // no more audio (push source)
  Napi::Value stop(const Napi::CallbackInfo& info);   // whisper.rn's stop(): -> Promise once the last event is out
  Napi::Value abort(const Napi::CallbackInfo& info);  // ends at once, what is not transcribed is dropped
  Napi::Value next_slice(const Napi::CallbackInfo& info);  // closes the open slice where the audio is now

  struct Shared;  // what the feeder and watcher threads share with the JS thread
  static void feed(std::shared_ptr<Shared> s, NativeRealtime* self);  // the feeder thread: pushes chunks in order
  // The watcher thread: waits for the transcriber's last event, then ends the feeder and the stream.
  static void watch(std::shared_ptr<Shared> s, NativeRealtime* self);
  void resolve_pushes(uint64_t fed_up_to, const std::string& error);  // JS thread
  void finish();                                                      // JS thread, after the last event

  std::shared_ptr<Shared> shared_;
  std::map<uint64_t, Napi::Promise::Deferred> pending_pushes_;
  uint64_t next_seq_ = 1;
  NativeContext* owner_ = nullptr;
  int job_id_ = 0;
  int channels_ = 1;
  bool is_float_bytes_ = false;       // how Buffer / ArrayBuffer chunks are read
  std::vector<unsigned char> carry_;  // bytes of a part frame, until the next chunk completes it
  Napi::FunctionReference on_event_;
  std::vector<Napi::Promise::Deferred> stop_waiters_;
  bool finished_ = false;
};

}  // namespace hark_node
