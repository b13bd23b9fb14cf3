// Options that choose how a model is loaded, shared by the commands that load one (transcribe,
// bench, serve), so each spells and checks them the same way.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

// --cross-kv-type f16|q8_0 into `type` (hark::parse_kv_cache_type reads it).
void add_cross_kv_option(CLI::App* cmd, std::string& type);
