// `hark COMMAND --help` that reads: options in groups (input and output, language, decoding, ...),
// whisper.cpp's multi-letter short flags shown beside the options they stand for (-nf, -bs, ...;
// main.cpp renames them before parsing, as CLI11 takes one letter after a dash), and descriptions
// wrapped so every line fits 100 columns.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

namespace hark::cli {

// whisper.cpp's spelling -> hark's long option ("-nf" -> "--no-fallback").
const std::vector<std::pair<std::string, std::string>>& whisper_cpp_flags();

// Sets the formatter on `app` (its subcommands inherit it).
void use_help_format(CLI::App& app);

// Puts `transcribe`'s options in their groups, in reading order.
void group_transcribe_options(CLI::App* transcribe);

}  // namespace hark::cli
