// bench_stream: the streaming transcriber's latency on audio delivered at real-time speed, as one
// JSON object on stdout.
//
//   bench_stream --preset tiny [-t 2] [--seconds 300] [--speed 1] [--slice-sec 10] [--audio DIR|FILE]
//   bench_stream -m MODEL ...
//
// The audio (by default every WAV of ../shared/audio, real speech, laid end to end and repeated to
// --seconds; synthesized tones when none is found) is pushed in 100 ms chunks, each when its last
// sample has "played" (speed x real time), as a microphone delivers it. Figures:
//   final_delay_ms     from the push of a slice's last sample to its final result (median, p95)
//   partial_interval_ms  between two partial results of one slice (median)
//   backlog_sec        audio of whole slices still waiting when the source ended: complete before
//                      the transcription then in flight began, yet not started (the slice the end
//                      closes does not count): 0 when transcription keeps up
//   drain_ms           from the source's end to the last event
//   real_time_factor   transcription time (partials and finals) per second of audio; partials use
//                      the time finals leave idle, so finals_real_time_factor is what must stay < 1
// A --preset model has seeded random weights (the real sizes, so the real speed): its text is
// junk and it decodes the most tokens a window allows unless --max-tokens caps them; the timing
// is what is measured. No temperature fallback (random weights would fall back every slice).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "hark/hark.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Every .wav under dir (sorted) or the one file, laid end to end and repeated to `seconds`.
std::vector<float> speech_audio(const std::string& where, double seconds, std::string* label) {
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_directory(where, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(where))
      if (e.path().extension() == ".wav") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::exists(where, ec)) {
    files.push_back(where);
  }
  std::vector<float> clips;
  for (const std::string& f : files) {
    const std::vector<float> a = hark::load_audio(f);
    clips.insert(clips.end(), a.begin(), a.end());
  }
  const size_t n = size_t(seconds * hark::kSampleRate);
  if (clips.empty()) {
    *label = "synthesized";
    return bench::synth_audio(seconds);
  }
  *label = where + " (" + std::to_string(files.size()) + " files, repeated)";
  std::vector<float> out;
  out.reserve(n);
  while (out.size() < n) out.insert(out.end(), clips.begin(), clips.begin() + std::min(clips.size(), n - out.size()));
  return out;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5));
  return v[i];
}

struct Seen {    // one event, as the benchmark needs it
  double at_ms;  // since the first push
  int index;
  bool final;
  int64_t t0, t1;
  double process_ms;
  int code;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_stream: realtime transcription latency on audio at real-time speed, as JSON", "bench_stream"};
  std::string model, preset, type = "f16", audio_where = HARK_SHARED_DIR "/audio";
  int threads = 2, max_tokens = 0;
  uint64_t seed = 1;
  double seconds = 300, speed = 1, slice_sec = 10, min_sec = 1, partial_sec = 1;
  auto* m = app.add_option("-m,--model", model, "Whisper model (ggml .bin)");
  auto* p = app.add_option("--preset", preset, "Write a seeded test model of this size instead (tiny, base, ...)");
  m->excludes(p);
  app.add_option("--type", type, "Weight type of the --preset model")->capture_default_str();
  app.add_option("--seed", seed, "Seed of the --preset model's weights")->capture_default_str();
  app.add_option("--audio", audio_where, "A folder of WAVs (laid end to end) or one audio file")->capture_default_str();
  app.add_option("--seconds", seconds, "Audio to stream")->check(CLI::Range(1.0, 7200.0))->capture_default_str();
  app.add_option("--speed", speed, "Delivery speed, x real time")
      ->check(CLI::Range(0.01, 100.0))
      ->capture_default_str();
  app.add_option("--slice-sec", slice_sec, "realtimeAudioSliceSec")
      ->check(CLI::Range(0.5, 30.0))
      ->capture_default_str();
  app.add_option("--min-sec", min_sec, "realtimeAudioMinSec")->check(CLI::Range(0.0, 30.0))->capture_default_str();
  app.add_option("--partial-sec", partial_sec, "Partial results at most every this much new audio (0: none)")
      ->check(CLI::Range(0.0, 30.0))
      ->capture_default_str();
  app.add_option("--max-tokens", max_tokens, "Tokens per slice at most (0: the model's limit)")
      ->check(CLI::Range(0, 224))
      ->capture_default_str();
  app.add_option("-t,--threads", threads, "Compute threads")->check(CLI::Range(1, 1024))->capture_default_str();
  if (const int code = bench::parse_model_command(app, argc, argv, model, preset); code >= 0) return code;

  bench::TempModel temp;
  try {
    const std::string label = bench::model_or_preset(temp, model, preset, type, seed);
    std::string audio_label;
    const std::vector<float> audio = speech_audio(audio_where, seconds, &audio_label);

    hark::ContextParams cp;
    cp.n_threads = threads;
    const std::unique_ptr<hark::Context> ctx = hark::Context::load(model, cp);

    hark::RealtimeOptions o;
    o.audio_sec = seconds + 1;  // the source ends capture, not realtimeAudioSec
    o.audio_slice_sec = slice_sec;
    o.audio_min_sec = min_sec;
    o.partial_sec = partial_sec;
    o.n_threads = threads;
    auto tp = std::make_shared<hark::TranscribeParams>();
    tp->temperature_inc = 0.0f;
    tp->max_tokens_per_window = max_tokens;
    o.transcribe = tp;

    std::mutex mu;
    std::vector<Seen> seen;
    int64_t dropped = 0;
    Clock::time_point t_start;                          // set before the first push, read by events after it
    auto src = hark::open_push_source(/*live=*/false);  // like a file played in real time: no drops
    auto rt = hark::RealtimeTranscriber::start(*ctx, src, o, [&](const hark::RealtimeEvent& e) {
      const double at = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
      std::lock_guard<std::mutex> lock(mu);
      dropped = e.dropped_samples;
      if (e.slices.empty()) return;
      const hark::RealtimeSlice& s = e.slices.back();
      seen.push_back({at, s.index, s.final, s.t0, s.t1, e.process_time_ms, e.code});
    });

    const size_t chunk = hark::kSampleRate / 10;
    std::vector<double> pushed_ms((audio.size() + chunk - 1) / chunk);  // when chunk k was pushed
    t_start = Clock::now();
    for (size_t k = 0, pos = 0; pos < audio.size(); ++k, pos += chunk) {
      const size_t n = std::min(chunk, audio.size() - pos);
      std::this_thread::sleep_until(t_start +
                                    std::chrono::duration<double>(double(pos + n) / hark::kSampleRate / speed));
      pushed_ms[k] = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
      src->push(std::span<const float>(audio).subspan(pos, n));
    }
    const double end_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
    src->finish();
    rt->wait();

    // The transcription in flight when the source ended (its start is before the end, its event after).
    double in_flight_start = end_ms;
    for (const Seen& s : seen)
      if (s.at_ms > end_ms && s.at_ms - s.process_ms < end_ms) in_flight_start = s.at_ms - s.process_ms;
    auto pushed_by = [&](int64_t t1) {  // when the chunk holding the sample before t1 was pushed
      const size_t last_sample = size_t(std::max<int64_t>(t1, 1)) * 160 - 1;
      return pushed_ms[std::min(pushed_ms.size() - 1, last_sample / chunk)];
    };
    std::vector<double> delays, intervals;
    double process_all = 0, process_finals = 0, backlog_samples = 0, last_at = end_ms;
    int n_partials = 0, n_finals = 0, n_errors = 0, last_index = -1;
    for (const Seen& s : seen) last_index = std::max(last_index, s.index);
    std::vector<const Seen*> last_partial(size_t(last_index + 1), nullptr);
    std::vector<bool> final_seen(size_t(last_index + 1), false);
    for (const Seen& s : seen) {
      last_at = std::max(last_at, s.at_ms);
      if (s.code != 0) ++n_errors;
      process_all += s.process_ms;
      if (!s.final) {
        ++n_partials;
        if (const Seen* prev = last_partial[size_t(s.index)]) intervals.push_back(s.at_ms - prev->at_ms);
        last_partial[size_t(s.index)] = &s;
        continue;
      }
      if (final_seen[size_t(s.index)]) continue;  // the closing event repeats the last slice
      final_seen[size_t(s.index)] = true;
      ++n_finals;
      process_finals += s.process_ms;
      delays.push_back(s.at_ms - pushed_by(s.t1));
      // Backlog: a slice that was complete before the in-flight transcription began, yet was
      // still untouched when the source ended (the slice the end closes is not one).
      const double started = s.at_ms - s.process_ms;
      if (s.index != last_index && started >= end_ms && pushed_by(s.t1) < in_flight_start)
        backlog_samples += double(s.t1 - s.t0) * 160;
    }

    const double audio_ms = double(audio.size()) * 1000.0 / hark::kSampleRate;
    const nlohmann::ordered_json out = {
        {"model", label},
        {"size", ctx->info().size_name},
        {"weight_type", ctx->info().weight_type},
        {"threads", threads},
        {"audio", audio_label},
        {"audio_seconds", audio_ms / 1000},
        {"speed", speed},
        {"slice_sec", slice_sec},
        {"min_sec", min_sec},
        {"partial_sec", partial_sec},
        {"max_tokens", max_tokens},
        {"n_finals", n_finals},
        {"n_partials", n_partials},
        {"n_errors", n_errors},
        {"final_delay_ms_median", quantile(delays, 0.5)},
        {"final_delay_ms_p95", quantile(delays, 0.95)},
        {"final_delay_ms_max", delays.empty() ? 0.0 : *std::max_element(delays.begin(), delays.end())},
        {"partial_interval_ms_median", quantile(intervals, 0.5)},
        {"backlog_sec", backlog_samples / hark::kSampleRate},
        {"drain_ms", last_at - end_ms},
        {"dropped_samples", dropped},
        {"real_time_factor", process_all / audio_ms},
        {"finals_real_time_factor", process_finals / audio_ms}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_stream: error: %s\n", e.what());
    return 1;
  }
}
