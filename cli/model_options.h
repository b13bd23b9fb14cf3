// Options that choose how a model is loaded, shared by the commands that load one (transcribe,
// bench, serve, vad, stream), so each spells and checks them the same way.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "hark/hark.hpp"

// --cross-kv-type f16|q8_0 into `type`: the names hark::parse_kv_cache_type takes, any other a
// usage error.
void add_cross_kv_option(CLI::App* cmd, hark::KvCacheType& type);

// --vad-model (whisper.cpp's -vm) into `path`: the Silero model, a file or a name from hark
// download (the command resolves it with hark::find_model before its Whisper model loads). `use`
// ends the description: what this command does with it.
CLI::Option* add_vad_model_option(CLI::App* cmd, std::string& path, const std::string& use);
