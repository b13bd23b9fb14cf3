// `hark quantize`: a model file with its weight matrices in another type.
//
//   hark quantize IN OUT TYPE      TYPE: q4_0 q4_1 q5_0 q5_1 q8_0 f16 f32
#pragma once
#include <CLI/CLI.hpp>

#include <string>

struct QuantizeCommandOptions {
  std::string input, output, type;
  bool quiet = false;
};

CLI::App* add_quantize_command(CLI::App& app, QuantizeCommandOptions& o);
// Exit code; throws hark::Error when the input cannot be converted.
int run_quantize(const QuantizeCommandOptions& o);
