#include "quantize_command.h"

#include <cstdio>

#include "hark/hark.hpp"
#include "progress.h"

CLI::App* add_quantize_command(CLI::App& app, QuantizeCommandOptions& o) {
  CLI::App* q =
      app.add_subcommand("quantize", "Write a model with its weight matrices in another type (whisper.cpp's layout)");
  q->add_option("INPUT", o.input, "Whisper model in ggml .bin format")->required();
  q->add_option("OUTPUT", o.output, "The new model file (written whole or not at all)")->required();
  q->add_option("TYPE", o.type, "q4_0, q4_1, q5_0, q5_1, q8_0, f16 or f32")
      ->required()
      ->check(CLI::IsMember({"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "f16", "f32"}));
  q->add_flag("-q,--quiet", o.quiet, "Print nothing but errors");
  return q;
}

int run_quantize(const QuantizeCommandOptions& o) {
  // A bar on a terminal, nothing while piped (the summary line on stdout is the result).
  ProgressLine bar(progress_mode_for_terminal(o.quiet), "quantize " + o.input);
  const hark::QuantizeResult r = hark::quantize_model(o.input, o.output, o.type, [&](uint64_t done, uint64_t total) {
    bar.update(total ? static_cast<double>(done) / static_cast<double>(total) : 1.0);
  });
  bar.finish();
  if (!o.quiet)
    std::printf("%s (%s, %s) -> %s (%s, %s): %d of %d tensors converted%s\n", o.input.c_str(), r.from_type.c_str(),
                format_bytes(r.input_bytes).c_str(), o.output.c_str(), r.to_type.c_str(),
                format_bytes(r.output_bytes).c_str(), r.n_converted, r.n_tensors,
                r.n_kept_f16
                    ? (", " + std::to_string(r.n_kept_f16) + " matrices kept f16 (rows not whole blocks)").c_str()
                    : "");
  return 0;
}
