// hark: the command-line front end.
//
//   hark transcribe -m MODEL FILE... [-l LANG] [-t N] [-o txt,srt,vtt,json,csv,lrc] [--output-file BASE] ...
//   hark info MODEL
//   hark bench -m MODEL [-t N] [--json]
//   hark vad -vm MODEL FILE... [--threshold P] [--min-speech-ms N] ... [--json]   (cli/vad_command.h)
//   hark stream -m MODEL [--capture default|DEVICE|-] [--file F] [--slice-sec S] ... [--json]   (cli/stream_command.h)
//   hark quantize IN OUT TYPE   (cli/quantize_command.h)
//   hark download NAME [--dir DIR] [--base-url URL] | --list   (cli/download_command.h)
//   hark serve -m MODEL [--host H] [--port P] [--parallel N] ...   (cli/serve_command.h, server/)
//
// -m takes a file or an official model name ("tiny.en": found in the models folder, see
// hark/models.hpp). Progress goes to stderr: a bar on a terminal (cli/progress.h), percentage lines
// with --print-progress, nothing when piped.
//
// A thin layer over the public API (hark/hark.hpp) and nothing else, as every front end is.
// Exit codes: 0 success, 1 an error while running (message on stderr as "hark: error: ..."),
// 2 a usage error (bad option or argument), 130 interrupted.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "download_command.h"
#include "hark/hark.hpp"
#include "help_format.h"
#include "model_options.h"
#include "progress.h"
#include "quantize_command.h"
#include "serve_command.h"
#include "stream_command.h"
#include "suggest.h"
#include "vad_command.h"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

const std::vector<std::string> kFormats = {"txt", "srt", "vtt", "json", "csv", "lrc"};
// What whisper.cpp's CLI (and whisper.rn's text) writes after a segment a speaker turn follows.
constexpr const char* kSpeakerTurn = " [SPEAKER_TURN]";

// Set by SIGINT/SIGTERM; the running job polls it through should_abort and stops between nodes.
// A second signal gets the default action, so a job that does not stop can still be killed.
std::atomic<bool> g_interrupted{false};
extern "C" void on_signal(int sig) {
  g_interrupted.store(true);
  std::signal(sig, SIG_DFL);
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

void print_error(const std::string& msg) { std::fprintf(stderr, "hark: error: %s\n", msg.c_str()); }
// The library's errors end with their code ("[invalid_argument]", "[not_found]"...), the word the
// C API, the server and the Node binding give for the same failure.
std::string with_code(const std::exception& e, const std::string& msg) {
  const auto* he = dynamic_cast<const hark::Error*>(&e);
  return he ? msg + " [" + hark::error_code_name(he->code()) + "]" : msg;
}

// An option's value the library refused: the CLI only parses, the library checks every value once
// and names the option's field (TranscribeParams, VadOptions). Such an error is the same for
// every input file, so it ends the run as a usage error.
const hark::Error* option_error(const std::exception& e) {
  const auto* he = dynamic_cast<const hark::Error*>(&e);
  if (!he || he->code() != hark::ErrorCode::InvalidArgument || he->field().empty()) return nullptr;
  const std::string& f = he->field();
  const bool is_name = f != "samples" && f.find_first_not_of("abcdefghijklmnopqrstuvwxyz_.") == std::string::npos;
  return is_name ? he : nullptr;
}

// The flag of `cmd` that sets a library field, "" when it has none.
std::string flag_for(const CLI::App* cmd, std::string field) {
  static const std::pair<const char*, const char*> kRenamed[] = {
      {"n_threads", "--threads"},
      {"n_processors", "--processors"},
      {"thold_pt", "--word-thold"},
      {"max_tokens_per_window", "--max-tokens"},
      {"tdrz_enable", "--tinydiarize"},
      {"compression_ratio_threshold", "--compression-ratio-thold"},
      {"logprob_threshold", "--logprob-thold"},
      {"no_speech_threshold", "--no-speech-thold"},
      {"max_initial_timestamp", "--max-initial-ts"},
      {"dtw_preset", "--dtw"},
      {"min_speech_duration_ms", "--min-speech-ms"},
      {"min_silence_duration_ms", "--min-silence-ms"},
      {"max_speech_duration_s", "--max-speech-s"},
      {"speech_pad_ms", "--pad-ms"},
      {"samples_overlap", "--overlap"}};
  std::string flag;
  for (const auto& [f, name] : kRenamed)
    if (field == f) flag = name;
  const std::string vad = "vad_params.";
  if (flag.empty() && field.compare(0, vad.size(), vad) == 0) field = "vad_" + field.substr(vad.size());
  if (flag.empty()) {
    flag = "--" + field;
    std::replace(flag.begin(), flag.end(), '_', '-');
  }
  return cmd && cmd->get_option_no_throw(flag) ? flag : "";
}

// Writes `data` to `path` through a temporary file in the same folder, renamed into place once
// complete: a run that fails or is killed midway never leaves a truncated transcript behind, and an
// earlier good file stays as it was.
void write_file_atomically(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw hark::Error("cannot create " + path + ": " + std::strerror(errno));
  const bool wrote = data.empty() || std::fwrite(data.data(), 1, data.size(), f) == data.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;  // reports a failure to flush (e.g. a full disk)
  const int close_errno = errno;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    throw hark::Error("cannot write " + path + ": " + std::strerror(wrote ? close_errno : write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw hark::Error("cannot write " + path + ": " + std::strerror(e));
  }
}

std::string render(const std::string& format, const hark::Transcript& t) {
  if (format == "txt") return hark::to_txt(t);
  if (format == "srt") return hark::to_srt(t);
  if (format == "vtt") return hark::to_vtt(t);
  if (format == "csv") return hark::to_csv(t);
  if (format == "lrc") return hark::to_lrc(t);
  return hark::to_json(t, /*full=*/format != "json-compact");
}

std::string timings_line(const std::string& file, const hark::Timings& tm) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "hark: %s: %.1f s of audio; load %.0f ms, mel %.0f ms, encode %.0f ms (%d windows), decode %.0f ms "
                "(%d tokens, %.2f ms/token), total %.0f ms, real-time factor %.3f",
                file.c_str(), tm.audio_seconds, tm.load_ms, tm.mel_ms, tm.encode_ms, tm.n_windows, tm.decode_ms,
                tm.n_decode_tokens, tm.decode_ms_per_token(), tm.total_ms, tm.real_time_factor());
  std::string line = buf;
  if (tm.vad_ms > 0) {  // --vad: what finding the speech cost
    std::snprintf(buf, sizeof buf, "; vad %.0f ms", tm.vad_ms);
    line += buf;
  }
  return line;
}

struct TranscribeOptions {
  std::string model;
  std::vector<std::string> files;
  std::string language = "en";
  int threads = 0;
  std::string device;  // empty: the best device (a GPU when the build has one)
  bool no_gpu = false;
  bool no_flash_attn = false;
  hark::KvCacheType cross_kv_type = hark::KvCacheType::F16;
  int processors = 1;
  std::vector<std::string> formats;
  std::string output_file;
  int64_t offset_ms = 0;
  int64_t duration_ms = 0;
  bool no_timestamps = false;
  bool translate = false;
  std::string prompt;
  bool quiet = false;
  bool print_progress = false;      // whisper.cpp's -pp: percentage lines on stderr
  bool detect_language = false;     // only name each file's language, no transcription (whisper.cpp's -dl)
  hark::TranscribeParams decoding;  // the decoding policy fields, set by their flags
  bool no_fallback = false;
  bool output_json = false;                     // -oj: JSON without tokens
  bool output_json_full = false;                // -ojf: JSON with tokens (as -o json)
  bool output_csv = false, output_lrc = false;  // whisper.cpp's -ocsv, -olrc: as "-o csv", "-o lrc"
};

// `transcribe -`: audio in any format hark decodes, read whole from standard input (as `stream
// --capture -` reads raw PCM from it).
std::vector<float> read_stdin_audio() {
  if (::isatty(STDIN_FILENO))
    throw hark::Error("-: standard input is a terminal; pipe audio into it (cat talk.wav | hark transcribe -m M -)");
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) bytes.append(buf, n);
  if (bytes.empty()) throw hark::Error("-: standard input was empty (no audio came)");
  return hark::decode_audio(bytes.data(), bytes.size());
}

int run_transcribe(const TranscribeOptions& o) {
  // A VAD model named as hark download names it (silero-v6.2.0) is its file in the models folder;
  // found before the Whisper model loads, so a wrong name fails at once (as stream and serve do).
  const std::string vad_model = o.decoding.vad_model_path.empty() ? "" : hark::find_model(o.decoding.vad_model_path);
  hark::ContextParams cp;
  cp.n_threads = o.threads;
  cp.device = o.device;
  cp.use_gpu = !o.no_gpu;
  cp.flash_attn = !o.no_flash_attn;
  cp.cross_kv_type = o.cross_kv_type;
  const std::unique_ptr<hark::Context> ctx = load_with_progress(o.model, cp, progress_mode_for_terminal(o.quiet));
  if (!o.quiet)
    std::fprintf(stderr, "hark: loaded %s (%s, %s) in %.0f ms\n", o.model.c_str(), ctx->info().size_name.c_str(),
                 ctx->info().weight_type.c_str(), ctx->info().load_ms);

  // The same format named twice is written once.
  std::vector<std::string> formats;
  std::vector<std::string> asked = o.formats;
  if (o.output_json_full) asked.push_back("json");
  // -oj's compact JSON goes to the same .json file: the full one wins when both are asked for.
  if (o.output_json && std::find(asked.begin(), asked.end(), "json") == asked.end()) asked.push_back("json-compact");
  if (o.output_csv) asked.emplace_back("csv");
  if (o.output_lrc) asked.emplace_back("lrc");
  for (const std::string& f : asked)
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  // --output-file names a file to write: alone, a text file.
  if (!o.output_file.empty() && formats.empty()) formats.emplace_back("txt");

  int status = 0;
  for (const std::string& file : o.files) {
    try {
      std::string base = o.output_file.empty() ? file : o.output_file;
      if (!o.output_file.empty()) {
        // "res.srt" with -o srt is res.srt, not res.srt.srt: an extension of a format asked for
        // is the one the file gets anyway.
        const std::string ext = std::filesystem::path(base).extension().string();
        for (const std::string& f : formats)
          if (!ext.empty() && ext.substr(1) == (f == "json-compact" ? std::string("json") : f))
            base.resize(base.size() - ext.size());
        // Its folder is made now (as `mkdir -p`), not after minutes of transcribing.
        const std::filesystem::path folder = std::filesystem::path(base).parent_path();
        std::error_code ec;
        if (!folder.empty() && !std::filesystem::is_directory(folder, ec) &&
            !std::filesystem::create_directories(folder, ec))
          throw hark::Error("cannot make folder " + folder.string() + " for " + base + "." + formats[0] + ": " +
                            ec.message());
      }
      const std::vector<float> audio = file == "-" ? read_stdin_audio() : hark::load_audio(file);
      if (o.detect_language) {
        hark::DetectLanguageParams dp;
        dp.offset_ms = o.offset_ms;
        dp.n_threads = o.threads;
        dp.should_abort = [] { return g_interrupted.load(); };
        const hark::LanguageDetection d = ctx->detect_language(audio, dp);
        if (d.aborted) return kExitInterrupted;
        std::printf("%s: auto-detected language: %s (p = %.6f)\n", file.c_str(), d.language.c_str(), d.probability);
        std::fflush(stdout);
        continue;
      }

      // The decoding policy as its flags set it (the fields no flag sets keep the defaults), then
      // the rest of the request.
      hark::TranscribeParams p = o.decoding;
      p.vad_model_path = vad_model;
      p.temperature_inc = o.no_fallback ? 0.0f : p.temperature_inc;
      p.word_timestamps = p.word_timestamps || !p.dtw_preset.empty();  // -dtw PRESET asks for words
      p.language = o.language;
      p.translate = o.translate;
      p.n_threads = o.threads;
      p.n_processors = o.processors;
      p.offset_ms = o.offset_ms;
      p.duration_ms = o.duration_ms;
      p.timestamps = !o.no_timestamps;
      p.initial_prompt = o.prompt;
      p.should_abort = [] { return g_interrupted.load(); };
      // The part transcribed (offset and duration), which the engine's percentage is of.
      const double file_seconds = static_cast<double>(audio.size()) / hark::kSampleRate;
      const double start_seconds = std::clamp(o.offset_ms / 1000.0, 0.0, file_seconds);
      const double part_seconds = o.duration_ms > 0 ? std::min(o.duration_ms / 1000.0, file_seconds - start_seconds)
                                                    : file_seconds - start_seconds;
      TranscribeProgress progress(o.print_progress ? ProgressMode::Lines : progress_mode_for_terminal(o.quiet), file,
                                  part_seconds, start_seconds);
      p.on_progress = [&](int percent) { progress.on_percent(percent); };
      p.on_fallback = [&](const hark::Fallback& f) { progress.on_fallback(f); };
      // Segments are printed as they become final, so a long file shows progress as it goes.
      p.on_new_segments = [&](const hark::NewSegments& ns) {
        progress.on_segments();  // the bar shares the terminal: off while the lines print, redrawn after
        for (const hark::Segment& s : ns.segments) {
          const char* turn = o.decoding.tdrz_enable && s.speaker_turn_next ? kSpeakerTurn : "";
          if (o.no_timestamps) {
            const std::string text = trimmed(s.text);  // as in the .txt file: no blank lines
            if (!text.empty()) std::printf("%s%s\n", text.c_str(), turn);
          } else {
            std::string line = hark::format_segment_line(s);
            line.insert(line.size() - 1, turn);  // before its newline
            std::fputs(line.c_str(), stdout);
          }
        }
        std::fflush(stdout);
      };

      hark::Transcript t;
      try {
        t = ctx->transcribe(audio, p);
        progress.finish();
      } catch (const hark::Error& e) {
        // Messages from the engine speak of samples and windows; say which file they are about.
        const std::string msg = e.what();
        throw hark::Error(e.code(), msg.find(file) == std::string::npos ? file + ": " + msg : msg, e.field());
      }
      if (g_interrupted.load()) {
        std::fprintf(stderr, "hark: interrupted; no files written for %s\n", file.c_str());
        return kExitInterrupted;
      }
      if (!o.quiet && p.language == "auto" && ctx->info().multilingual && !t.language.empty()) {
        const int id = hark::language_id(t.language);
        const char* name = id >= 0 ? hark::language_name_at(id) : nullptr;
        std::fprintf(stderr, "hark: %s: detected language: %s%s%s%s (p = %.2f)\n", file.c_str(), t.language.c_str(),
                     name ? " (" : "", name ? name : "", name ? ")" : "", t.language_prob);
      }

      for (const std::string& f : formats) {
        const std::string path = base + "." + (f == "json-compact" ? std::string("json") : f);
        write_file_atomically(path, render(f, t));
        if (!o.quiet) std::fprintf(stderr, "hark: wrote %s\n", path.c_str());
      }
      if (!o.quiet) std::fprintf(stderr, "%s\n", timings_line(file, t.timings).c_str());
    } catch (const std::exception& e) {
      if (option_error(e)) throw;  // the same for every file: a usage error (main)
      // One bad file does not stop the others; the exit code still says something failed.
      const std::string msg = e.what();
      print_error(with_code(e, msg.find(file) == std::string::npos ? file + ": " + msg : msg));
      status = kExitError;
    }
  }
  return status;
}

struct BenchOptions {
  std::string model;
  int threads = 0;
  hark::KvCacheType cross_kv_type = hark::KvCacheType::F16;
  bool json = false;
};

// whisper-bench's figures for the loaded model (whisper.rn's bench()).
int run_bench(const BenchOptions& o) {
  hark::ContextParams cp;
  cp.n_threads = o.threads;
  cp.cross_kv_type = o.cross_kv_type;
  const std::unique_ptr<hark::Context> ctx = load_with_progress(o.model, cp, progress_mode_for_terminal(o.json));
  const hark::BenchResult r = ctx->bench(o.threads);
  if (o.json) {
    std::printf("%s\n", r.to_json().c_str());
    return 0;
  }
  std::printf("model      %s (%s, %s)\n", o.model.c_str(), ctx->info().size_name.c_str(),
              ctx->info().weight_type.c_str());
  std::printf("system     %s\n", r.config.c_str());
  std::printf("threads    %d\n", r.n_threads);
  std::printf("encode     %9.2f ms  (one 30 s window)\n", r.encode_ms);
  std::printf("decode     %9.2f ms  per token (256 single-token steps)\n", r.decode_ms);
  std::printf("batch      %9.2f ms  per token (64 steps of a 5-token batch)\n", r.batch_ms);
  std::printf("prompt     %9.2f ms  per token (16 prompts of 256 tokens)\n", r.prompt_ms);
  return 0;
}

int run_info(const std::string& model) {
  const std::unique_ptr<hark::Context> ctx = hark::Context::load(model);
  std::fputs(ctx->info().describe().c_str(), stdout);
  return 0;
}

// A usage error, said with the command it is about: "hark CMD: WHAT", for a missing argument
// also the command's usage line, then where the rest is (CLI11's own message names neither the
// command nor the usage). No command at all (a bare `hark`): the list of commands. Exit 2.
int usage_error(CLI::App& app, const CLI::ParseError& e) {
  CLI::App* cmd = nullptr;
  for (CLI::App* c : app.get_subcommands()) cmd = c;  // the one parsed, if any
  if (!cmd) {
    if (dynamic_cast<const CLI::RequiredError*>(&e))
      std::fputs(app.help().c_str(), stderr);
    else
      app.exit(e);
    return kExitUsage;
  }
  const std::string name = cmd->get_name();
  std::string usage;
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    // The command's own help starts "Usage: transcribe ..."; the user types "hark transcribe".
    const std::string help = cmd->help();
    const size_t at = help.find("Usage: ");
    if (at != std::string::npos) usage = "Usage: hark " + help.substr(at + 7, help.find('\n', at) - at - 7) + "\n";
  }
  std::fprintf(stderr, "hark %s: %s\n%sRun 'hark %s --help' for all its options.\n", name.c_str(), e.what(),
               usage.c_str(), name.c_str());
  return kExitUsage;
}

}  // namespace

static std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// After "The following arguments were not expected": for each unknown --option of the command
// given, the option it was probably meant to be.
static void suggest_options(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cmd = &app;
  for (const CLI::App* c : app.get_subcommands({}))
    if (c->parsed()) cmd = c;
  std::vector<std::string> names;
  for (const CLI::Option* o : cmd->get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  for (const std::string& a : args) {
    if (a.rfind("--", 0) != 0) continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string hint = hark::cli::nearest(name, names);
    if (!hint.empty())
      std::fprintf(stderr, "hark: %s is no option of %s; did you mean %s?\n", name.c_str(),
                   cmd == &app ? "hark" : ("hark " + cmd->get_name()).c_str(), hint.c_str());
  }
}

// whisper.cpp's CLI spells some flags as multi-letter short options (-ng); CLI11 takes one letter
// after a single dash, so those are renamed to their long forms before parsing.
static std::vector<std::string> whisper_cpp_spellings(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string spelled = a;
    for (const auto& [short_form, long_form] : hark::cli::whisper_cpp_flags())
      if (a == short_form) spelled = long_form;
    args.push_back(spelled);
  }
  std::reverse(args.begin(), args.end());  // CLI11's parse(vector) takes the arguments last first
  return args;
}

int main(int argc, char** argv) {
  CLI::App app{"hark: offline speech-to-text with Whisper models", "hark"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "hark 0.1.0");
  hark::cli::use_help_format(app);

  TranscribeOptions topt;
  CLI::App* transcribe = app.add_subcommand("transcribe", "Transcribe (or translate) audio files");
  transcribe
      ->add_option("-m,--model", topt.model,
                   "Whisper model: a ggml .bin file, or an official name (tiny.en ...) from hark download")
      ->required();
  transcribe->add_option("FILE", topt.files, "Audio files: WAV, FLAC, OGG Vorbis/Opus, MP3 ('-': standard input)")
      ->required();
  transcribe->add_option("-l,--language", topt.language, "Spoken language code, or 'auto' to detect")
      ->capture_default_str();
  transcribe->add_option("-t,--threads", topt.threads, "Compute threads (0: the machine's cores, at most 8)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  transcribe->add_option("--device", topt.device, "cpu, or cpu-ref (scalar reference, for checks); default: the best")
      ->check(CLI::IsMember({"cpu", "cpu-ref"}));
  transcribe->add_option("-o,--output-format", topt.formats, "Also write these files: txt, srt, vtt, json, csv, lrc")
      ->delimiter(',')
      ->allow_extra_args(false)  // one value (a comma list) per -o: the files after it stay inputs
      ->check(CLI::IsMember(kFormats));
  transcribe->add_flag("--output-csv", topt.output_csv, "Also write a CSV file (as -o csv)");
  transcribe->add_flag("--output-lrc", topt.output_lrc, "Also write an LRC lyrics file (as -o lrc)");
  transcribe->add_option("--output-file", topt.output_file,
                         "Output path (its folder is made; '.srt' etc. is appended unless given; alone: a .txt)");
  transcribe->add_option("--offset-ms", topt.offset_ms, "Start this far into the audio");
  transcribe->add_option("--duration-ms", topt.duration_ms, "Transcribe only this much (0: to the end)");
  transcribe->add_flag("--no-timestamps", topt.no_timestamps, "Plain text, no timestamps");
  transcribe->add_flag("--detect-language", topt.detect_language,
                       "Only detect each file's spoken language (from --offset-ms) and print it");
  transcribe->add_flag("--translate", topt.translate, "Translate into English (multilingual models)");
  transcribe->add_option("--prompt", topt.prompt, "Text the model sees as what came before");
  transcribe
      ->add_option("-p,--processors", topt.processors,
                   "Cut the audio into this many parts decoded in parallel (each on its own state)")
      ->capture_default_str();
  transcribe->add_flag("--no-gpu", topt.no_gpu, "Compute on the CPU even when a GPU device exists");
  transcribe->add_flag("--no-flash-attn", topt.no_flash_attn, "Plain attention graph instead of the fused one");
  add_cross_kv_option(transcribe, topt.cross_kv_type);
  transcribe->add_flag("-q,--quiet,--no-prints", topt.quiet, "Print only the transcript (no timings, no progress bar)");
  transcribe->add_flag("--print-progress", topt.print_progress, "Print the progress as percentage lines on stderr");
  // Decoding policy: whisper.cpp's names where it has the option (-tp -tpi -nf -bo -sns -mc -lpt
  // -nth --prompt --carry-initial-prompt --suppress-regex), OpenAI's meanings and defaults.
  hark::TranscribeParams& dp = topt.decoding;
  transcribe->add_option("--temperature", dp.temperature, "Sampling temperature of the first pass (0: greedy)")
      ->capture_default_str();
  transcribe
      ->add_option("--temperature-inc", dp.temperature_inc,
                   "Fallback step up to 1.0 when a window's text is repetitive or unsure (0: none)")
      ->capture_default_str();
  transcribe->add_flag("--no-fallback", topt.no_fallback, "No temperature fallback (as --temperature-inc 0)");
  transcribe->add_option("--best-of", dp.best_of, "Candidates sampled at temperature > 0, the best kept")
      ->capture_default_str();
  transcribe
      ->add_option("--beam-size", dp.beam_size,
                   "Beams of the beam search at temperature 0 (1: greedy; whisper.cpp's CLI uses 5)")
      ->capture_default_str();
  transcribe
      ->add_option("--patience", dp.patience,
                   "Beam search: gather round(beam size x patience) finished candidates (OpenAI's patience)")
      ->capture_default_str();
  transcribe
      ->add_option(
          "--repetition-penalty", dp.repetition_penalty,
          "Divide a token's logit by this once the window has produced it (> 1: fewer repeats; faster-whisper's)")
      ->capture_default_str();
  transcribe
      ->add_option("--no-repeat-ngram-size", dp.no_repeat_ngram_size,
                   "No n-gram of this many tokens twice in a window (0: off; faster-whisper's)")
      ->capture_default_str();
  transcribe
      ->add_option(
          "--temperatures", dp.temperatures,
          "The temperatures tried per window, in order (comma list; instead of -tp and -tpi; faster-whisper's)")
      ->delimiter(',')
      ->allow_extra_args(false);
  transcribe->add_option(
      "--logprob-low-threshold", dp.logprob_low_threshold,
      "Skip a window whose average log-probability is below this (faster-whisper's log_prob_low_threshold)");
  transcribe
      ->add_option("--prompt-reset-temperature", dp.prompt_reset_temperature,
                   "A window decoded above this temperature does not condition the next (faster-whisper's "
                   "prompt_reset_on_temperature)")
      ->capture_default_str();
  transcribe
      ->add_option("--clip-timestamps", dp.clip_timestamps,
                   "Transcribe only these clips: seconds start,end,start,... (odd: the last runs to the end)")
      ->delimiter(',')
      ->allow_extra_args(false);
  transcribe
      ->add_option("--length-penalty", dp.length_penalty,
                   "Ranking of candidates: < 0 divides by length, else alpha of ((5 + len) / 6)^alpha")
      ->capture_default_str();
  transcribe->add_flag("--length-penalty-power", dp.length_penalty_power,
                       "--length-penalty as CTranslate2's exponent: divide by length^alpha (faster-whisper's)");
  transcribe->add_option("--hotwords", dp.hotwords,
                         "Words to expect (names, terms), before every window's prompt (faster-whisper's hotwords)");
  transcribe->add_option("--prefix", dp.prefix, "The transcript begins with this text (faster-whisper's prefix)");
  transcribe->add_flag("--multilingual", dp.multilingual,
                       "Detect the language in every window, for audio that changes language");
  transcribe
      ->add_option("--compression-ratio-thold", dp.compression_ratio_threshold,
                   "Fall back when the window text's gzip compression ratio is above this")
      ->capture_default_str();
  transcribe
      ->add_option("--logprob-thold", dp.logprob_threshold,
                   "Fall back when the window's average log-probability is below this")
      ->capture_default_str();
  transcribe
      ->add_option("--no-speech-thold", dp.no_speech_threshold,
                   "Skip a window as silence above this no-speech probability (and unsure text)")
      ->capture_default_str();
  transcribe->add_option("--seed", dp.seed, "Seed of the sampling at temperature > 0 (same seed, same text)")
      ->capture_default_str();
  transcribe->add_flag("--suppress-nst,!--no-suppress-nst", dp.suppress_nst,
                       "Never produce non-speech tokens (on by default, as OpenAI's suppress_tokens -1)");
  transcribe->add_flag("!--no-suppress-blank", dp.suppress_blank, "Allow a blank as a window's first token");
  transcribe->add_option("--suppress-regex", dp.suppress_regex,
                         "Never produce tokens whose whole text matches this regular expression (ECMAScript)");
  transcribe->add_option("--suppress-tokens", dp.suppress_tokens, "Never produce these token ids (comma list)")
      ->delimiter(',')
      ->allow_extra_args(false);
  transcribe->add_flag("--carry-initial-prompt", dp.carry_initial_prompt,
                       "Keep --prompt in front of every window's prompt, not only the first's");
  transcribe->add_flag("--no-context", dp.no_context, "Do not use the previous text as prompt");
  transcribe
      ->add_option("--max-context", dp.max_context,
                   "Tokens of previous text kept as prompt (-1: the model's limit; 0: none)")
      ->capture_default_str();
  transcribe
      ->add_option("--max-initial-ts", dp.max_initial_timestamp,
                   "A window's first timestamp is at most this many seconds (< 0: no limit)")
      ->capture_default_str();
  transcribe->add_flag("--single-segment", dp.single_segment, "One segment per 30 s window");
  transcribe->add_option("--max-tokens", dp.max_tokens_per_window, "Tokens per window at most (0: the model's)")
      ->capture_default_str();
  // Token timestamps, segment length, speaker turns: whisper.cpp's -ml -sow -wt -tdrz. whisper.cpp's
  // CLI has no flag of its own for token timestamps (-ml, -ojf and -owts turn them on);
  // --token-timestamps is whisper.rn's tokenTimestamps.
  transcribe->add_flag("--token-timestamps", dp.token_timestamps,
                       "Time every token from the timestamp probabilities (json: tokens' t0, t1)");
  transcribe
      ->add_option("--max-len", dp.max_len,
                   "Segments of at most this many bytes of text (0: no limit; turns token timestamps on)")
      ->capture_default_str();
  transcribe->add_flag("--split-on-word", dp.split_on_word, "With --max-len, cut only between words");
  transcribe
      ->add_option("--word-thold", dp.thold_pt,
                   "A token's timestamp is trusted above this probability (whisper.rn's wordThold)")
      ->capture_default_str();
  transcribe->add_flag("--tinydiarize", dp.tdrz_enable,
                       "Speaker turns with a tinydiarize (tdrz) model: segments end at a turn, marked [SPEAKER_TURN]");

  // Word timestamps: hark's --word-timestamps (the model's own heads), whisper.cpp's -dtw PRESET,
  // OpenAI's punctuation and hallucination options.
  transcribe->add_flag("--word-timestamps", dp.word_timestamps,
                       "Time every word (DTW over the model's alignment heads); JSON output carries the words");
  transcribe->add_option("--dtw", dp.dtw_preset,
                         "Word timestamps with these alignment heads: tiny, tiny.en, base, base.en, small, "
                         "small.en, medium, medium.en, large.v1, large.v2, large.v3, large.v3.turbo, top-n, custom");
  transcribe->add_option("--dtw-n-top", dp.dtw_n_top, "--dtw top-n: every head of this many last text layers")
      ->check(CLI::PositiveNumber);
  transcribe->add_option("--dtw-heads", dp.dtw_heads, "--dtw custom: layer,head pairs, e.g. \"2,4 3,0\"");
  transcribe->add_option("--prepend-punctuations", dp.prepend_punctuations,
                         "With word timestamps: these marks join the next word");
  transcribe->add_option("--append-punctuations", dp.append_punctuations,
                         "With word timestamps: these marks join the previous word");
  transcribe
      ->add_option("--hallucination-silence-threshold", dp.hallucination_silence_threshold,
                   "With word timestamps: skip silences longer than this (seconds) around a suspected "
                   "hallucination (0: off)")
      ->check(CLI::NonNegativeNumber);
  // VAD-assisted transcription: whisper.cpp's flags and defaults.
  transcribe->add_flag("--vad", dp.vad, "Transcribe only the speech the Silero VAD finds (needs --vad-model)");
  add_vad_model_option(transcribe, dp.vad_model_path, "only the speech it finds is transcribed (implies --vad)");
  transcribe
      ->add_option("--batch-size", dp.batch_size,
                   "Batched long-audio pipeline: the VAD (--vad-model) cuts the audio at pauses into chunks of "
                   "up to 30 s, decoded this many at a time in one step (1: sequential)")
      ->capture_default_str();
  // whisper.cpp's spellings; the short ones (-vt, -vspd, -vsd, -vmsd, -vp, -vo) are renamed above.
  add_vad_options(transcribe, dp.vad_params,
                  {"--vad-threshold", "--vad-min-speech-duration-ms", "--vad-min-silence-duration-ms",
                   "--vad-max-speech-duration-s", "--vad-speech-pad-ms", "--vad-samples-overlap",
                   "Seconds of audio kept after each stretch of speech"});
  transcribe->add_flag("--output-json", topt.output_json, "Write a .json without the tokens");
  transcribe->add_flag("--output-json-full", topt.output_json_full, "Write a .json with the tokens (as -o json)");
  hark::cli::group_transcribe_options(transcribe);

  std::string info_model;
  CLI::App* info = app.add_subcommand("info", "Describe a model file");
  info->add_option("MODEL", info_model, "Whisper model in ggml .bin format")->required();

  BenchOptions bopt;
  CLI::App* bench = app.add_subcommand("bench", "Measure encoder, decoder, batch and prompt speed (whisper-bench)");
  bench->add_option("-m,--model", bopt.model, "Whisper model in ggml .bin format")->required();
  bench->add_option("-t,--threads", bopt.threads, "Compute threads (0: the machine's cores, at most 8)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  add_cross_kv_option(bench, bopt.cross_kv_type);
  bench->add_flag("--json", bopt.json,
                  "Print whisper.rn's JSON array: [config, threads, encode, decode, batch, prompt]");

  VadCommandOptions vopt;
  CLI::App* vad = add_vad_command(app, vopt);

  StreamCommandOptions sopt;
  CLI::App* stream = add_stream_command(app, sopt);

  QuantizeCommandOptions qopt;
  CLI::App* quantize = add_quantize_command(app, qopt);
  DownloadCommandOptions dopt;
  CLI::App* download = add_download_command(app, dopt);
  ServeCommandOptions serve_opt;
  CLI::App* serve = add_serve_command(app, serve_opt);

  std::vector<std::string> args = whisper_cpp_spellings(argc, argv);  // last first
  // `hark help [COMMAND]` is `hark [COMMAND] --help`.
  if (!args.empty() && args.back() == "help") {
    args.pop_back();
    args = args.empty() ? std::vector<std::string>{"--help"} : std::vector<std::string>{"--help", args.back()};
  }
  // A first word that is no command: name it, and the command it was probably meant to be.
  if (!args.empty() && !args.back().empty() && args.back()[0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* c : app.get_subcommands({})) names.push_back(c->get_name());
    if (std::find(names.begin(), names.end(), args.back()) == names.end()) {
      const std::string hint = hark::cli::nearest(args.back(), names);
      std::fprintf(stderr, "hark: '%s' is not a hark command%s\nThe commands: %s (hark help COMMAND tells more)\n",
                   args.back().c_str(), hint.empty() ? "" : ("; did you mean '" + hint + "'?").c_str(),
                   join(names, ", ").c_str());
      return kExitUsage;
    }
  }
  // What a first run needs, under the list of commands (a bare `hark` prints this help too);
  // set after the commands are added, which would otherwise inherit it.
  app.footer(
      "Start with:\n"
      "  hark download base.en                  a model (31 MiB to 2.9 GiB: hark download --list)\n"
      "  hark transcribe -m base.en talk.mp3    any audio file; -o srt,json also writes files\n"
      "  hark serve -m base.en                  OpenAI's audio API and a web page on 127.0.0.1:8080\n"
      "'hark help COMMAND' (or 'hark COMMAND --help') tells all of a command's options.");
  try {
    app.parse(args);
    if (transcribe->parsed() && topt.output_file.empty() && !topt.formats.empty() &&
        std::find(topt.files.begin(), topt.files.end(), "-") != topt.files.end())
      throw CLI::ValidationError("--output-file", "names the files written for audio from standard input (-)");
    if (transcribe->parsed() && !topt.output_file.empty() && topt.files.size() > 1)
      throw CLI::ValidationError(
          "--output-file", "names one output, but " + std::to_string(topt.files.size()) + " input files were given");
    if (download->parsed()) check_download_options(dopt);
    // stream needs a model unless it only lists the capture devices: a usage error, said before
    // anything is opened.
    if (stream->parsed() && sopt.model.empty() && !sopt.list_devices) throw CLI::RequiredError("--model (-m)");
    if (transcribe->parsed()) {
      hark::TranscribeParams& dp = topt.decoding;
      // A VAD model given is a VAD asked for (batch_size > 1 uses it for its chunks anyway).
      if (!dp.vad_model_path.empty() && dp.batch_size <= 1) dp.vad = true;
      if (dp.vad && dp.vad_model_path.empty())
        throw CLI::ValidationError("--vad",
                                   "needs --vad-model (-vm): a Silero VAD model file in whisper.cpp's format "
                                   "(ggml-silero-v6.2.0.bin)");
    }
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; CLI11 prints them. Words it did not
    // expect get CLI11's message and the nearest option. Any other is a usage error said with its
    // command (and, for a missing argument, the usage line): exit 2, not CLI11's own code.
    if (e.get_exit_code() == 0) return app.exit(e);
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
      app.exit(e);
      suggest_options(app, args);
      return kExitUsage;
    }
    return usage_error(app, e);
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    if (transcribe->parsed()) return run_transcribe(topt);
    if (bench->parsed()) return run_bench(bopt);
    if (vad->parsed()) return run_vad(vopt);
    if (stream->parsed()) return run_stream(sopt, g_interrupted);
    if (quantize->parsed()) return run_quantize(qopt);
    if (download->parsed()) return run_download(dopt, g_interrupted);
    if (serve->parsed()) return run_serve(serve_opt, g_interrupted);
    return run_info(info_model);
  } catch (const std::exception& e) {
    if (const hark::Error* oe = option_error(e)) {
      CLI::App* cmd = nullptr;
      for (CLI::App* c : {transcribe, bench, vad, stream, quantize, download, serve})
        if (c->parsed()) cmd = c;
      const std::string flag = flag_for(cmd, oe->field());
      if (!flag.empty()) {
        print_error(with_code(e, std::string(e.what()) + " (" + flag + ")"));
        return kExitUsage;
      }
    }
    print_error(with_code(e, e.what()));
    return kExitError;
  }
}
