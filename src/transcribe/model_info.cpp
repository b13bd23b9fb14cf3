// ModelInfo::describe(): what `hark info` prints about a loaded model.
#include <cstdio>
#include <string>

#include "hark/hark.hpp"

namespace hark {

namespace {

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// "label    value\n", labels padded so the values line up.
void line(std::string* out, const char* label, const std::string& value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%-16s", label);
  *out += buf;
  *out += value;
  *out += '\n';
}

}  // namespace

std::string ModelInfo::describe() const {
  std::string out;
  line(&out, "path", path);
  line(&out, "model", size_name);
  line(&out, "weight type", weight_type);
  line(&out, "languages", multilingual ? "multilingual" : "English only");
  // The hyper-parameters under the names the ggml file format gives them, in file order.
  const std::pair<const char*, int> fields[] = {{"n_vocab", n_vocab},
                                                {"n_audio_ctx", n_audio_ctx},
                                                {"n_audio_state", n_audio_state},
                                                {"n_audio_head", n_audio_head},
                                                {"n_audio_layer", n_audio_layer},
                                                {"n_text_ctx", n_text_ctx},
                                                {"n_text_state", n_text_state},
                                                {"n_text_head", n_text_head},
                                                {"n_text_layer", n_text_layer},
                                                {"n_mels", n_mels},
                                                {"ftype", ftype}};
  for (const auto& [name, value] : fields) line(&out, name, std::to_string(value));
  line(&out, "file size", mib(file_bytes));
  line(&out, "weights", mib(tensor_bytes) + (mapped ? ", memory-mapped from the file" : ", copied into memory"));
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f ms", load_ms);
  line(&out, "load time", ms);
  return out;
}

}  // namespace hark
