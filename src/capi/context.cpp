// The C API: contexts, states and bench (hark_context_params converted and defaulted here).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

namespace {

hark_context_params context_defaults() {
  hark_context_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);
  p.struct_size = sizeof p;
  p.n_threads = 0;
  p.use_gpu = true;
  p.flash_attn = true;
  p.device = nullptr;
  p.load_progress_callback = nullptr;
  p.load_progress_user_data = nullptr;
  p.cross_kv_type = HARK_KV_F16;
  return p;
}

}  // namespace

extern "C" {

// ---- contexts ----

hark_status hark_context_params_init(hark_context_params* params, size_t params_size) {
  return guarded("hark_context_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kContextParamsV1, context_defaults(), "hark_context_params");
  });
}

hark_status hark_context_load(const char* model_path, const hark_context_params* params, hark_context** out) {
  return guarded("hark_context_load", HARK_ERR_MODEL, [&] {
    require_out(out);
    require(model_path != nullptr, "model_path is NULL");
    const hark_context_params p =
        read_params(params, kContextParamsV1, context_defaults(), "hark_context_default_params");
    // The enum read as its bytes (any int may come from C); the library checks the rest.
    require(
        p.cross_kv_type == HARK_KV_F16 || p.cross_kv_type == HARK_KV_Q8_0,
        "params->cross_kv_type must be HARK_KV_F16 (0) or HARK_KV_Q8_0 (1), got " + std::to_string(p.cross_kv_type));
    hark::ContextParams cp;
    cp.n_threads = p.n_threads;
    cp.use_gpu = p.use_gpu;
    cp.flash_attn = p.flash_attn;
    cp.cross_kv_type = p.cross_kv_type == HARK_KV_Q8_0 ? hark::KvCacheType::Q8_0 : hark::KvCacheType::F16;
    if (p.device) cp.device = p.device;
    if (p.load_progress_callback)
      cp.on_load_progress = [&p](uint64_t done, uint64_t total) {
        p.load_progress_callback(done, total, p.load_progress_user_data);
      };
    // A bare name that is no file here is found in the models folder (not there: HARK_ERR_IO); a
    // file that is not a model is HARK_ERR_MODEL.
    auto ctx = std::make_unique<hark_context>();
    ctx->impl = hark::Context::load(model_path, cp);
    ctx->describe = ctx->impl->info().describe();
    handles().add(ctx.get(), Kind::Context);
    *out = ctx.release();
  });
}

hark_status hark_context_free(hark_context* ctx) {
  return guarded("hark_context_free", HARK_ERR_INTERNAL, [&] {
    close_and_wait(ctx, Kind::Context, "ctx");
    delete ctx;
  });
}

hark_status hark_context_info(const hark_context* ctx, hark_model_info* out, size_t out_size) {
  return guarded("hark_context_info", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(ctx, Kind::Context, "ctx");
    const hark::ModelInfo& m = ctx->impl->info();
    hark_model_info i;
    std::memset(static_cast<void*>(&i), 0, sizeof i);
    i.path = m.path.c_str();
    i.size_name = m.size_name.c_str();
    i.weight_type = m.weight_type.c_str();
    i.multilingual = m.multilingual;
    i.n_vocab = m.n_vocab;
    i.n_audio_ctx = m.n_audio_ctx;
    i.n_audio_state = m.n_audio_state;
    i.n_audio_head = m.n_audio_head;
    i.n_audio_layer = m.n_audio_layer;
    i.n_text_ctx = m.n_text_ctx;
    i.n_text_state = m.n_text_state;
    i.n_text_head = m.n_text_head;
    i.n_text_layer = m.n_text_layer;
    i.n_mels = m.n_mels;
    i.ftype = m.ftype;
    i.file_bytes = m.file_bytes;
    i.tensor_bytes = m.tensor_bytes;
    i.mapped = m.mapped;
    i.load_ms = m.load_ms;
    write_out(out, out_size, kModelInfoV1, i);
  });
}

const char* hark_context_describe(const hark_context* ctx) {
  const char* s = nullptr;
  guarded("hark_context_describe", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(ctx, Kind::Context, "ctx");
    s = ctx->describe.c_str();
  });
  return s;
}

hark_status hark_context_device(const hark_context* ctx, hark_device_info* out, size_t out_size) {
  return guarded("hark_context_device", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_lock(ctx, Kind::Context, "ctx");
    write_out(out, out_size, kDeviceInfoV1, device_info(ctx->impl->device()));
  });
}

// ---- states ----

hark_status hark_state_new(hark_context* ctx, int n_threads, hark_state** out) {
  return guarded("hark_state_new", HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    require(n_threads >= 0, "n_threads must be >= 0 (0: the context's), got " + std::to_string(n_threads));
    auto state = std::make_unique<hark_state>();
    state->impl = ctx->impl->new_state(n_threads);
    handles().add(state.get(), Kind::State);
    *out = state.release();
  });
}

hark_status hark_state_free(hark_state* state) {
  return guarded("hark_state_free", HARK_ERR_INTERNAL, [&] {
    {
      const auto lock = read_lock(state, Kind::State, "state");
      std::lock_guard<std::mutex> guard(state->activity.mu);
      // Ending the stream waits for its thread, which runs its callback.
      require(!state->lent() || std::find(t_in_callback_of.begin(), t_in_callback_of.end(), state->lent_to_handle) ==
                                    t_in_callback_of.end(),
              "state is lent to the stream whose callback this call comes from; free it after hark_stream_free");
    }
    close_and_wait(state, Kind::State, "state");
    // No stream can be lent the state from now on (it is out of the registry, and a creation in
    // progress held a lease that close_and_wait waited for): end the one it is lent to, as
    // hark_job_abort would, and wait until its thread no longer touches the state.
    std::shared_ptr<hark::RealtimeTranscriber> stream;
    {
      std::lock_guard<std::mutex> guard(state->activity.mu);
      stream = state->lent_to.lock();
    }
    if (stream) {
      hark::jobs::abort(stream->job_id());
      stream->wait();
    }
    delete state;
  });
}

hark_status hark_state_bytes(const hark_state* state, size_t* out) {
  return guarded("hark_state_bytes", HARK_ERR_INTERNAL, [&] {
    require(out != nullptr, "out is NULL");
    const auto lock = read_lock(state, Kind::State, "state");
    *out = state->impl->bytes();
  });
}

// ---- bench ----

hark_status hark_bench(hark_context* ctx, int n_threads, hark_bench_result* out, size_t out_size) {
  return guarded("hark_bench", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    require(n_threads >= 0, "n_threads must be >= 0 (0: the context's), got " + std::to_string(n_threads));
    write_out(out, out_size, kBenchResultV1, hark_bench_result{});  // checks out before the long run
    const hark::BenchResult b = ctx->impl->bench(n_threads);
    hark_bench_result v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    std::snprintf(v.config, sizeof v.config, "%s", b.config.c_str());
    v.n_threads = b.n_threads;
    v.encode_ms = b.encode_ms;
    v.decode_ms = b.decode_ms;
    v.batch_ms = b.batch_ms;
    v.prompt_ms = b.prompt_ms;
    write_out(out, out_size, kBenchResultV1, v);
  });
}

}  // extern "C"
