// Helpers shared by the VAD tests: the real Silero model and reference clip in ../shared/vad.
#pragma once
#include <filesystem>
#include <string>

#include "model/model_test_util.h"

namespace hark::testing {

// ../shared/vad/<name>, or "" when it is not there.
inline std::string shared_vad_path(const char* name) {
  const std::string dir = shared_dir();
  if (dir.empty()) return {};
  const std::string p = dir + "/vad/" + name;
  return std::filesystem::exists(p) ? p : std::string();
}

inline std::string silero_model_path() { return shared_vad_path("silero-v6.2.0-ggml.bin"); }

}  // namespace hark::testing
