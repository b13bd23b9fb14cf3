#include "help_format.h"

#include <algorithm>
#include <memory>
#include <sstream>

namespace hark::cli {

const std::vector<std::pair<std::string, std::string>>& whisper_cpp_flags() {
  static const std::vector<std::pair<std::string, std::string>> flags = {{"-ng", "--no-gpu"},
                                                                         {"-nfa", "--no-flash-attn"},
                                                                         {"-tp", "--temperature"},
                                                                         {"-tpi", "--temperature-inc"},
                                                                         {"-nf", "--no-fallback"},
                                                                         {"-bo", "--best-of"},
                                                                         {"-bs", "--beam-size"},
                                                                         {"-sns", "--suppress-nst"},
                                                                         {"-mc", "--max-context"},
                                                                         {"-lpt", "--logprob-thold"},
                                                                         {"-nth", "--no-speech-thold"},
                                                                         {"-mt", "--max-tokens"},
                                                                         {"-dtw", "--dtw"},
                                                                         {"-oj", "--output-json"},
                                                                         {"-ojf", "--output-json-full"},
                                                                         {"-dl", "--detect-language"},
                                                                         {"-ml", "--max-len"},
                                                                         {"-sow", "--split-on-word"},
                                                                         {"-wt", "--word-thold"},
                                                                         {"-tdrz", "--tinydiarize"},
                                                                         {"-ocsv", "--output-csv"},
                                                                         {"-olrc", "--output-lrc"},
                                                                         {"-vm", "--vad-model"},
                                                                         {"-vt", "--vad-threshold"},
                                                                         {"-vspd", "--vad-min-speech-duration-ms"},
                                                                         {"-vsd", "--vad-min-silence-duration-ms"},
                                                                         {"-vmsd", "--vad-max-speech-duration-s"},
                                                                         {"-vp", "--vad-speech-pad-ms"},
                                                                         {"-vo", "--vad-samples-overlap"},
                                                                         {"-pp", "--print-progress"}};
  return flags;
}

namespace {

// Long name -> group; the groups print in the order of this list.
const std::vector<std::pair<const char*, std::vector<const char*>>> kGroups = {
    {"Input and output",
     {"model", "output-format", "output-file", "output-json", "output-json-full", "output-csv", "output-lrc",
      "offset-ms", "duration-ms", "clip-timestamps", "no-timestamps", "quiet", "print-progress"}},
    {"Language", {"language", "detect-language", "translate", "multilingual"}},
    {"Decoding",
     {"temperature",
      "temperature-inc",
      "no-fallback",
      "temperatures",
      "best-of",
      "beam-size",
      "patience",
      "length-penalty",
      "length-penalty-power",
      "repetition-penalty",
      "no-repeat-ngram-size",
      "prompt",
      "hotwords",
      "prefix",
      "carry-initial-prompt",
      "no-context",
      "max-context",
      "prompt-reset-temperature",
      "compression-ratio-thold",
      "logprob-thold",
      "logprob-low-threshold",
      "no-speech-thold",
      "seed",
      "suppress-nst",
      "no-suppress-blank",
      "suppress-regex",
      "suppress-tokens",
      "max-initial-ts",
      "max-tokens"}},
    {"Timestamps and words",
     {"word-timestamps", "dtw", "dtw-n-top", "dtw-heads", "prepend-punctuations", "append-punctuations",
      "hallucination-silence-threshold", "token-timestamps", "max-len", "split-on-word", "word-thold", "single-segment",
      "tinydiarize"}},
    {"Voice activity (VAD) and batching",
     {"vad", "vad-model", "vad-threshold", "vad-min-speech-duration-ms", "vad-min-silence-duration-ms",
      "vad-max-speech-duration-s", "vad-speech-pad-ms", "vad-samples-overlap", "batch-size"}},
    {"Speed and threads", {"threads", "processors", "device", "no-gpu", "no-flash-attn", "cross-kv-type"}},
};

constexpr size_t kWidth = 100;  // every help line fits this
constexpr size_t kColumn = 36;  // where descriptions start

// `text` in lines of at most `width` characters, broken at spaces.
std::string wrap(const std::string& text, size_t width) {
  std::istringstream words(text);
  std::string out, line, w;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  return out + line;
}

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(kColumn); }

  std::string make_option_name(const CLI::Option* opt, bool positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, positional);
    for (const auto& [short_form, long_form] : whisper_cpp_flags())
      if (opt->check_lname(long_form.substr(2))) name = short_form + "," + name;
    return name;
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), wrap(sub->get_description(), kWidth - kColumn), kColumn);
    return out.str();
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrap(CLI::Formatter::make_option_desc(opt), kWidth - kColumn);
  }

  // CLI11's help with the option groups in kGroups' order, not in the order their first option
  // happened to be added; other groups ("Options": --help) first.
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::vector<std::string> groups = app->get_groups();
    const auto rank = [](const std::string& g) {
      for (size_t i = 0; i < kGroups.size(); ++i)
        if (g == kGroups[i].first) return static_cast<int>(i);
      return -1;
    };
    std::stable_sort(groups.begin(), groups.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    std::string out = make_description(app) + make_usage(app, name) + make_positionals(app);
    for (const std::string& g : groups) {
      const std::vector<const CLI::Option*> opts =
          app->get_options([&](const CLI::Option* o) { return o->get_group() == g && o->nonpositional(); });
      if (!g.empty() && !opts.empty()) out += make_group(g, false, opts);
    }
    return out + make_subcommands(app, mode) + "\n" + make_footer(app);
  }
};

}  // namespace

void use_help_format(CLI::App& app) { app.formatter(std::make_shared<HelpFormatter>()); }

void group_transcribe_options(CLI::App* transcribe) {
  for (const auto& [group, names] : kGroups)
    for (const char* n : names)
      for (CLI::Option* o : transcribe->get_options())
        if (o->check_lname(n)) o->group(group);
}

}  // namespace hark::cli
