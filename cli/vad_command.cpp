#include "vad_command.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "model_options.h"

namespace {

// JSON string contents: quotes, backslashes and control characters escaped (paths may hold any).
std::string json_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void print_text(const std::string& file, const hark::VadResult& r, bool probs) {
  std::printf("%s: %zu speech segments\n", file.c_str(), r.segments.size());
  for (const hark::VadSegment& s : r.segments)
    std::printf("[%s --> %s]\n", hark::format_timestamp(s.t0).c_str(), hark::format_timestamp(s.t1).c_str());
  if (probs)
    for (size_t i = 0; i < r.probs.size(); ++i) std::printf("frame %zu %.6f\n", i, r.probs[i]);
}

std::string to_json(const std::string& file, const hark::VadResult& r, bool probs) {
  std::string j = "{\"file\": \"" + json_escape(file) + "\", \"frame_samples\": " + std::to_string(r.frame_samples) +
                  ", \"segments\": [";
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const hark::VadSegment& s = r.segments[i];
    j += (i ? ", " : "") + std::string("{\"t0\": ") + std::to_string(s.t0) + ", \"t1\": " + std::to_string(s.t1) +
         ", \"start\": \"" + hark::format_timestamp(s.t0) + "\", \"end\": \"" + hark::format_timestamp(s.t1) + "\"}";
  }
  j += "]";
  if (probs) {
    j += ", \"probs\": [";
    char buf[32];
    for (size_t i = 0; i < r.probs.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.6f", i ? ", " : "", r.probs[i]);
      j += buf;
    }
    j += "]";
  }
  return j + "}";
}

}  // namespace

// Parsed only: the library checks the values (and names the option when one is out of range).
void add_vad_options(CLI::App* cmd, hark::VadOptions& v, const VadOptionNames& n) {
  cmd->add_option(n.threshold, v.threshold, "Speech probability at or above which a frame starts speech")
      ->capture_default_str();
  cmd->add_option(n.min_speech, v.min_speech_duration_ms, "Shorter segments are dropped")->capture_default_str();
  cmd->add_option(n.min_silence, v.min_silence_duration_ms, "A pause must last this long to end speech")
      ->capture_default_str();
  cmd->add_option(n.max_speech, v.max_speech_duration_s, "Longer speech is cut (default: no limit)");
  cmd->add_option(n.pad, v.speech_pad_ms, "Added on both sides of each segment")->capture_default_str();
  cmd->add_option(n.overlap, v.samples_overlap, n.overlap_help)->capture_default_str();
}

CLI::App* add_vad_command(CLI::App& app, VadCommandOptions& o) {
  CLI::App* vad = app.add_subcommand("vad", "Find the speech in audio files (Silero VAD, whisper.cpp's model)");
  add_vad_model_option(vad, o.model, "the network that finds the speech")->required();
  vad->add_option("FILE", o.files, "Audio files: WAV, FLAC, OGG Vorbis/Opus, MP3")->required();
  add_vad_options(vad, o.vad,
                  // transcribe's (whisper.cpp's) spellings first, so one spelling works in both; the
                  // short ones stay.
                  {"--vad-threshold,--threshold", "--vad-min-speech-duration-ms,--min-speech-ms",
                   "--vad-min-silence-duration-ms,--min-silence-ms", "--vad-max-speech-duration-s,--max-speech-s",
                   "--vad-speech-pad-ms,--pad-ms", "--vad-samples-overlap,--overlap",
                   "Seconds kept around segments when speech is cut out for transcription (not used here)"});
  vad->add_option("-t,--threads", o.threads, "Compute threads")->check(CLI::Range(1, 1024))->capture_default_str();
  vad->add_flag("--json", o.json, "One JSON object per file: {file, frame_samples, segments: [{t0, t1, start, end}]}");
  vad->add_flag("--probs", o.probs, "Also print every 32 ms frame's speech probability");
  vad->add_flag("--bench", o.bench, "Time the network and print frames per second (on stderr)");
  vad->add_flag("--upstream-context", o.upstream_context,
                "Upstream Silero's front end (the previous frame's last 64 samples before each frame) "
                "instead of whisper.cpp's");
  return vad;
}

int run_vad(const VadCommandOptions& o) {
  hark::VadModelParams mp;
  mp.n_threads = o.threads;
  mp.upstream_context = o.upstream_context;
  // A file, or a name from hark download (silero-v6.2.0) in the models folder.
  const std::shared_ptr<hark::VadModel> model = hark::VadModel::load(hark::find_model(o.model), mp);
  int64_t frames = 0;
  double seconds = 0.0;
  for (const std::string& file : o.files) {
    const std::vector<float> samples = hark::load_audio(file);
    const auto t0 = std::chrono::steady_clock::now();
    const hark::VadResult r = model->detect_speech(samples, o.vad);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    frames += static_cast<int64_t>(r.probs.size());
    if (o.json)
      std::printf("%s\n", to_json(file, r, o.probs).c_str());
    else
      print_text(file, r, o.probs);
  }
  if (o.bench)
    std::fprintf(stderr, "vad: %lld frames in %.3f s: %.0f frames/s (%d thread%s; %.0fx real time)\n",
                 static_cast<long long>(frames), seconds, seconds > 0 ? static_cast<double>(frames) / seconds : 0.0,
                 o.threads, o.threads == 1 ? "" : "s",
                 seconds > 0 ? static_cast<double>(frames) * model->frame_samples() / 16000.0 / seconds : 0.0);
  return 0;
}
