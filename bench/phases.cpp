// bench_phases: runs a model's passes a given number of times and times nothing, so that a counter
// outside the process (QEMU's instruction-count plugin, bench/qemu_insn_count.cpp; valgrind
// --tool=callgrind; perf stat) can count what one pass costs: the difference between a run with
// N + 1 passes and one with N, whatever the start-up costs.
//
//   bench_phases --preset tiny [--type f16] [-t 1] [--encode N] [--decode N]
//   bench_phases -m MODEL ...
//
// --encode N: N 30 s encoder windows (a silent one, as hark bench). --decode N: N single-token
// steps at n_past 0, 1, ..., after the windows; with no window before them the steps read a
// cross K/V cache nothing wrote (zeros: the work does not depend on the values), so a step's count
// needs no encoder run. Prints what it ran, nothing measured.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backend/device_registry.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/whisper_runner.h"
#include "runtime/dtype.h"
#include "runtime/error.h"

using namespace hark;

int main(int argc, char** argv) {
  CLI::App app{"Runs encoder windows and decoder steps for an outside instruction counter"};
  std::string model, preset, type = "f16";
  int threads = 1, n_encode = 0, n_decode = 0;
  app.add_option("-m,--model", model, "Whisper model (ggml .bin)");
  app.add_option("--preset", preset, "A seeded test model of this size instead (micro, tiny, base, ...)");
  app.add_option("--type", type, "Weight type of the --preset model")->capture_default_str();
  app.add_option("-t,--threads", threads, "Compute threads")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--encode", n_encode, "Encoder windows")->check(CLI::Range(0, 1000));
  app.add_option("--decode", n_decode, "Single-token decoder steps (after the windows)")->check(CLI::Range(0, 448));
  CLI11_PARSE(app, argc, argv);
  if (model.empty() == preset.empty()) {
    std::fprintf(stderr, "bench_phases: give -m MODEL or --preset NAME\n");
    return 2;
  }
  try {
    std::string path = model;
    if (!preset.empty()) {
      TestModelOptions o;
      if (!test_model_preset(preset, &o.hparams)) throw Error("--preset: no preset named '" + preset + "'");
      if (!dtype_from_name(type, &o.weight_type)) throw Error("--type: no weight type named '" + type + "'");
      const char* tmp = std::getenv("TMPDIR");
      path = std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-phases-" + preset + "-" + type + ".bin";
      write_test_model(o, path);
    }
    const std::unique_ptr<ModelFile> file = ModelFile::open(path);
    if (!preset.empty()) std::remove(path.c_str());
    const std::unique_ptr<Backend> backend = Registry::global().find(kCpuDeviceName)->init_backend({threads});
    WhisperRunner runner(*file, *backend);
    const HParams& hp = file->hparams();
    const std::vector<float> mel(static_cast<size_t>(2 * hp.n_audio_ctx) * static_cast<size_t>(hp.n_mels), -1.5f);
    for (int i = 0; i < n_encode; ++i)
      if (runner.encode(mel) != ComputeStatus::Ok) throw Error("the encoder pass was aborted");
    std::vector<float> logits;
    for (int i = 0; i < n_decode; ++i) {
      const int32_t id = i % hp.n_vocab;
      if (runner.decode(std::span(&id, 1), i, &logits) != ComputeStatus::Ok) throw Error("a decoder step was aborted");
    }
    std::printf("bench_phases: %d encoder window(s), %d decoder step(s), %d thread(s)\n", n_encode, n_decode, threads);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_phases: %s\n", e.what());
    return 1;
  }
  return 0;
}
