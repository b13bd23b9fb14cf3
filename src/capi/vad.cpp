// The C API: voice activity detection (hark_vad_*; its params converted and defaulted here).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

struct hark_vad_context {
  std::shared_ptr<hark::VadModel> impl;
  hark::capi::Activity activity;
};

struct hark_vad_stream {
  std::unique_ptr<hark::VadStream> impl;
  hark::capi::Activity activity;
};

struct hark_vad_result {
  hark::VadResult r;
};

namespace {

constexpr size_t kVadContextParamsV1 = offsetof(hark_vad_context_params, device) + sizeof(const char*);
constexpr size_t kVadParamsV1 = offsetof(hark_vad_params, max_speech_duration_s) + sizeof(double);
constexpr size_t kEnergyVadParamsV1 = offsetof(hark_energy_vad_params, freq_thold) + sizeof(double);
constexpr size_t kEnergyVadResultV1 = offsetof(hark_energy_vad_result, energy_last) + sizeof(float);
static_assert(sizeof(hark_vad_context_params) == kVadContextParamsV1, "must end on a pointer-sized field");
static_assert(sizeof(hark_vad_params) == kVadParamsV1, "must end on a pointer-sized field");
static_assert(sizeof(hark_energy_vad_params) == kEnergyVadParamsV1, "must end on a pointer-sized field");

hark_vad_context_params vad_context_defaults() {
  hark_vad_context_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.n_threads = hark::VadModelParams{}.n_threads;
  p.device = nullptr;
  return p;
}

hark_vad_params vad_defaults() {
  const hark::VadOptions o;
  hark_vad_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.threshold = o.threshold;
  p.min_speech_duration_ms = o.min_speech_duration_ms;
  p.min_silence_duration_ms = o.min_silence_duration_ms;
  p.speech_pad_ms = o.speech_pad_ms;
  p.samples_overlap = o.samples_overlap;
  p.max_speech_duration_s = o.max_speech_duration_s;
  return p;
}

hark_energy_vad_params energy_vad_defaults() {
  const hark::EnergyVadOptions o;
  hark_energy_vad_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.vad_ms = o.vad_ms;
  p.last_ms = o.last_ms;
  p.vad_thold = o.vad_thold;
  p.freq_thold = o.freq_thold;
  return p;
}

void require_vad_samples(const float* samples, size_t n) {
  require(samples != nullptr || n == 0, "samples is NULL but n_samples is " + std::to_string(n));
}

std::span<const float> samples_span(const float* samples, size_t n) {
  return n == 0 ? std::span<const float>() : std::span<const float>(samples, n);
}

template <typename T, typename F>
T get_vad(const char* fn, const hark_vad_result* r, T sentinel, F&& f) noexcept {
  T v = sentinel;
  guarded(fn, HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(r, Kind::VadResult, "result");
    v = f(r->r);
  });
  return v;
}

const hark::VadSegment& vad_segment(const hark::VadResult& r, int i) {
  require(i >= 0 && static_cast<size_t>(i) < r.segments.size(),
          "segment index " + std::to_string(i) + " out of range (0.." + std::to_string(r.segments.size()) + ")");
  return r.segments[static_cast<size_t>(i)];
}

}  // namespace

extern "C" {

hark_status hark_vad_context_params_init(hark_vad_context_params* params, size_t params_size) {
  return guarded("hark_vad_context_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kVadContextParamsV1, vad_context_defaults(), "hark_vad_context_params");
  });
}

hark_status hark_vad_context_load(const char* model_path, const hark_vad_context_params* params,
                                  hark_vad_context** out) {
  return guarded("hark_vad_context_load", HARK_ERR_MODEL, [&] {
    require_out(out);
    const hark_vad_context_params p =
        read_params(params, kVadContextParamsV1, vad_context_defaults(), "hark_vad_context_default_params");
    // The library checks the values (n_threads, device) and the file.
    hark::VadModelParams mp;
    mp.n_threads = p.n_threads;
    mp.upstream_context = p.upstream_context;
    if (p.device) mp.device = p.device;
    check_path(model_path, "model_path");
    auto ctx = std::make_unique<hark_vad_context>();
    ctx->impl = hark::VadModel::load(model_path, mp);  // hark::Error: HARK_ERR_MODEL
    handles().add(ctx.get(), Kind::VadContext);
    *out = ctx.release();
  });
}

hark_status hark_vad_context_free(hark_vad_context* ctx) {
  return guarded("hark_vad_context_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(ctx, Kind::VadContext, "ctx");
    delete ctx;
  });
}

hark_status hark_vad_params_init(hark_vad_params* params, size_t params_size) {
  return guarded("hark_vad_params_init", HARK_ERR_INTERNAL,
                 [&] { init_params(params, params_size, kVadParamsV1, vad_defaults(), "hark_vad_params"); });
}

hark_status hark_vad_detect_speech(hark_vad_context* ctx, const float* samples, size_t n_samples,
                                   const hark_vad_params* params, hark_vad_result** out) {
  return guarded("hark_vad_detect_speech", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::VadContext, "ctx", l);
    require_vad_samples(samples, n_samples);
    const hark_vad_params p = read_params(params, kVadParamsV1, vad_defaults(), "hark_vad_default_params");
    const hark::VadOptions o = vad_options(p.threshold, p.min_speech_duration_ms, p.min_silence_duration_ms,
                                           p.speech_pad_ms, p.samples_overlap, p.max_speech_duration_s);
    auto r = std::make_unique<hark_vad_result>();
    r->r =
        phase(HARK_ERR_INVALID_ARGUMENT, [&] { return ctx->impl->detect_speech(samples_span(samples, n_samples), o); });
    handles().add(r.get(), Kind::VadResult);
    *out = r.release();
  });
}

hark_status hark_vad_result_free(hark_vad_result* result) {
  return guarded("hark_vad_result_free", HARK_ERR_INTERNAL, [&] {
    if (!handles().remove(result, Kind::VadResult)) bad_handle(result, Kind::VadResult, "result");
    delete result;
  });
}

int hark_vad_result_n_segments(const hark_vad_result* result) {
  return get_vad("hark_vad_result_n_segments", result, -1,
                 [](const hark::VadResult& r) { return static_cast<int>(r.segments.size()); });
}

int64_t hark_vad_result_segment_t0(const hark_vad_result* result, int i) {
  return get_vad("hark_vad_result_segment_t0", result, int64_t{-1},
                 [i](const hark::VadResult& r) { return vad_segment(r, i).t0; });
}

int64_t hark_vad_result_segment_t1(const hark_vad_result* result, int i) {
  return get_vad("hark_vad_result_segment_t1", result, int64_t{-1},
                 [i](const hark::VadResult& r) { return vad_segment(r, i).t1; });
}

int hark_vad_result_n_probs(const hark_vad_result* result) {
  return get_vad("hark_vad_result_n_probs", result, -1,
                 [](const hark::VadResult& r) { return static_cast<int>(r.probs.size()); });
}

const float* hark_vad_result_probs(const hark_vad_result* result) {
  return get_vad("hark_vad_result_probs", result, static_cast<const float*>(nullptr),
                 [](const hark::VadResult& r) { return r.probs.data(); });
}

hark_status hark_vad_stream_new(hark_vad_context* ctx, hark_vad_stream** out) {
  return guarded("hark_vad_stream_new", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::VadContext, "ctx", l);
    auto s = std::make_unique<hark_vad_stream>();
    s->impl = ctx->impl->stream();
    handles().add(s.get(), Kind::VadStream);
    *out = s.release();
  });
}

hark_status hark_vad_stream_free(hark_vad_stream* stream) {
  return guarded("hark_vad_stream_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(stream, Kind::VadStream, "stream");
    delete stream;
  });
}

hark_status hark_vad_stream_push(hark_vad_stream* stream, const float* samples, size_t n_samples, float* probs,
                                 size_t probs_cap, size_t* n_probs) {
  return guarded("hark_vad_stream_push", HARK_ERR_FAILED, [&] {
    require(n_probs != nullptr, "n_probs is NULL");
    *n_probs = 0;
    std::optional<Lease> l;
    lease(stream, Kind::VadStream, "stream", l);
    require_vad_samples(samples, n_samples);
    const size_t w = static_cast<size_t>(stream->impl->frame_samples());
    const size_t completes = (stream->impl->pending_samples() + n_samples) / w;
    require(probs != nullptr || completes == 0,
            "probs is NULL but this chunk completes " + std::to_string(completes) + " frames");
    require(probs_cap >= completes, "probs_cap " + std::to_string(probs_cap) + " is too small: this chunk completes " +
                                        std::to_string(completes) + " frames");
    const std::vector<float> p =
        phase(HARK_ERR_INVALID_ARGUMENT, [&] { return stream->impl->push(samples_span(samples, n_samples)); });
    std::copy(p.begin(), p.end(), probs);
    *n_probs = p.size();
  });
}

hark_status hark_vad_stream_flush(hark_vad_stream* stream, float* prob, bool* ran) {
  return guarded("hark_vad_stream_flush", HARK_ERR_FAILED, [&] {
    require(prob != nullptr && ran != nullptr, "prob and ran must not be NULL");
    *ran = false;
    std::optional<Lease> l;
    lease(stream, Kind::VadStream, "stream", l);
    const std::vector<float> p = stream->impl->flush();
    if (!p.empty()) {
      *prob = p[0];
      *ran = true;
    }
  });
}

hark_status hark_vad_stream_reset(hark_vad_stream* stream) {
  return guarded("hark_vad_stream_reset", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(stream, Kind::VadStream, "stream", l);
    stream->impl->reset();
  });
}

hark_status hark_energy_vad_params_init(hark_energy_vad_params* params, size_t params_size) {
  return guarded("hark_energy_vad_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kEnergyVadParamsV1, energy_vad_defaults(), "hark_energy_vad_params");
  });
}

hark_status hark_energy_vad(const float* samples, size_t n_samples, const hark_energy_vad_params* params,
                            hark_energy_vad_result* out, size_t out_size) {
  return guarded("hark_energy_vad", HARK_ERR_INVALID_ARGUMENT, [&] {
    require_vad_samples(samples, n_samples);
    const hark_energy_vad_params p =
        read_params(params, kEnergyVadParamsV1, energy_vad_defaults(), "hark_energy_vad_default_params");
    hark::EnergyVadOptions o;
    o.vad_ms = p.vad_ms;
    o.last_ms = p.last_ms;
    o.vad_thold = p.vad_thold;
    o.freq_thold = static_cast<float>(p.freq_thold);
    const hark::EnergyVadResult r = hark::energy_vad(samples_span(samples, n_samples), o);
    hark_energy_vad_result v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    v.detected = r.detected;
    v.energy_all = r.energy_all;
    v.energy_last = r.energy_last;
    write_out(out, out_size, kEnergyVadResultV1, v);
  });
}

}  // extern "C"
