#include "model_options.h"

void add_cross_kv_option(CLI::App* cmd, std::string& type) {
  cmd->add_option("--cross-kv-type", type,
                  "Cross-attention K/V cache type: f16 (the reference's results) or q8_0 (0.53x the memory and "
                  "the bytes each decode step reads per window, fastest with --batch-size; logits move by ~1e-3; "
                  "needs flash attention)")
      ->check(CLI::IsMember({"f16", "q8_0"}))
      ->capture_default_str();
}
