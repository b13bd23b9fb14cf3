#include "quantize_command.h"

#include <unistd.h>

#include <cstdio>

#include "hark/hark.hpp"

namespace {

std::string megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

}  // namespace

CLI::App* add_quantize_command(CLI::App& app, QuantizeCommandOptions& o) {
  CLI::App* q = app.add_subcommand("quantize", "Write a model with its weight matrices in another type (whisper.cpp's layout)");
  q->add_option("input", o.input, "Whisper model in ggml .bin format")->required();
  q->add_option("output", o.output, "The new model file (written whole or not at all)")->required();
  q->add_option("type", o.type, "q4_0, q4_1, q5_0, q5_1, q8_0, f16 or f32")
      ->required()
      ->check(CLI::IsMember({"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "f16", "f32"}));
  q->add_flag("-q,--quiet", o.quiet, "Print nothing but errors");
  return q;
}

int run_quantize(const QuantizeCommandOptions& o) {
  // A progress line rewritten in place on a terminal; nothing while piped.
  const bool bar = !o.quiet && isatty(STDERR_FILENO);
  int last_percent = -1;
  const hark::QuantizeResult r = hark::quantize_model(o.input, o.output, o.type, [&](uint64_t done, uint64_t total) {
    const int percent = total ? static_cast<int>(100 * done / total) : 100;
    if (!bar || percent == last_percent) return;
    last_percent = percent;
    std::fprintf(stderr, "\rquantize: %3d%%", percent);
    if (done == total) std::fprintf(stderr, "\n");
  });
  if (!o.quiet)
    std::printf("%s (%s, %s) -> %s (%s, %s): %d of %d tensors converted%s\n", o.input.c_str(), r.from_type.c_str(),
                megabytes(r.input_bytes).c_str(), o.output.c_str(), r.to_type.c_str(), megabytes(r.output_bytes).c_str(),
                r.n_converted, r.n_tensors,
                r.n_kept_f16 ? (", " + std::to_string(r.n_kept_f16) + " matrices kept f16 (rows not whole blocks)").c_str()
                             : "");
  return 0;
}
