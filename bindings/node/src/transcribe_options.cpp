// TranscribeOptions -> hark::TranscribeParams (see the header).
#include "transcribe_options.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include "js_options.h"

namespace hark_node {

int default_max_threads() {
  const int cores = std::max(1, int(std::thread::hardware_concurrency()));
  return cores == 4 ? 2 : std::min(4, cores);
}

// Options are parsed here (a number, an integer that fits its C++ field), and checked once, by the
// library, whose error (code ERR_HARK_INVALID_ARGUMENT) names the field.
constexpr int64_t kIntMin = std::numeric_limits<int>::min();
constexpr int64_t kIntMax = std::numeric_limits<int>::max();
constexpr double kHuge = std::numeric_limits<float>::max();

hark::TranscribeParams transcribe_params_from_js(const Napi::Object& o) {
  hark::TranscribeParams p;
  // ---- whisper.rn's TranscribeOptions ----
  p.language = get_string(o, "language", "auto");
  if (p.language.empty()) p.language = "auto";
  p.translate = get_bool(o, "translate", false);
  p.n_threads = int(get_int(o, "maxThreads", default_max_threads(), 1, 256));
  p.n_processors = int(get_int(o, "nProcessors", 1, kIntMin, kIntMax));
  p.max_context = int(get_int(o, "maxContext", -1, kIntMin, kIntMax));
  p.max_len = int(get_int(o, "maxLen", 0, kIntMin, kIntMax));
  p.token_timestamps = get_bool(o, "tokenTimestamps", false);
  p.tdrz_enable = get_bool(o, "tdrzEnable", false);
  p.thold_pt = float(get_number(o, "wordThold", 0.01, -kHuge, kHuge));
  p.offset_ms = get_int(o, "offset", 0, -(int64_t(1) << 50), int64_t(1) << 50);
  p.duration_ms = get_int(o, "duration", 0, -(int64_t(1) << 50), int64_t(1) << 50);
  p.temperature = float(get_number(o, "temperature", 0.0, -kHuge, kHuge));
  p.temperature_inc = float(get_number(o, "temperatureInc", 0.2, -kHuge, kHuge));
  // whisper.rn passes beamSize only when set: beam search then, greedy otherwise.
  p.beam_size = int(get_int(o, "beamSize", 1, kIntMin, kIntMax));
  p.best_of = int(get_int(o, "bestOf", 5, kIntMin, kIntMax));
  p.initial_prompt = get_string(o, "prompt", "");

  // ---- hark's extras, named in the same style ----
  p.word_timestamps = get_bool(o, "wordTimestamps", false);
  p.split_on_word = get_bool(o, "splitOnWord", false);
  p.no_context = get_bool(o, "noContext", false);
  p.single_segment = get_bool(o, "singleSegment", false);
  p.timestamps = !get_bool(o, "noTimestamps", false);
  p.suppress_blank = get_bool(o, "suppressBlank", true);
  // whisper.rn's default (whisper.cpp's params): non-speech tokens allowed. The CLI keeps hark's.
  p.suppress_nst = get_bool(o, "suppressNst", false);
  p.no_speech_threshold = float(get_number(o, "noSpeechThold", 0.6, -1e9, 1e9));
  p.logprob_threshold = float(get_number(o, "logprobThold", -1.0, -1e9, 1e9));
  p.compression_ratio_threshold = float(get_number(o, "entropyThold", 2.4, -1e9, 1e9));
  p.patience = float(get_number(o, "patience", 1.0, -kHuge, kHuge));
  p.length_penalty = float(get_number(o, "lengthPenalty", -1.0, -kHuge, kHuge));
  p.seed = uint64_t(get_int(o, "seed", 0, 0, (int64_t(1) << 53) - 1));
  p.max_initial_timestamp = float(get_number(o, "maxInitialTs", 1.0, -1e9, 1e9));
  p.carry_initial_prompt = get_bool(o, "carryInitialPrompt", false);
  p.max_tokens_per_window = int(get_int(o, "maxTokensPerWindow", 0, kIntMin, kIntMax));
  p.batch_size = int(get_int(o, "batchSize", 1, kIntMin, kIntMax));
  // faster-whisper's decoding options, hark's own in the engine.
  p.hotwords = get_string(o, "hotwords", "");
  p.prefix = get_string(o, "prefix", "");
  p.multilingual = get_bool(o, "multilingual", false);
  p.repetition_penalty = float(get_number(o, "repetitionPenalty", 1.0, -kHuge, kHuge));
  p.no_repeat_ngram_size = int(get_int(o, "noRepeatNgramSize", 0, kIntMin, kIntMax));
  p.length_penalty_power = get_bool(o, "lengthPenaltyPower", false);
  for (double t : get_numbers(o, "clipTimestamps")) p.clip_timestamps.push_back(float(t));
  p.vad = get_bool(o, "vad", false);
  p.vad_model_path = get_string(o, "vadModelPath", "");
  p.vad_params.threshold = float(get_number(o, "vadThreshold", p.vad_params.threshold, -kHuge, kHuge));
  p.vad_params.min_speech_duration_ms =
      int(get_int(o, "vadMinSpeechDurationMs", p.vad_params.min_speech_duration_ms, kIntMin, kIntMax));
  p.vad_params.min_silence_duration_ms =
      int(get_int(o, "vadMinSilenceDurationMs", p.vad_params.min_silence_duration_ms, kIntMin, kIntMax));
  p.vad_params.speech_pad_ms = int(get_int(o, "vadSpeechPadMs", p.vad_params.speech_pad_ms, kIntMin, kIntMax));
  p.vad_params.samples_overlap = float(get_number(o, "vadSamplesOverlap", p.vad_params.samples_overlap, -kHuge, kHuge));
  if (has_option(o, "vadMaxSpeechDurationS"))
    p.vad_params.max_speech_duration_s = float(get_number(o, "vadMaxSpeechDurationS", 30.0, -kHuge, kHuge));
  // hark's own message names the C++ field (vad_model_path); say it in this API's words.
  if ((p.vad || p.batch_size > 1) && p.vad_model_path.empty())
    throw Napi::TypeError::New(o.Env(), std::string("option '") + (p.vad ? "vad" : "batchSize") +
                                            "' needs 'vadModelPath': a Silero VAD model in whisper.cpp's format "
                                            "(e.g. ggml-silero-v6.2.0.bin)");
  return p;
}

std::string js_option_name(const std::string& field) {
  static const std::pair<const char*, const char*> kRenamed[] = {{"thold_pt", "wordThold"},
                                                                 {"offset_ms", "offset"},
                                                                 {"duration_ms", "duration"},
                                                                 {"n_threads", "maxThreads"},
                                                                 {"no_speech_threshold", "noSpeechThold"},
                                                                 {"logprob_threshold", "logprobThold"},
                                                                 {"compression_ratio_threshold", "entropyThold"},
                                                                 {"max_initial_timestamp", "maxInitialTs"},
                                                                 {"initial_prompt", "prompt"},
                                                                 {"vad_model_path", "vadModelPath"}};
  for (const auto& [f, js] : kRenamed)
    if (field == f) return js;
  if (field.empty() || field.find_first_not_of("abcdefghijklmnopqrstuvwxyz_.") != std::string::npos) return "";
  // snake_case to camelCase; vad_params.x is vadX.
  const std::string vad = "vad_params.";
  std::string src = field.compare(0, vad.size(), vad) == 0 ? "vad_" + field.substr(vad.size()) : field;
  std::string out;
  bool up = false;
  for (char c : src) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

}  // namespace hark_node
