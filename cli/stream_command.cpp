#include "stream_command.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "hark/hark.hpp"
#include "model_options.h"

CLI::App* add_stream_command(CLI::App& app, StreamCommandOptions& o) {
  CLI::App* c = app.add_subcommand("stream", "Transcribe live audio in slices as it arrives (realtime)");
  c->add_option("-m,--model", o.model, "Whisper model in ggml .bin format");
  c->add_option("--capture", o.capture,
                "Capture device: 'default', a name from --list-devices, or '-' for "
                "raw s16le on stdin (16 kHz mono unless --pcm-rate/--pcm-channels)")
      ->capture_default_str();
  c->add_option("--pcm-rate", o.pcm_rate, "--capture -: sample rate of the raw s16le on stdin")
      ->check(CLI::Range(1000, 768000))
      ->capture_default_str();
  c->add_option("--pcm-channels", o.pcm_channels, "--capture -: interleaved channels of the raw s16le on stdin")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  c->add_option("--file", o.file, "Play this audio file instead of capturing");
  c->add_option("--speed", o.speed, "--file: playback speed (1 real time, 0 as fast as transcribed)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--slice-sec", o.slice_sec, "Slice length, seconds (realtimeAudioSliceSec)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--min-sec", o.min_sec, "Audio a slice needs before it is transcribed (realtimeAudioMinSec)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  c->add_option("--max-sec", o.max_sec, "Capture stops after this much audio (realtimeAudioSec)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  c->add_option("--partial-sec", o.partial_sec, "Partial results at most every this much new audio (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  CLI::Option* vad =
      c->add_option("--vad", o.vad, "End slices at pauses: 'energy' (whisper.rn's useVad) or a Silero VAD model");
  add_vad_model_option(c, o.vad_model, "slices end at the pauses it finds (the same as --vad MODEL)")->excludes(vad);
  c->add_option("--save", o.save, "Write everything captured to this WAV (audioOutputPath)");
  c->add_option("-l,--language", o.language, "Spoken language code, or 'auto'")->capture_default_str();
  c->add_flag("--no-fallback", o.no_fallback, "No temperature fallback: each slice decoded once, at temperature 0");
  c->add_option("-t,--threads", o.threads, "Compute threads (0: the machine's cores, at most 8)")
      ->check(CLI::Range(0, 1024));
  c->add_flag("--json", o.json, "Print every event as one line of JSON");
  c->add_flag("--list-devices", o.list_devices, "List capture devices and exit");
  return c;
}

namespace {

// In a terminal the open slice's line is rewritten in place; a final line stays. Elsewhere only
// final lines are printed (a log or a pipe would fill with partials).
class LinePrinter {
 public:
  explicit LinePrinter(bool tty) : tty_(tty) {}
  void print(const hark::RealtimeEvent& e) {
    if (e.slices.empty()) return;
    const hark::RealtimeSlice& s = e.slices.back();
    const std::string line =
        "[" + hark::format_timestamp(s.t0) + " --> " + hark::format_timestamp(s.t1) + "] " + s.data.result;
    if (s.final && s.index == last_final_) return;  // the closing event repeats the last slice
    if (tty_) std::printf("\r\033[2K%s", line.c_str());
    if (s.final) {
      if (!tty_) std::printf("%s", line.c_str());
      std::printf("\n");
      last_final_ = s.index;
    }
    std::fflush(stdout);
  }

 private:
  bool tty_;
  int last_final_ = -1;
};

}  // namespace

int run_stream(const StreamCommandOptions& o, const std::atomic<bool>& interrupted) {
  if (o.list_devices) {
    for (const hark::CaptureDevice& d : hark::list_capture_devices())
      std::printf("%s%s\t%s\n", d.is_default ? "* " : "  ", d.name.c_str(), d.description.c_str());
    return 0;
  }
  if (o.model.empty()) throw hark::Error("stream: --model is required");
  std::shared_ptr<hark::AudioSource> source;
  if (!o.file.empty())
    source = hark::open_file_source(o.file, o.speed);
  else if (o.capture == "-")
    source = hark::open_pcm16_fd_source(STDIN_FILENO, o.pcm_rate, o.pcm_channels);
  else
    source = hark::open_capture_source(o.capture);

  // The VAD model's file before the Whisper model loads: a wrong name fails at once.
  const std::string vad = o.vad_model.empty() ? o.vad : o.vad_model;
  const bool energy = vad == "energy" && o.vad_model.empty();
  const std::string vad_path = energy || vad.empty() ? "" : hark::find_model(vad);  // a name: its file

  hark::ContextParams cp;
  cp.n_threads = o.threads;
  auto ctx = hark::Context::load(o.model, cp);
  hark::RealtimeOptions ro;
  ro.audio_sec = o.max_sec;
  ro.audio_slice_sec = o.slice_sec;
  ro.audio_min_sec = o.min_sec;
  ro.partial_sec = o.partial_sec;
  ro.audio_output_path = o.save;
  ro.use_vad = energy;
  ro.vad_model_path = vad_path;
  auto tp = std::make_shared<hark::TranscribeParams>();
  tp->language = o.language;
  if (o.no_fallback) tp->temperature_inc = 0.0f;
  ro.transcribe = tp;

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int code = 0;
  LinePrinter printer(isatty(STDOUT_FILENO));
  auto rt = hark::RealtimeTranscriber::start(*ctx, source, ro, [&](const hark::RealtimeEvent& e) {
    if (o.json) {
      std::printf("%s\n", hark::to_json(e).c_str());
      std::fflush(stdout);
    } else {
      if (e.code != 0)
        std::fprintf(stderr, "hark: %s\n", e.error.c_str());
      else
        printer.print(e);
    }
    if (!e.is_capturing && (e.code == hark::kCodeSourceFailed)) code = 1;
  });
  // Wait for the end, polling the interrupt flag (a signal handler cannot call stop() itself).
  std::thread waiter([&] {
    rt->wait();
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    bool stopped = false;
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(50));
      if (!stopped && interrupted.load()) {
        stopped = true;
        rt->stop();
      }
    }
  }
  waiter.join();
  return code;
}
