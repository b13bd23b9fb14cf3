// The C API: realtime streams (hark_stream_*; their params converted and defaulted here).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

struct hark_stream {
  std::shared_ptr<hark::PushSource> source;
  // Shared with the state it runs on, if lent one (hark_state::lent_to), so that freeing the state
  // can end the stream while hark_stream_free runs at the same time.
  std::shared_ptr<hark::RealtimeTranscriber> impl;
  hark_stream_event_callback on_event = nullptr;
  void* user_data = nullptr;
  int channels = 1;
  hark::capi::Activity activity;
};

namespace {

constexpr size_t kStreamParamsV1 = offsetof(hark_stream_params, user_data) + sizeof(void*);
// Four-byte fields after the pointer come in pairs: no tail padding, so each version's size differs.
static_assert(sizeof(hark_stream_params) == offsetof(hark_stream_params, ring_sec) + sizeof(float),
              "hark_stream_params must end without tail padding");

hark_stream_params stream_defaults() {
  const hark::RealtimeOptions o;
  hark_stream_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.audio_sec = o.audio_sec;
  p.audio_slice_sec = o.audio_slice_sec;
  p.audio_min_sec = o.audio_min_sec;
  p.partial_sec = o.partial_sec;
  p.use_vad = o.use_vad;
  p.live = true;
  p.vad_ms = o.vad_ms;
  p.vad_thold = o.vad_thold;
  p.vad_freq_thold = o.vad_freq_thold;
  p.language = "en";
  p.sample_rate = hark::kSampleRate;
  p.channels = 1;
  p.audio_output_bits = o.audio_output_bits;
  p.vad_threshold = o.vad_threshold;
  p.vad_silence_ms = o.vad_silence_ms;
  p.ring_sec = float(o.ring_sec);
  return p;
}

// The C view of an event, on the stream's thread; its strings live until the callback returns.
void deliver(const hark_stream* s, const hark::RealtimeEvent& e) {
  if (!s->on_event) return;
  const std::string json = hark::to_json(e);
  bool final = false;
  for (const hark::RealtimeSlice& sl : e.slices)
    if (sl.index == e.slice_index) final = sl.final;
  hark_stream_event c;
  std::memset(static_cast<void*>(&c), 0, sizeof c);
  c.job_id = e.job_id;
  c.code = e.code;
  c.error = e.error.c_str();
  c.is_capturing = e.is_capturing;
  c.is_stopped_by_action = e.is_stopped_by_action;
  c.slice_final = final;
  c.slice_index = e.slice_index;
  c.result = e.data.result.c_str();
  c.process_time_ms = e.process_time_ms;
  c.recording_time_ms = e.recording_time_ms;
  c.dropped_samples = e.dropped_samples;
  c.json = json.c_str();
  CallbackScope scope(s);
  s->on_event(&c, s->user_data);
}

}  // namespace

extern "C" {

hark_status hark_stream_params_init(hark_stream_params* params, size_t params_size) {
  return guarded("hark_stream_params_init", HARK_ERR_INTERNAL,
                 [&] { init_params(params, params_size, kStreamParamsV1, stream_defaults(), "hark_stream_params"); });
}

}  // extern "C"

namespace {

// What both ways of creating a stream share: params read and checked, the push source made, the
// transcriber started by `start(handle, source, options, on_event)` and the handle registered.
template <typename Start>
void create_stream(const hark_stream_params* params, hark_stream** out, Start&& start) {
  const hark_stream_params p = read_params(params, kStreamParamsV1, stream_defaults(), "hark_stream_default_params");
  hark::RealtimeOptions o;
  o.audio_sec = p.audio_sec;
  o.audio_slice_sec = p.audio_slice_sec;
  o.audio_min_sec = p.audio_min_sec;
  o.partial_sec = p.partial_sec;
  if (p.audio_output_path) o.audio_output_path = p.audio_output_path;
  o.use_vad = p.use_vad;
  o.vad_ms = p.vad_ms;
  o.vad_thold = p.vad_thold;
  o.vad_freq_thold = p.vad_freq_thold;
  if (p.vad_model_path) o.vad_model_path = p.vad_model_path;
  o.audio_output_bits = p.audio_output_bits;
  o.vad_threshold = p.vad_threshold;
  o.vad_silence_ms = p.vad_silence_ms;
  o.ring_sec = p.ring_sec;
  o.n_threads = p.n_threads;
  require(p.sample_rate >= 1000 && p.sample_rate <= 768000,
          "params->sample_rate " + std::to_string(p.sample_rate) + " Hz is out of range (1000..768000)");
  require(p.channels >= 1 && p.channels <= 256,
          "params->channels " + std::to_string(p.channels) + " is out of range (1..256)");
  require(p.n_threads >= 0,
          "params->n_threads must be >= 0 (0: the context's or state's), got " + std::to_string(p.n_threads));
  auto tp = std::make_shared<hark::TranscribeParams>();
  if (p.language) tp->language = p.language;
  o.transcribe = tp;
  auto s = std::make_unique<hark_stream>();
  s->on_event = p.on_event;
  s->user_data = p.user_data;
  s->channels = p.channels;
  s->source = hark::open_push_source(p.live, p.sample_rate, p.channels);
  const hark_stream* raw = s.get();
  s->impl = start(raw, s->source, o, [raw](const hark::RealtimeEvent& e) { deliver(raw, e); });
  handles().add(s.get(), Kind::Stream);
  *out = s.release();
}

}  // namespace

extern "C" {

hark_status hark_stream_create(hark_context* ctx, const hark_stream_params* params, hark_stream** out) {
  return guarded("hark_stream_create", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    create_stream(params, out, [&](const hark_stream*, auto source, const hark::RealtimeOptions& o, auto on_event) {
      return hark::RealtimeTranscriber::start(*ctx->impl, std::move(source), o, std::move(on_event));
    });
  });
}

hark_status hark_stream_create_on_state(hark_state* state, const hark_stream_params* params, hark_stream** out) {
  return guarded("hark_stream_create_on_state", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(state, Kind::State, "state", l);
    // The state is marked lent before the transcriber starts, so that no transcription and no
    // second stream slips in meanwhile (not under the mutex: the stream's first event may call back).
    {
      std::lock_guard<std::mutex> guard(state->activity.mu);
      require(!state->lent(),
              "state is already lent to a stream (hark_stream_create_on_state); free that stream first");
      require(state->activity.calls == 1, "state is running a transcription; a stream needs the state to itself");
      state->lending = true;
    }
    struct Unmark {
      hark_state* st;
      ~Unmark() {
        std::lock_guard<std::mutex> guard(st->activity.mu);
        st->lending = false;
      }
    } unmark{state};
    create_stream(params, out,
                  [&](const hark_stream* handle, auto source, const hark::RealtimeOptions& o, auto on_event) {
                    {
                      std::lock_guard<std::mutex> guard(state->activity.mu);
                      state->lent_to_handle = handle;  // before its callback can run
                    }
                    std::shared_ptr<hark::RealtimeTranscriber> rt =
                        hark::RealtimeTranscriber::start(*state->impl, std::move(source), o, std::move(on_event));
                    std::lock_guard<std::mutex> guard(state->activity.mu);
                    state->lent_to = rt;
                    return rt;
                  });
  });
}

hark_status hark_stream_push(hark_stream* stream, const float* samples, size_t n_samples) {
  return guarded("hark_stream_push", HARK_ERR_INVALID_ARGUMENT, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    require(samples != nullptr || n_samples == 0, "samples is NULL");
    require(n_samples % size_t(stream->channels) == 0, "n_samples " + std::to_string(n_samples) +
                                                           " is not a whole number of frames of " +
                                                           std::to_string(stream->channels) + " channels");
    if (n_samples) stream->source->push(std::span<const float>(samples, n_samples));
  });
}

hark_status hark_stream_stop(hark_stream* stream) {
  return guarded("hark_stream_stop", HARK_ERR_INTERNAL, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    stream->impl->stop();
  });
}

hark_status hark_stream_next_slice(hark_stream* stream) {
  return guarded("hark_stream_next_slice", HARK_ERR_INTERNAL, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    stream->impl->next_slice();
  });
}

hark_status hark_stream_wait(hark_stream* stream) {
  return guarded("hark_stream_wait", HARK_ERR_INTERNAL, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::Stream, "stream", l);
    require(std::find(t_in_callback_of.begin(), t_in_callback_of.end(), static_cast<const void*>(stream)) ==
                t_in_callback_of.end(),
            "hark_stream_wait from the stream's own callback would wait for itself");
    stream->impl->wait();
  });
}

hark_status hark_stream_free(hark_stream* stream) {
  return guarded("hark_stream_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(stream, Kind::Stream, "stream");
    stream->impl.reset();  // stops and waits for the last event
    delete stream;
  });
}

}  // extern "C"
