// What the end-to-end benchmarks share: deterministic speech-like audio, and a seeded test model
// written to a temporary file (removed however the program ends).
#pragma once
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hark/hark.hpp"
#include "model/model_writer.h"
#include "runtime/dtype.h"

namespace bench {

// Speech-like sound: a tone gliding in pitch with a harmonic, in 2.2 s bursts with pauses, over
// quiet noise. Deterministic, so runs are comparable.
std::vector<float> synth_audio(double seconds) {
  const size_t n = static_cast<size_t>(seconds * hark::kSampleRate);
  std::vector<float> a(n);
  uint32_t rng = 12345;
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / hark::kSampleRate;
    const double gate = std::fmod(t, 3.0) < 2.2 ? 1.0 : 0.0;
    const double f = 180.0 + 60.0 * std::sin(0.7 * t);
    rng = rng * 1664525u + 1013904223u;
    const double noise = (static_cast<double>(rng >> 8) / (1 << 24) - 0.5) * 0.02;
    a[i] =
        static_cast<float>(gate * (0.3 * std::sin(2 * M_PI * f * t) + 0.1 * std::sin(2 * M_PI * 3.1 * f * t)) + noise);
  }
  return a;
}

// The temporary model goes away however the program ends (error paths included).
struct TempModel {
  std::string path;
  TempModel() = default;
  TempModel(const TempModel&) = delete;
  TempModel& operator=(const TempModel&) = delete;
  ~TempModel() {
    if (!path.empty()) std::remove(path.c_str());
  }
};

// Writes a seeded model of a preset size ("tiny", "base", ...) and weight type ("f16", "q5_0", ...)
// to a temporary file. Throws hark::Error for an unknown preset or type.
inline void write_preset_model(TempModel& temp, const std::string& preset, const std::string& type, uint64_t seed = 1) {
  hark::TestModelOptions o;
  if (!hark::test_model_preset(preset, &o.hparams)) throw hark::Error("unknown --preset '" + preset + "'");
  if (!hark::dtype_from_name(type, &o.weight_type)) throw hark::Error("unknown --type '" + type + "'");
  o.seed = seed;
  const char* tmp = std::getenv("TMPDIR");
  temp.path = std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-bench-" + std::to_string(::getpid()) + "-" + preset +
              "-" + type + ".bin";
  hark::write_test_model(o, temp.path);
}

// The model a bench runs: the file given with -m, or a preset written to `temp` (then `model`
// becomes its path). Returns the label the figures name it by ("preset:tiny" or the path).
inline std::string model_or_preset(TempModel& temp, std::string& model, const std::string& preset,
                                   const std::string& type, uint64_t seed) {
  if (preset.empty()) return model;
  write_preset_model(temp, preset, type, seed);
  model = temp.path;
  return "preset:" + preset;
}

// Parses the command line of a bench that runs the model given by -m or written from --preset
// (one of them required). Returns -1 to go on, else the exit code: 0 after --help, 2 after a
// usage error (CLI11 has printed either).
inline int parse_model_command(CLI::App& app, int argc, char** argv, const std::string& model,
                               const std::string& preset) {
  try {
    app.parse(argc, argv);
    if (model.empty() && preset.empty()) throw CLI::RequiredError("-m or --preset");
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return -1;
}

}  // namespace bench
