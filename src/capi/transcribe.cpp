// The C API: transcriptions and language detection (hark_transcribe_params converted and
// defaulted here, in one place).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

namespace {

hark_transcribe_params transcribe_defaults() {
  hark_transcribe_params p;
  std::memset(static_cast<void*>(&p), 0, sizeof p);  // callbacks, user data, prompt: NULL
  p.struct_size = sizeof p;
  p.language = "en";
  p.translate = false;
  p.n_threads = 0;
  p.n_processors = 1;
  p.offset_ms = 0;
  p.duration_ms = 0;
  p.timestamps = true;
  p.max_tokens_per_window = 0;
  p.job_id = 0;
  const hark::TranscribeParams d;
  p.temperature = d.temperature;
  p.temperature_inc = d.temperature_inc;
  p.best_of = d.best_of;
  p.length_penalty = d.length_penalty;
  p.compression_ratio_threshold = d.compression_ratio_threshold;
  p.logprob_threshold = d.logprob_threshold;
  p.no_speech_threshold = d.no_speech_threshold;
  p.suppress_blank = d.suppress_blank;
  p.suppress_nst = d.suppress_nst;
  p.carry_initial_prompt = d.carry_initial_prompt;
  p.no_context = d.no_context;
  p.single_segment = d.single_segment;
  p.max_context = d.max_context;
  p.max_initial_timestamp = d.max_initial_timestamp;
  p.seed = d.seed;
  p.suppress_tokens = nullptr;
  p.n_suppress_tokens = 0;
  p.suppress_regex = nullptr;
  p.word_timestamps = d.word_timestamps;
  p.dtw_n_top = d.dtw_n_top;
  p.hallucination_silence_threshold = d.hallucination_silence_threshold;
  p.dtw_preset = nullptr;
  p.dtw_heads = nullptr;
  p.prepend_punctuations = nullptr;
  p.append_punctuations = nullptr;
  p.token_timestamps = d.token_timestamps;
  p.thold_pt = d.thold_pt;
  p.thold_ptsum = d.thold_ptsum;
  p.max_len = d.max_len;
  p.split_on_word = d.split_on_word;
  p.tdrz_enable = d.tdrz_enable;
  p.beam_size = d.beam_size;
  p.patience = d.patience;
  p.repetition_penalty = d.repetition_penalty;
  p.no_repeat_ngram_size = d.no_repeat_ngram_size;
  p.logprob_low_threshold = d.logprob_low_threshold;
  p.prompt_reset_temperature = d.prompt_reset_temperature;
  p.multilingual = d.multilingual;
  p.length_penalty_power = d.length_penalty_power;
  p.vad = d.vad;
  p.vad_threshold = d.vad_params.threshold;
  p.vad_min_speech_duration_ms = d.vad_params.min_speech_duration_ms;
  p.vad_min_silence_duration_ms = d.vad_params.min_silence_duration_ms;
  p.vad_speech_pad_ms = d.vad_params.speech_pad_ms;
  p.vad_samples_overlap = d.vad_params.samples_overlap;
  p.vad_max_speech_duration_s = d.vad_params.max_speech_duration_s;
  p.vad_model_path = nullptr;
  p.batch_size = d.batch_size;
  return p;
}

// ---- transcription ----------------------------------------------------------------------------

// What only the C form of the params can get wrong: a NULL array with a count, a job id that is
// no id, numbers wider than the C++ fields. Every option's value and range is checked once, by the
// library (TranscribeParams), whose messages name the field.
void check_c_params(const hark_transcribe_params& p) {
  require(p.job_id >= 0,
          "params->job_id must be 0 (a new job) or an id from hark_job_new(), got " + std::to_string(p.job_id));
  require(p.n_suppress_tokens == 0 || p.suppress_tokens != nullptr,
          "params->suppress_tokens is NULL but n_suppress_tokens is " + std::to_string(p.n_suppress_tokens));
  require(p.max_len >= INT32_MIN && p.max_len <= INT32_MAX,
          "params->max_len must fit in 32 bits, got " + std::to_string(p.max_len));
  require(p.batch_size >= INT32_MIN && p.batch_size <= INT32_MAX,
          "params->batch_size must fit in 32 bits, got " + std::to_string(p.batch_size));
}

// The C arguments of the audio: the library checks the samples themselves (offset, NaN).
void check_samples(const float* samples, size_t n) {
  require(samples != nullptr, "samples is NULL");
  require(n > 0, "n_samples is 0: no audio");
}

hark_result* publish(hark::Transcript&& t) {
  auto r = std::make_unique<hark_result>();
  r->t = std::move(t);
  r->text = r->t.text();
  handles().add(r.get(), Kind::Result);
  return r.release();
}

// The C params as C++ params: callbacks wrapped so they know their owner (see CallbackScope) and
// new segments arrive as a borrowed hark_result.
hark::TranscribeParams to_cpp(const hark_transcribe_params& p, const void* owner, int job_id) {
  hark::TranscribeParams c;
  c.language = (!p.language || !*p.language) ? "auto" : p.language;
  c.translate = p.translate;
  c.n_threads = p.n_threads;
  c.n_processors = p.n_processors;
  c.offset_ms = p.offset_ms;
  c.duration_ms = p.duration_ms;
  c.timestamps = p.timestamps;
  c.max_tokens_per_window = p.max_tokens_per_window;
  if (p.initial_prompt) c.initial_prompt = p.initial_prompt;
  c.temperature = p.temperature;
  c.temperature_inc = p.temperature_inc;
  c.best_of = p.best_of;
  c.length_penalty = p.length_penalty;
  c.compression_ratio_threshold = p.compression_ratio_threshold;
  c.logprob_threshold = p.logprob_threshold;
  c.no_speech_threshold = p.no_speech_threshold;
  c.suppress_blank = p.suppress_blank;
  c.suppress_nst = p.suppress_nst;
  c.carry_initial_prompt = p.carry_initial_prompt;
  c.no_context = p.no_context;
  c.single_segment = p.single_segment;
  c.max_context = p.max_context;
  c.max_initial_timestamp = p.max_initial_timestamp;
  c.seed = p.seed;
  if (p.suppress_tokens) c.suppress_tokens.assign(p.suppress_tokens, p.suppress_tokens + p.n_suppress_tokens);
  if (p.suppress_regex) c.suppress_regex = p.suppress_regex;
  c.word_timestamps = p.word_timestamps;
  c.dtw_n_top = p.dtw_n_top;
  c.hallucination_silence_threshold = p.hallucination_silence_threshold;
  if (p.dtw_preset) c.dtw_preset = p.dtw_preset;
  if (p.dtw_heads) c.dtw_heads = p.dtw_heads;
  if (p.prepend_punctuations) c.prepend_punctuations = p.prepend_punctuations;
  if (p.append_punctuations) c.append_punctuations = p.append_punctuations;
  c.token_timestamps = p.token_timestamps;
  c.thold_pt = p.thold_pt;
  c.thold_ptsum = p.thold_ptsum;
  c.max_len = static_cast<int>(p.max_len);
  c.split_on_word = p.split_on_word;
  c.tdrz_enable = p.tdrz_enable;
  c.beam_size = p.beam_size;
  c.patience = p.patience;
  c.repetition_penalty = p.repetition_penalty;
  c.no_repeat_ngram_size = static_cast<int>(std::clamp<int64_t>(p.no_repeat_ngram_size, -1, 1 << 20));
  c.logprob_low_threshold = p.logprob_low_threshold;
  c.prompt_reset_temperature = p.prompt_reset_temperature;
  require(p.n_temperatures >= 0 && (p.n_temperatures == 0 || p.temperatures),
          "temperatures is NULL with n_temperatures " + std::to_string(p.n_temperatures));
  if (p.n_temperatures > 0) c.temperatures.assign(p.temperatures, p.temperatures + std::min(p.n_temperatures, 33));
  require(p.n_initial_prompt_tokens >= 0 && (p.n_initial_prompt_tokens == 0 || p.initial_prompt_tokens),
          "initial_prompt_tokens is NULL with n_initial_prompt_tokens " + std::to_string(p.n_initial_prompt_tokens));
  require(p.n_initial_prompt_tokens <= 1 << 20, "n_initial_prompt_tokens is beyond any model's context");
  if (p.n_initial_prompt_tokens > 0)
    c.initial_prompt_tokens.assign(p.initial_prompt_tokens, p.initial_prompt_tokens + p.n_initial_prompt_tokens);
  require(p.n_clip_timestamps >= 0 && p.n_clip_timestamps <= 1 << 20 && (p.n_clip_timestamps == 0 || p.clip_timestamps),
          "clip_timestamps is NULL or n_clip_timestamps is out of range (" + std::to_string(p.n_clip_timestamps) + ")");
  if (p.n_clip_timestamps > 0) c.clip_timestamps.assign(p.clip_timestamps, p.clip_timestamps + p.n_clip_timestamps);
  c.multilingual = p.multilingual;
  c.length_penalty_power = p.length_penalty_power;
  if (p.hotwords) c.hotwords = p.hotwords;
  if (p.prefix) c.prefix = p.prefix;
  c.vad = p.vad;
  if (p.vad_model_path) c.vad_model_path = p.vad_model_path;
  require(p.n_vad_speech >= 0 && p.n_vad_speech <= 1 << 20 && (p.n_vad_speech == 0 || p.vad_speech),
          "vad_speech is NULL or n_vad_speech is out of range (" + std::to_string(p.n_vad_speech) + ")");
  for (int64_t k = 0; k < p.n_vad_speech; ++k) c.vad_speech.push_back({p.vad_speech[2 * k], p.vad_speech[2 * k + 1]});
  c.batch_size = static_cast<int>(p.batch_size);
  c.vad_params = vad_options(p.vad_threshold, p.vad_min_speech_duration_ms, p.vad_min_silence_duration_ms,
                             p.vad_speech_pad_ms, p.vad_samples_overlap, p.vad_max_speech_duration_s);
  if (p.progress_callback)
    c.on_progress = [cb = p.progress_callback, ud = p.progress_user_data, owner](int percent) {
      CallbackScope scope(owner);
      cb(percent, ud);
    };
  if (p.new_segments_callback)
    c.on_new_segments = [cb = p.new_segments_callback, ud = p.new_segments_user_data, owner,
                         job_id](const hark::NewSegments& ns) {
      CallbackScope scope(owner);
      hark_result view;
      view.t.job_id = job_id;
      view.t.segments.assign(ns.segments.begin(), ns.segments.end());
      view.text = ns.text;
      handles().add(&view, Kind::BorrowedResult);
      struct Unregister {
        hark_result* r;
        ~Unregister() { handles().remove(r, Kind::BorrowedResult); }
      } unregister{&view};
      cb(&view, ns.n_new, ns.total, ud);
    };
  if (p.encoder_begin_callback)
    c.on_encoder_begin = [cb = p.encoder_begin_callback, ud = p.encoder_begin_user_data, owner] {
      CallbackScope scope(owner);
      return cb(ud);
    };
  if (p.fallback_callback)
    c.on_fallback = [cb = p.fallback_callback, ud = p.fallback_user_data, owner](const hark::Fallback& f) {
      CallbackScope scope(owner);
      cb(f.t0, f.t1, f.temperature, f.compression_ratio, f.avg_logprob, ud);
    };
  if (p.abort_callback)
    c.should_abort = [cb = p.abort_callback, ud = p.abort_user_data, owner] {
      CallbackScope scope(owner);
      return cb(ud);
    };
  return c;
}

// The job a call runs as: the caller's (by id) or a new one, registered only for the call.
struct CallJob {
  std::shared_ptr<hark::Job> job;
  bool own = false;
  explicit CallJob(int id) {
    if (id == 0) {
      job = hark::jobs::create();
      own = true;
    } else {
      job = hark::jobs::get(id);
      require(job != nullptr,
              "params->job_id " + std::to_string(id) +
                  " is not a registered job (make one with hark_job_new; it stays until hark_job_remove)");
    }
  }
  ~CallJob() {
    if (own) hark::jobs::remove(job->id());
  }
  CallJob(const CallJob&) = delete;
  CallJob& operator=(const CallJob&) = delete;
};

// The common end of every transcribe call: owner already leased, params read and checked.
template <typename Run>
void run_job(Lease& lease, const void* owner, const hark_transcribe_params& p, const float* samples, size_t n,
             hark_result** out, Run&& run) {
  check_samples(samples, n);
  // A VAD model that cannot be opened is HARK_ERR_IO, as for hark_vad_context_load; one that is
  // not a VAD model is HARK_ERR_FAILED (the loader's message); both before any compute.
  CallJob job(p.job_id);
  hark::TranscribeParams c = to_cpp(p, owner, job.job->id());
  c.job = job.job;
  lease.track(job.job);
  hark::Transcript t = run(std::span<const float>(samples, n), c);
  *out = publish(std::move(t));
}

// The hark_transcribe_params field of a TranscribeParams field an error names, when it is spelled
// differently ("vad_params.threshold" is vad_threshold); "" when it is the same or no option.
std::string c_param_name(const std::string& field) {
  const std::string vad = "vad_params.";
  if (field.compare(0, vad.size(), vad) == 0) return "vad_" + field.substr(vad.size());
  return "";
}

// A state lent to a stream runs nothing else until the stream is freed.
void require_not_lent(hark_context*) {}
void require_not_lent(hark_state* s) {
  std::lock_guard<std::mutex> lock(s->activity.mu);
  require(!s->lent(),
          "state is lent to a stream (hark_stream_create_on_state); free the stream before using the state again");
}

// A transcription on a context or a state (kind k, argument name `arg`) of the samples that
// `audio(storage)` gives as {pointer, count}: the caller's samples (checked by run_job, so a
// NULL pointer is an error, not a span), or `storage` once filled.
template <typename Handle, typename Audio>
hark_status transcribe_on(const char* fn, Handle* h, Kind k, const char* arg, const hark_transcribe_params* params,
                          hark_result** out, Audio&& audio) {
  return guarded(fn, HARK_ERR_FAILED, [&] {
    require_out(out);
    std::optional<Lease> l;
    lease(h, k, arg, l);
    require_not_lent(h);
    const hark_transcribe_params p =
        read_params(params, kTranscribeParamsV1, transcribe_defaults(), "hark_transcribe_default_params");
    check_c_params(p);
    std::vector<float> storage;
    const auto [samples, n] = audio(storage);
    try {
      run_job(*l, h, p, samples, n, out,
              [&](std::span<const float> s, const hark::TranscribeParams& c) { return h->impl->transcribe(s, c); });
    } catch (const hark::Error& e) {
      // The library names the C++ field; say the C one too where its name differs.
      const std::string c_field = c_param_name(e.field());
      if (c_field.empty()) throw;
      throw hark::Error(e.code(), std::string(e.what()) + " (params->" + c_field + ")", e.field());
    }
  });
}

// A transcription on a context of audio that `make_audio` produces (decoded or converted first:
// its hark::Error is HARK_ERR_AUDIO, the run's is HARK_ERR_FAILED).
template <typename MakeAudio>
hark_status transcribe_on_context(const char* fn, hark_context* ctx, const hark_transcribe_params* params,
                                  hark_result** out, MakeAudio&& make_audio) {
  return transcribe_on(fn, ctx, Kind::Context, "ctx", params, out, [&](std::vector<float>& storage) {
    storage = phase(HARK_ERR_AUDIO, make_audio);
    return std::pair<const float*, size_t>(storage.data(), storage.size());
  });
}

// hark_detect_language's and hark_detect_language_mel's shared part: the checks of the outputs,
// the call, the answer written out.
void detect_language(hark_context& ctx, std::span<const float> samples, hark::DetectLanguageParams& dp, int n_threads,
                     int* lang_id, float* probability, float* probs, int n_probs) {
  require(lang_id != nullptr, "lang_id is NULL");
  require(n_threads >= 0, "n_threads must be >= 0 (0: the context's), got " + std::to_string(n_threads));
  require(probs != nullptr || n_probs == 0, "probs is NULL but n_probs is " + std::to_string(n_probs));
  require(n_probs >= 0, "n_probs must be >= 0, got " + std::to_string(n_probs));
  dp.n_threads = n_threads;
  const hark::LanguageDetection d = ctx.impl->detect_language(samples, dp);
  *lang_id = hark::language_id(d.language);
  if (probability) *probability = d.probability;
  for (int i = 0; i < n_probs; ++i)
    probs[i] = static_cast<size_t>(i) < d.probs.size() ? d.probs[static_cast<size_t>(i)] : 0.0f;
}

}  // namespace

extern "C" {

// ---- transcription ----

hark_status hark_transcribe_params_init(hark_transcribe_params* params, size_t params_size) {
  return guarded("hark_transcribe_params_init", HARK_ERR_INTERNAL, [&] {
    init_params(params, params_size, kTranscribeParamsV1, transcribe_defaults(), "hark_transcribe_params");
  });
}

hark_status hark_transcribe(hark_context* ctx, const float* samples, size_t n_samples,
                            const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on("hark_transcribe", ctx, Kind::Context, "ctx", params, out,
                       [&](std::vector<float>&) { return std::pair(samples, n_samples); });
}

hark_status hark_transcribe_with_state(hark_state* state, const float* samples, size_t n_samples,
                                       const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on("hark_transcribe_with_state", state, Kind::State, "state", params, out,
                       [&](std::vector<float>&) { return std::pair(samples, n_samples); });
}

hark_status hark_transcribe_file(hark_context* ctx, const char* path, const hark_transcribe_params* params,
                                 hark_result** out) {
  return transcribe_on_context("hark_transcribe_file", ctx, params, out, [&] {
    check_path(path, "path");
    return hark::load_audio(path);
  });
}

hark_status hark_transcribe_encoded(hark_context* ctx, const void* data, size_t size,
                                    const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on_context("hark_transcribe_encoded", ctx, params, out, [&] {
    require(data != nullptr, "data is NULL");
    require(size > 0, "size is 0: no data");
    return hark::decode_audio(data, size);
  });
}

hark_status hark_transcribe_data_uri(hark_context* ctx, const char* uri, const hark_transcribe_params* params,
                                     hark_result** out) {
  return transcribe_on_context("hark_transcribe_data_uri", ctx, params, out, [&] {
    require(uri != nullptr, "uri is NULL");
    return hark::decode_audio_data_uri(uri);
  });
}

hark_status hark_transcribe_pcm16(hark_context* ctx, const int16_t* samples, size_t n_values, int sample_rate,
                                  int channels, const hark_transcribe_params* params, hark_result** out) {
  return transcribe_on_context("hark_transcribe_pcm16", ctx, params, out, [&] {
    check_pcm(samples, n_values, sample_rate, channels);
    return hark::pcm16_to_mono16k(samples, n_values, sample_rate, channels);
  });
}

hark_status hark_detect_language(hark_context* ctx, const float* samples, size_t n_samples, int64_t offset_ms,
                                 int n_threads, int* lang_id, float* probability, float* probs, int n_probs) {
  return guarded("hark_detect_language", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    check_samples(samples, n_samples);
    hark::DetectLanguageParams dp;
    dp.offset_ms = offset_ms;
    detect_language(*ctx, std::span<const float>(samples, n_samples), dp, n_threads, lang_id, probability, probs,
                    n_probs);
  });
}

hark_status hark_detect_language_mel(hark_context* ctx, const float* mel, int n_mels, size_t n_frames, int n_threads,
                                     int* lang_id, float* probability, float* probs, int n_probs) {
  return guarded("hark_detect_language_mel", HARK_ERR_FAILED, [&] {
    std::optional<Lease> l;
    lease(ctx, Kind::Context, "ctx", l);
    const int want = ctx->impl->info().n_mels;
    require(n_mels == want, "n_mels is " + std::to_string(n_mels) + " but this model's spectrogram has " +
                                std::to_string(want) + " bands");
    require(mel != nullptr && n_frames > 0, "mel is NULL or n_frames is 0");
    hark::DetectLanguageParams dp;
    dp.mel.assign(mel, mel + static_cast<size_t>(n_mels) * n_frames);
    detect_language(*ctx, {}, dp, n_threads, lang_id, probability, probs, n_probs);
  });
}

}  // extern "C"
