// bench_vad: Silero VAD speed as one JSON object on stdout: frames per second of whole-buffer
// detection (the network, frame after frame, as detect_speech runs it) and the time one frame of
// a live stream takes.
//
//   bench_vad -m silero-v6.2.0-ggml.bin [-f AUDIO] [-t THREADS] [--runs N]
//
// Without -f, 60 s of bench::synth_audio (speech-like bursts and pauses). Only the public API.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "hark/hark.hpp"

int main(int argc, char** argv) {
  CLI::App app{"bench_vad: Silero VAD frames per second, as JSON", "bench_vad"};
  std::string model, audio_path;
  int threads = 1, runs = 5;
  app.add_option("-m,--model", model, "Silero VAD model (whisper.cpp's ggml-silero-*.bin)")->required();
  app.add_option("-f,--file", audio_path, "Audio file (default: 60 s of synthesized speech-like sound)");
  app.add_option("-t,--threads", threads, "Compute threads")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--runs", runs, "Whole-buffer runs; the fastest and the median are reported")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const std::vector<float> audio = audio_path.empty() ? bench::synth_audio(60.0) : hark::load_audio(audio_path);
    hark::VadModelParams mp;
    mp.n_threads = threads;
    const auto vad = hark::VadModel::load(model, mp);
    using Clock = std::chrono::steady_clock;
    auto secs = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };

    vad->probabilities(std::span<const float>(audio).first(std::min<size_t>(audio.size(), 16000)));  // warm-up
    std::vector<double> times;
    size_t frames = 0;
    for (int i = 0; i < runs; ++i) {
      const auto t0 = Clock::now();
      frames = vad->probabilities(audio).size();
      times.push_back(secs(t0, Clock::now()));
    }
    std::sort(times.begin(), times.end());

    // a live stream: 512-sample frames pushed one by one
    auto stream = vad->stream();
    const size_t w = static_cast<size_t>(vad->frame_samples());
    const size_t n_stream = std::min<size_t>(audio.size() / w, 500);
    const auto s0 = Clock::now();
    for (size_t i = 0; i < n_stream; ++i) stream->push(std::span<const float>(audio).subspan(i * w, w));
    const double stream_s = secs(s0, Clock::now());

    const double audio_s = static_cast<double>(audio.size()) / hark::kSampleRate;
    nlohmann::json j;
    j["model"] = vad->model_type() + " " + vad->version();
    j["threads"] = threads;
    j["audio_seconds"] = audio_s;
    j["frames"] = frames;
    j["runs"] = runs;
    j["frames_per_second_best"] = static_cast<double>(frames) / times.front();
    j["frames_per_second_median"] = static_cast<double>(frames) / times[times.size() / 2];
    j["real_time_factor_best"] = times.front() / audio_s;
    j["stream_us_per_frame"] = n_stream ? stream_s * 1e6 / static_cast<double>(n_stream) : 0.0;
    std::printf("%s\n", j.dump(2).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_vad: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
