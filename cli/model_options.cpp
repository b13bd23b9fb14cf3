#include "model_options.h"

#include <string>

void add_cross_kv_option(CLI::App* cmd, hark::KvCacheType& type) {
  cmd->add_option_function<std::string>(
         "--cross-kv-type", [&type](const std::string& name) { type = hark::parse_kv_cache_type(name); },
         "Cross-attention K/V cache type: f16 (the reference's results) or q8_0 (0.53x the memory and the bytes "
         "each decode step reads per window, fastest with --batch-size; logits move by ~1e-3; needs flash "
         "attention)")
      ->check([](const std::string& name) -> std::string {
        try {
          hark::parse_kv_cache_type(name);
          return {};
        } catch (const hark::Error& e) {
          return e.what();
        }
      })
      ->default_str(hark::kv_cache_type_name(type));
}

CLI::Option* add_vad_model_option(CLI::App* cmd, std::string& path, const std::string& use) {
  return cmd->add_option(
      "--vad-model", path,
      "Silero VAD model in whisper.cpp's format, a file or silero-v6.2.0 after hark download: " + use);
}
