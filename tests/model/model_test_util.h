// Helpers shared by the model tests: where ../shared lives, temporary files, and checking that a
// call fails with a hark::Error whose message says the right things.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "model/model_file.h"
#include "model/model_writer.h"
#include "runtime/error.h"

namespace hark::testing {

// The shared/ folder beside the repository (../shared from the source root), found from this
// file's path; HARK_SHARED_DIR overrides. Empty when it does not exist.
inline std::string shared_dir() {
  if (const char* env = std::getenv("HARK_SHARED_DIR"); env && *env) return env;
  std::filesystem::path here(__FILE__);  // <root>/tests/model/model_test_util.h
  // A relative __FILE__ ("../tests/...") is relative to the build directory, where tests run;
  // ".." must be resolved before walking up, or the walk ends inside the build directory.
  if (here.is_relative()) here = (std::filesystem::current_path() / here).lexically_normal();
  const std::filesystem::path dir = here.parent_path().parent_path().parent_path().parent_path() / "shared";
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) ? dir.string() : std::string();
}

inline std::string model_header_path(const char* name) {
  const std::string dir = shared_dir();
  if (dir.empty()) return {};
  const std::string p = dir + "/model-headers/" + name;
  return std::filesystem::exists(p) ? p : std::string();
}

// A file under the temp directory, removed when the object goes away.
class TempFile {
 public:
  explicit TempFile(const std::string& tag) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-test-" + std::to_string(::getpid()) + "-" + tag + ".bin";
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  void write(const std::vector<uint8_t>& bytes) const {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path_;
    if (!bytes.empty()) {  // fwrite(nullptr, ...) is undefined even for 0 bytes
      ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    }
    std::fclose(f);
  }

 private:
  std::string path_;
};

// The micro preset (seeded random f16 weights, the real file format) in a temporary file, mapped:
// what the runner tests that need no particular weights work on.
struct MicroModelFile {
  TempFile file;
  std::unique_ptr<ModelFile> model;
  explicit MicroModelFile(const std::string& tag) : file(tag) {
    TestModelOptions o;
    test_model_preset("micro", &o.hparams);
    write_test_model(o, file.path());
    model = ModelFile::open(file.path());
  }
};

// Runs fn, which must throw hark::Error; returns the message ("" and a failure otherwise).
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const hark::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-hark exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

// Every piece must occur in the message.
inline ::testing::AssertionResult mentions(const std::string& msg, std::initializer_list<std::string> pieces) {
  for (const std::string& p : pieces) {
    if (msg.find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << p << "\": " << msg;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace hark::testing
