// bench_transcribe: end-to-end speed of one transcription, as one JSON object on stdout.
//
//   bench_transcribe -m MODEL [-f AUDIO] [-t THREADS] [--runs N]
//   bench_transcribe --preset tiny [--type q5_0] [--seed N] [-t THREADS]
//   ... [--beam-size 5] [--best-of 5 --temperature 0.5]   (the search: beams at T = 0, best-of at T > 0)
//   ... [--vad-model silero-v6.2.0-ggml.bin]              (VAD-assisted: only the speech is transcribed)
//   ... --vad-model silero-v6.2.0-ggml.bin --batch-size 8  (the batched pipeline: VAD chunks, 8 decoded together)
//   ... --batch-size 8 --vs-sequential                     (and the plain way in the same run: the speedup, and
//                                                           the most it could be were decoding free)
//
// decode_tokens_per_s is tokens chosen per second of decoding (every chunk of a batch counted).
//
// With --preset, a model with seeded random weights is written to a temporary file first (the
// real format and sizes, so the speed is the real model's; the text is nonsense, and a random
// model may decode more or fewer tokens per window than a trained one — compare
// decode_ms_per_token or decode_ms_per_step, a decoder graph run, rather than decode_ms;
// a beam search or best-of step decodes all its sequences in one run). Without -f, the audio is 30 s of synthesized
// tones and noise: one full encoder window.
//
// Only the public API is used, plus the test-model writer for --preset.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "hark/hark.hpp"

int main(int argc, char** argv) {
  CLI::App app{"bench_transcribe: end-to-end transcription speed, as JSON", "bench_transcribe"};
  std::string model, audio_path, preset, type = "f16";
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  int threads = static_cast<int>(std::min(8u, hw));
  int runs = 1;
  uint64_t seed = 1;
  double seconds = 30.0;
  hark::TranscribeParams tp;
  // No fallback unless asked: a random-weight --preset model falls back on every window, which
  // would measure six decodes of each window.
  tp.temperature_inc = 0.0f;
  auto* m = app.add_option("-m,--model", model, "Whisper model (ggml .bin)");
  auto* p = app.add_option("--preset", preset,
                           "Write a seeded test model of this size instead: micro, tiny, base, "
                           "small, medium, large, large-v3, large-v3-turbo (.en for English-only)");
  m->excludes(p);
  app.add_option("--type", type, "Weight type of the --preset model: f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0")
      ->capture_default_str();
  app.add_option("--seed", seed, "Seed of the --preset model's weights")->capture_default_str();
  app.add_option("-f,--file", audio_path, "Audio file (default: synthesized tones and noise)");
  app.add_option("--seconds", seconds, "Length of the synthesized audio")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("-t,--threads", threads, "Compute threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--runs", runs, "Transcribe this many times and report the fastest (the first warms caches)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--beam-size", tp.beam_size, "Beam search with this many beams (at temperature 0)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--best-of", tp.best_of, "Candidates sampled at temperature > 0")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--temperature", tp.temperature, "Temperature (> 0: best-of sampling)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--temperature-inc", tp.temperature_inc, "Temperature fallback step (0: no fallback)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--vad-model", tp.vad_model_path,
                 "VAD-assisted: transcribe only the speech this Silero model finds (whisper.cpp's --vad -vm)");
  app.add_option("--batch-size", tp.batch_size,
                 "Batched pipeline: VAD chunks (needs --vad-model) decoded this many at a time (1: sequential)")
      ->check(CLI::Range(1, hark::kMaxBatchSize))
      ->capture_default_str();
  app.add_option("--max-tokens", tp.max_tokens_per_window, "Tokens per window at most (0: the model's limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  std::string cross_kv = "f16";
  app.add_option("--cross-kv-type", cross_kv, "Cross-attention K/V cache type (both ways with --vs-sequential)")
      ->check(CLI::IsMember({"f16", "q8_0"}))
      ->capture_default_str();
  bool vs_sequential = false;
  app.add_flag("--vs-sequential", vs_sequential,
               "With --batch-size > 1: also transcribe the file the plain way (no VAD, one window after another), "
               "runs alternating, and report the speedup and the most any decoder could give it");
  if (const int code = bench::parse_model_command(app, argc, argv, model, preset); code >= 0) return code;

  bench::TempModel temp;
  try {
    const std::string label = bench::model_or_preset(temp, model, preset, type, seed);

    const std::vector<float> audio = audio_path.empty() ? bench::synth_audio(seconds) : hark::load_audio(audio_path);

    hark::ContextParams cp;
    cp.n_threads = threads;
    cp.cross_kv_type = hark::parse_kv_cache_type(cross_kv);
    const std::unique_ptr<hark::Context> ctx = hark::Context::load(model, cp);
    // The batched pipeline runs the VAD itself; otherwise a VAD model means VAD-assisted.
    tp.vad = !tp.vad_model_path.empty() && tp.batch_size == 1;

    // The plain way for --vs-sequential: the same search, no VAD, windows one after another.
    hark::TranscribeParams plain = tp;
    plain.batch_size = 1;
    plain.vad = false;
    plain.vad_model_path.clear();
    const bool compare = vs_sequential && tp.batch_size > 1;

    // The fastest run of each way; runs alternate, so a slow spell of a shared machine hits both.
    hark::Transcript best, best_plain;
    best.timings.total_ms = best_plain.timings.total_ms = std::numeric_limits<double>::infinity();
    auto keep_fastest = [&](const hark::TranscribeParams& params, hark::Transcript& fastest) {
      hark::Transcript t = ctx->transcribe(audio, params);
      if (t.timings.total_ms < fastest.timings.total_ms) fastest = std::move(t);
    };
    for (int r = 0; r < runs; ++r) {
      keep_fastest(tp, best);
      if (compare) keep_fastest(plain, best_plain);
    }

    const hark::Timings& tm = best.timings;
    nlohmann::ordered_json out = {
        {"model", label},
        {"size", ctx->info().size_name},
        {"weight_type", ctx->info().weight_type},
        {"threads", threads},
        {"audio", audio_path.empty() ? "synthesized" : audio_path},
        {"audio_seconds", tm.audio_seconds},
        {"runs", runs},
        {"beam_size", tp.beam_size},
        {"best_of", tp.best_of},
        {"temperature", tp.temperature},
        {"vad", !tp.vad_model_path.empty()},
        {"batch_size", tp.batch_size},
        {"vad_ms", tm.vad_ms},
        {"load_ms", tm.load_ms > 0 ? tm.load_ms : ctx->info().load_ms},
        {"mel_ms", tm.mel_ms},
        {"encode_ms", tm.encode_ms},
        {"decode_ms", tm.decode_ms},
        {"decode_ms_per_token", tm.decode_ms_per_token()},
        {"n_tokens", tm.n_decode_tokens},
        {"decode_tokens_per_s", tm.decode_ms > 0 ? 1000.0 * tm.n_decode_tokens / tm.decode_ms : 0.0},
        {"decode_ms_per_step", tm.decode_ms_per_step()},
        {"n_steps", tm.n_decode_steps},
        {"n_windows", tm.n_windows},
        {"total_ms", tm.total_ms},
        {"real_time_factor", tm.real_time_factor()}};
    if (compare) {
      // Decoding is what batching speeds up; the VAD, the spectrogram and the encoder (one 30 s
      // window per chunk, as many as the plain way has windows or more) it cannot. With a decoder
      // that cost nothing, the batched run would still take its other parts' time.
      const hark::Timings& pt = best_plain.timings;
      const double rest_ms = tm.total_ms - tm.decode_ms;
      out["vs_sequential"] = {
          {"total_ms", pt.total_ms},
          {"encode_ms", pt.encode_ms},
          {"decode_ms", pt.decode_ms},
          {"decode_ms_per_token", pt.decode_ms_per_token()},
          {"n_tokens", pt.n_decode_tokens},
          {"n_windows", pt.n_windows},
          {"real_time_factor", pt.real_time_factor()},
          {"speedup", tm.total_ms > 0 ? pt.total_ms / tm.total_ms : 0.0},
          {"decode_speedup_per_token",
           tm.decode_ms_per_token() > 0 ? pt.decode_ms_per_token() / tm.decode_ms_per_token() : 0.0},
          {"batched_ms_besides_decode", rest_ms},
          {"speedup_bound_free_decode", rest_ms > 0 ? pt.total_ms / rest_ms : 0.0}};
    }
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_transcribe: error: %s\n", e.what());
    return 1;
  }
}
