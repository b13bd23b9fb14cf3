// make-test-model: writes a Whisper model with seeded random weights in the real ggml .bin
// format, at any size and weight type. Tests use it, and it lets a user check a build end to end
// without downloading a model.
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "model/model_writer.h"
#include "runtime/error.h"

namespace {

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: make-test-model -o PATH [--preset NAME] [--type TYPE] [--seed N]\n"
               "                       [--vocab-from MODEL] [--tdrz] [--favour-token ID] [--n-audio-layer N ...]\n"
               "  --preset      micro (2 layers, width 64), tiny, base, small, medium, large,\n"
               "                large-v3, large-v3-turbo; append .en for English-only (default micro)\n"
               "  --type        f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0 (default f16)\n"
               "  --seed        weights are a function of the seed and the tensor name (default 1)\n"
               "  --vocab-from  take the vocabulary (and mel filters, when n_mels match) from this\n"
               "                model or header file instead of synthesizing them\n"
               "  --tdrz        a tinydiarize-style model: weights that write the speaker-turn\n"
               "                token (<|startoflm|>), for hark transcribe --tinydiarize\n"
               "  --favour-token weights that write this token id now and then (e.g. 40, \"(\" in\n"
               "                the synthesized vocabulary: a non-speech token, for --suppress-nst)\n"
               "  overrides:    --n-vocab --n-audio-ctx --n-audio-state --n-audio-head\n"
               "                --n-audio-layer --n-text-ctx --n-text-state --n-text-head\n"
               "                --n-text-layer --n-mels\n");
}

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "make-test-model: %s\n", msg.c_str());
  std::exit(2);
}

int32_t parse_int(const std::string& flag, const char* s) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
    die(flag + ": expected an integer, got '" + s + "'");
  return static_cast<int32_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "micro", type_name = "f16", out, vocab_from;
  uint64_t seed = 1;
  struct Override {
    int field;
    int32_t value;
  };
  std::vector<Override> overrides;
  bool tdrz = false;
  int32_t favour_token = -1;

  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    }
    if (a == "--tdrz") {  // the one option without a value
      tdrz = true;
      continue;
    }
    if (i + 1 >= argc) die(a + " needs a value (see --help)");
    const char* v = argv[++i];
    if (a == "--preset")
      preset = v;
    else if (a == "--type")
      type_name = v;
    else if (a == "--seed") {
      char* end = nullptr;
      seed = std::strtoull(v, &end, 10);
      if (end == v || *end != '\0') die("--seed: expected a non-negative integer, got '" + std::string(v) + "'");
    } else if (a == "-o" || a == "--output")
      out = v;
    else if (a == "--vocab-from")
      vocab_from = v;
    else if (a == "--favour-token")
      favour_token = parse_int(a, v);
    else {
      int field = -1;
      for (int f = 0; f < hark::HParams::kCount; ++f) {
        std::string flag = std::string("--") + hark::HParams::field_name(f);
        for (char& c : flag) c = c == '_' ? '-' : c;
        if (a == flag && flag != "--ftype") field = f;
      }
      if (field < 0) {
        usage(stderr);
        die("unknown option " + a);
      }
      overrides.push_back({field, parse_int(a, v)});
    }
  }
  if (out.empty()) {
    usage(stderr);
    die("no output file given (-o PATH)");
  }

  hark::TestModelOptions opt;
  if (!hark::test_model_preset(preset, &opt.hparams)) die("unknown preset '" + preset + "' (see --help)");
  if (!hark::dtype_from_name(type_name, &opt.weight_type) || opt.weight_type == hark::DType::I32)
    die("unknown weight type '" + type_name + "' (f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0)");
  for (const Override& o : overrides) opt.hparams.field(o.field) = o.value;
  opt.seed = seed;
  opt.vocab_from = vocab_from;
  opt.tdrz = tdrz;
  opt.favour_token = favour_token;

  const auto t0 = std::chrono::steady_clock::now();
  try {
    hark::write_test_model(opt, out);
  } catch (const hark::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());  // the library's messages already name make-test-model
    return 1;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::FILE* f = std::fopen(out.c_str(), "rb");
  long long bytes = -1;
  if (f) {
    std::fseek(f, 0, SEEK_END);
    bytes = std::ftell(f);
    std::fclose(f);
  }
  std::printf("%s: %s %s seed %llu, %lld bytes in %.0f ms\n", out.c_str(), preset.c_str(), type_name.c_str(),
              static_cast<unsigned long long>(seed), bytes, ms);
  // Read it back through the loader: what was written is a model hark accepts.
  try {
    std::printf("%s", hark::ModelFile::open(out)->describe().c_str());
  } catch (const hark::Error& e) {
    std::fprintf(stderr, "make-test-model: the written file does not load: %s\n", e.what());
    return 1;
  }
  return 0;
}
