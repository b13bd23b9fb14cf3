// Options that choose how a model is loaded, shared by the commands that load one (transcribe,
// bench, serve), so each spells and checks them the same way.
#pragma once
#include <CLI/CLI.hpp>

#include "hark/hark.hpp"

// --cross-kv-type f16|q8_0 into `type`: the names hark::parse_kv_cache_type takes, any other a
// usage error.
void add_cross_kv_option(CLI::App* cmd, hark::KvCacheType& type);
