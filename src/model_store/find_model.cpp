// The models folder and model-by-name lookup: what lets every front end take "-m tiny.en".
#include <cstdlib>
#include <filesystem>
#include <string>

#include "hark/models.hpp"

namespace hark {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool is_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::exists(p, ec);
}

}  // namespace

std::string models_dir() {
  if (const std::string d = env("HARK_MODELS"); !d.empty()) return d;
  // XDG: a relative $XDG_CACHE_HOME is invalid and must be ignored.
  if (const std::string c = env("XDG_CACHE_HOME"); !c.empty() && c[0] == '/') return c + "/hark/models";
  if (const std::string h = env("HOME"); !h.empty()) return h + "/.cache/hark/models";
  return ".cache/hark/models";  // no HOME at all (a bare service): relative to the working folder
}

std::string find_model(const std::string& name_or_path, const std::string& dir_in) {
  if (name_or_path.empty())
    throw Error("no model given: pass a model file or an official model name (hark download --list names them)");
  if (is_file(name_or_path)) return name_or_path;
  const std::string dir = dir_in.empty() ? models_dir() : dir_in;
  const ModelEntry* e = find_model_entry(name_or_path);
  if (name_or_path.find('/') == std::string::npos) {
    // A name: the official file name for official names, else ggml-NAME.bin (a file the user
    // made, e.g. quantized), else the name as a file name in the folder.
    const std::string candidates[] = {e ? e->file_name : "ggml-" + name_or_path + ".bin", name_or_path};
    for (const std::string& c : candidates)
      if (is_file(dir + "/" + c)) return dir + "/" + c;
  }
  if (e)
    throw Error(ErrorCode::NotFound,
                "model " + e->name + " is not downloaded (no " + dir + "/" + e->file_name +
                    "); get it with: hark download " + e->name,
                name_or_path);
  throw Error(
      ErrorCode::NotFound,
      name_or_path + ": no such model file, and not a model in " + dir + " (official names: hark download --list)",
      name_or_path);
}

}  // namespace hark
