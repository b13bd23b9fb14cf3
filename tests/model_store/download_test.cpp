// download_model, find_model and the registry, against a loopback server (tests/model_store/file_server.h)
// serving a make-test-model file under an official name with a digest the test computes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "hark/hark.h"
#include "hark/hark.hpp"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "model_store/digest.h"
#include "model_store/file_lock.h"
#include "model_store/file_server.h"

namespace hark {
namespace {

namespace fs = std::filesystem;
using testing::FileServer;
using testing::TempFile;

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string sha1_of(const std::string& bytes) {
  Digest h(Digest::Kind::Sha1);
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool has(const std::string& s, const std::string& piece) { return s.find(piece) != std::string::npos; }

class Download : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TempFile f("download-model");
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = DType::F16;
    write_test_model(o, f.path());
    model_ = new std::string(read_bytes(f.path()));
  }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = fs::path(tmp && *tmp ? tmp : "/tmp") / ("hark-download-test-" + std::to_string(::getpid()) + "-" +
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    server_ = std::make_unique<FileServer>("ggml-tiny.en.bin", *model_);
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Options for the test server: its URL, the test file's digest and size, short timeouts.
  DownloadOptions options() const {
    DownloadOptions d;
    d.dir = dir_.string();
    d.base_url = server_->base_url();
    d.expected_sha1 = sha1_of(*model_);
    d.expected_size = model_->size();
    d.connect_timeout_s = 5;
    d.low_speed_time_s = 1;
    return d;
  }
  // Options for a file of an official name with no published digest, served by `s` (the test
  // file stands in for it: its own size, not the published one).
  DownloadOptions without_digest(const FileServer& s) const {
    DownloadOptions d = options();
    d.base_url = s.base_url();
    d.expected_sha1.clear();
    d.expected_size = model_->size();
    return d;
  }
  std::string final_path() const { return (dir_ / "ggml-tiny.en.bin").string(); }
  std::string part_path() const { return final_path() + ".part"; }

  static std::string* model_;
  fs::path dir_;
  std::unique_ptr<FileServer> server_;
};
std::string* Download::model_ = nullptr;

TEST(ModelRegistry, HasTheOfficialNamesWithPublishedDigests) {
  std::set<std::string> names;
  for (const ModelEntry& e : model_registry()) {
    names.insert(e.name);
    EXPECT_EQ(e.file_name, "ggml-" + e.name + ".bin");
    EXPECT_TRUE(e.sha1.empty() || e.sha1.size() == 40) << e.name;
    EXPECT_EQ(e.url.rfind("https://huggingface.co/", 0), 0u) << e.url;
  }
  for (const char* n : {"tiny", "tiny.en", "base", "base.en", "small", "small.en", "small.en-tdrz", "medium",
                        "medium.en", "large-v1", "large-v2", "large-v3", "large-v3-turbo", "tiny-q5_1", "tiny-q8_0",
                        "large-v3-q5_0", "large-v3-turbo-q5_0", "large-v3-turbo-q8_0"})
    EXPECT_TRUE(names.count(n)) << n;
  const ModelEntry* tiny = find_model_entry("tiny.en");
  ASSERT_NE(tiny, nullptr);
  EXPECT_EQ(tiny->sha1, "c78c86eb1a8faa21b369bcd33207cc90d64ae9df");
  EXPECT_EQ(tiny->url, "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-tiny.en.bin");
  EXPECT_EQ(find_model_entry("ggml-tiny.en.bin"), tiny);
  EXPECT_EQ(find_model_entry("tiny.fr"), nullptr);
}

TEST(ModelRegistry, Sha1MatchesAKnownVector) {
  EXPECT_EQ(sha1_of("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");  // FIPS 180 example
  EXPECT_EQ(sha1_of(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

TEST(ModelsDir, FollowsHarkModelsThenXdgThenHome) {
  const char* keep_hm = std::getenv("HARK_MODELS");
  const char* keep_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string hm = keep_hm ? keep_hm : "", xdg = keep_xdg ? keep_xdg : "";
  ::setenv("HARK_MODELS", "/m", 1);
  EXPECT_EQ(models_dir(), "/m");
  ::unsetenv("HARK_MODELS");
  ::setenv("XDG_CACHE_HOME", "/c", 1);
  EXPECT_EQ(models_dir(), "/c/hark/models");
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // XDG says: ignore a relative one
  EXPECT_EQ(models_dir(), std::string(std::getenv("HOME")) + "/.cache/hark/models");
  keep_hm ? (void)::setenv("HARK_MODELS", hm.c_str(), 1) : (void)::unsetenv("HARK_MODELS");
  keep_xdg ? (void)::setenv("XDG_CACHE_HOME", xdg.c_str(), 1) : (void)::unsetenv("XDG_CACHE_HOME");
}

TEST_F(Download, FetchesVerifiesAndRenames) {
  int calls = 0;
  bool verifying = false;
  DownloadOptions d = options();
  d.on_progress = [&](const DownloadProgress& p) {
    ++calls;
    verifying |= p.verifying;
    EXPECT_LE(p.bytes_done, model_->size());
  };
  const DownloadResult r = download_model("tiny.en", d);
  EXPECT_EQ(r.path, final_path());
  EXPECT_TRUE(r.downloaded);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, model_->size());
  EXPECT_EQ(r.bytes_resumed, 0u);
  EXPECT_EQ(read_bytes(final_path()), *model_);
  EXPECT_FALSE(fs::exists(part_path()));
  EXPECT_GE(calls, 1);
  EXPECT_TRUE(verifying);

  // There already: nothing fetched.
  const int before = server_->requests();
  const DownloadResult again = download_model("tiny.en", d);
  EXPECT_FALSE(again.downloaded);
  EXPECT_EQ(server_->requests(), before);

  // And the name now loads from that folder.
  EXPECT_EQ(find_model("tiny.en", dir_.string()), final_path());
  ::setenv("HARK_MODELS", dir_.c_str(), 1);
  auto ctx = Context::load("tiny.en");
  ::unsetenv("HARK_MODELS");
  EXPECT_EQ(ctx->info().path, final_path());
}

TEST_F(Download, ResumesAfterACutConnection) {
  server_->set_mode(FileServer::Mode::CutHalfOnce);
  const std::string err = error_of([&] { download_model("tiny.en", options()); });
  EXPECT_TRUE(has(err, "cut")) << err;
  EXPECT_TRUE(has(err, "resume")) << err;
  EXPECT_FALSE(fs::exists(final_path()));  // never a file that looks complete
  const uint64_t kept = fs::file_size(part_path());
  EXPECT_EQ(kept, model_->size() / 2);

  const DownloadResult r = download_model("tiny.en", options());
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes_resumed, kept);
  EXPECT_EQ(server_->range_starts().back(), kept);  // asked only for the rest
  EXPECT_EQ(read_bytes(final_path()), *model_);
}

TEST_F(Download, StartsOverWhenTheServerIgnoresRange) {
  fs::create_directories(dir_);
  std::ofstream(part_path(), std::ios::binary) << model_->substr(0, 1000);
  server_->set_mode(FileServer::Mode::IgnoreRange);
  const DownloadResult r = download_model("tiny.en", options());
  EXPECT_EQ(server_->range_starts().back(), 1000u);  // it was asked to resume ...
  EXPECT_EQ(r.bytes_resumed, 0u);                    // ... sent everything, and the .part started over
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(read_bytes(final_path()), *model_);
}

TEST_F(Download, ACorruptedByteIsADigestMismatchAndNoFile) {
  std::string bad = *model_;
  bad[bad.size() / 3] ^= 0x01;
  server_->set_body(bad);
  const std::string err = error_of([&] { download_model("tiny.en", options()); });
  EXPECT_TRUE(has(err, "SHA-1 mismatch")) << err;
  EXPECT_TRUE(has(err, sha1_of(bad))) << err;
  EXPECT_FALSE(fs::exists(final_path()));
  EXPECT_FALSE(fs::exists(part_path()));  // removed: resuming it could only fail again
}

TEST_F(Download, A404IsAnHttpError) {
  DownloadOptions d = options();
  d.base_url += "/nothing-here";
  const std::string err = error_of([&] { download_model("tiny.en", d); });
  EXPECT_TRUE(has(err, "HTTP 404")) << err;
  EXPECT_FALSE(fs::exists(final_path()));
  EXPECT_FALSE(fs::exists(part_path()));  // an error page is not written as the model
}

TEST_F(Download, AStallTimesOutAndKeepsThePart) {
  server_->set_mode(FileServer::Mode::Stall);
  DownloadOptions d = options();
  d.low_speed_bytes = 1000;  // libcurl averages over seconds: the 16 bytes sent must not count as flow
  const std::string err = error_of([&] { download_model("tiny.en", d); });
  EXPECT_TRUE(has(err, "stalled")) << err;
  EXPECT_FALSE(fs::exists(final_path()));
  EXPECT_EQ(fs::file_size(part_path()), 16u);  // what came is kept for the next attempt
}

TEST_F(Download, ARefusedConnectionSaysSo) {
  DownloadOptions d = options();
  const std::string url = server_->base_url();
  server_.reset();  // nothing listens on that port now
  d.base_url = url;
  const std::string err = error_of([&] { download_model("tiny.en", d); });
  EXPECT_TRUE(has(err, "cannot connect")) << err;
}

TEST_F(Download, AFullDiskIsAWriteError) {
  fs::create_directories(dir_);
  fs::create_symlink("/dev/full", part_path());  // every write: ENOSPC
  const std::string err = error_of([&] { download_model("tiny.en", options()); });
  EXPECT_TRUE(has(err, "No space left on device")) << err;
  EXPECT_FALSE(fs::exists(final_path()));
}

TEST_F(Download, AFileOfAnotherSizeIsRefusedBeforeAnyByteIsWritten) {
  DownloadOptions d = options();
  d.expected_size = model_->size() + 1;  // as the published size of another file would be
  const std::string err = error_of([&] { download_model("tiny.en", d); });
  EXPECT_TRUE(has(err, "the server's file has " + std::to_string(model_->size()) + " bytes")) << err;
  EXPECT_FALSE(fs::exists(final_path()));
  EXPECT_FALSE(fs::exists(part_path()));
}

TEST_F(Download, AnAbortStopsAndKeepsThePart) {
  DownloadOptions d = options();
  d.should_abort = [] { return true; };
  const std::string err = error_of([&] { download_model("tiny.en", d); });
  EXPECT_TRUE(has(err, "stopped")) << err;
  EXPECT_FALSE(fs::exists(final_path()));
}

TEST_F(Download, AnUnknownNameIsAnError) {
  EXPECT_TRUE(has(error_of([&] { download_model("tiny.fr", options()); }), "unknown model 'tiny.fr'"));
}

TEST_F(Download, WithoutADigestTheFileIsKeptButNotVerified) {
  FileServer q8("ggml-tiny-q8_0.bin", *model_);  // an official name with no published digest
  DownloadOptions d = without_digest(q8);
  const DownloadResult r = download_model("tiny-q8_0", d);
  EXPECT_TRUE(r.downloaded);
  EXPECT_FALSE(r.verified);
  EXPECT_EQ(r.sha1, sha1_of(*model_));
  EXPECT_EQ(read_bytes((dir_ / "ggml-tiny-q8_0.bin").string()), *model_);
}

std::string sha256_of(const std::string& bytes) {
  Digest h(Digest::Kind::Sha256);
  h.update(bytes.data(), bytes.size());
  return h.hex();
}

std::string quoted(const std::string& s) {
  std::string q(1, '"');
  q += s;
  q += '"';
  return q;
}

TEST(ModelRegistry, Sha256MatchesAKnownVector) {
  EXPECT_EQ(sha256_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180 example
}

TEST_F(Download, WithoutAPublishedDigestTheServersSha256IsChecked) {
  FileServer q8("ggml-tiny-q8_0.bin", *model_);                // an official name with no published SHA-1
  q8.add_header("X-Linked-Etag", quoted(sha256_of(*model_)));  // as Hugging Face sends it
  DownloadOptions d = without_digest(q8);
  const DownloadResult r = download_model("tiny-q8_0", d);
  EXPECT_TRUE(r.downloaded);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.verified_with, "server's SHA-256");
  EXPECT_EQ(r.sha256, sha256_of(*model_));
  EXPECT_FALSE(fs::exists(dir_ / "ggml-tiny-q8_0.bin.lock"));  // removed after a success
}

TEST_F(Download, AServersSha256MismatchIsAnErrorAndNoFile) {
  FileServer q8("ggml-tiny-q8_0.bin", *model_);
  q8.add_header("X-Linked-Etag", quoted(sha256_of("another file")));
  DownloadOptions d = without_digest(q8);
  const std::string err = error_of([&] { download_model("tiny-q8_0", d); });
  EXPECT_TRUE(has(err, "SHA-256 mismatch")) << err;
  EXPECT_TRUE(has(err, sha256_of("another file"))) << err;
  EXPECT_FALSE(fs::exists(dir_ / "ggml-tiny-q8_0.bin"));
  EXPECT_FALSE(fs::exists(dir_ / "ggml-tiny-q8_0.bin.part"));
  // A weak or malformed etag is no digest: the file is kept unverified, as with no header.
  FileServer weak("ggml-tiny-q8_0.bin", *model_);
  weak.add_header("X-Linked-Etag", "W/\"12ab\"");
  d.base_url = weak.base_url();
  const DownloadResult r = download_model("tiny-q8_0", d);
  EXPECT_TRUE(r.downloaded);
  EXPECT_FALSE(r.verified);
}

TEST_F(Download, ASecondDownloadOfTheSameFileWaitsAndFindsIt) {
  std::mutex mu;
  std::condition_variable cv;
  bool first_transferring = false, second_waiting = false;
  DownloadResult first, second;
  std::thread a([&] {
    DownloadOptions d = options();
    d.on_progress = [&](const DownloadProgress& p) {
      if (!p.verifying) return;  // the transfer is done, the lock still held
      std::unique_lock<std::mutex> lock(mu);
      first_transferring = true;
      cv.notify_all();
      // Hold the transfer until the second download is waiting (bounded, so a bug cannot hang).
      cv.wait_for(lock, std::chrono::seconds(20), [&] { return second_waiting; });
    };
    first = download_model("tiny.en", d);
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return first_transferring; }));
  }
  DownloadOptions d = options();
  int waits = 0;
  d.on_progress = [&](const DownloadProgress& p) {
    if (!p.waiting) return;
    ++waits;
    std::lock_guard<std::mutex> lock(mu);
    second_waiting = true;
    cv.notify_all();
  };
  second = download_model("tiny.en", d);
  a.join();
  EXPECT_EQ(waits, 1);
  EXPECT_TRUE(first.downloaded);
  EXPECT_FALSE(second.downloaded);  // found the file the first one finished
  EXPECT_EQ(second.path, final_path());
  EXPECT_EQ(server_->requests(), 1);
  EXPECT_EQ(read_bytes(final_path()), *model_);
}

TEST_F(Download, AnAbortWhileWaitingForAnotherDownloadIsAnError) {
  fs::create_directories(dir_);
  FileLock held(final_path() + ".lock", nullptr, nullptr);  // as if another process downloaded it
  DownloadOptions d = options();
  d.should_abort = [] { return true; };
  const std::string err = error_of([&] { download_model("tiny.en", d); });
  EXPECT_TRUE(has(err, "waiting for another download")) << err;
  EXPECT_EQ(server_->requests(), 0);
}

TEST(FindModel, ExplainsHowToDownloadAMissingOfficialModel) {
  const std::string err = error_of([] { find_model("base.en", "/nonexistent-models"); });
  EXPECT_TRUE(has(err, "hark download base.en")) << err;
  EXPECT_TRUE(has(err, "/nonexistent-models/ggml-base.en.bin")) << err;
  const std::string other = error_of([] { find_model("no-such-model", "/nonexistent-models"); });
  EXPECT_TRUE(has(other, "no-such-model")) << other;
  EXPECT_TRUE(has(other, "hark download --list")) << other;
  EXPECT_TRUE(has(error_of([] { find_model(""); }), "no model given"));
  // Context::load gives the same advice for a name.
  ::setenv("HARK_MODELS", "/nonexistent-models", 1);
  const std::string load_err = error_of([] { Context::load("small.en"); });
  ::unsetenv("HARK_MODELS");
  EXPECT_TRUE(has(load_err, "hark download small.en")) << load_err;
}

TEST_F(Download, CApiDownloadsAndFindsByName) {
  hark_download_params p = hark_download_default_params();
  const std::string dir = dir_.string(), url = server_->base_url(), sha1 = sha1_of(*model_);
  p.dir = dir.c_str();
  p.base_url = url.c_str();
  p.expected_sha1 = sha1.c_str();
  p.expected_size = model_->size();
  p.low_speed_time_s = 1;
  const char* path = nullptr;
  hark_download_result r;
  ASSERT_EQ(hark_download_model("tiny.en", &p, &path, &r, sizeof r), HARK_OK) << hark_last_error();
  EXPECT_EQ(std::string(path), final_path());
  EXPECT_TRUE(r.downloaded);
  EXPECT_TRUE(r.verified);
  EXPECT_EQ(r.bytes, model_->size());

  const char* found = nullptr;
  ASSERT_EQ(hark_find_model("tiny.en", dir.c_str(), &found), HARK_OK) << hark_last_error();
  EXPECT_EQ(std::string(found), final_path());
  EXPECT_EQ(hark_find_model("base.en", dir.c_str(), &found), HARK_ERR_IO);
  EXPECT_TRUE(has(hark_last_error(), "hark download base.en")) << hark_last_error();
  EXPECT_EQ(hark_download_model("tiny.fr", &p, &path, nullptr, 0), HARK_ERR_INVALID_ARGUMENT);
  p.expected_sha1 = "xyz";
  EXPECT_EQ(hark_download_model("tiny.en", &p, &path, nullptr, 0), HARK_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(hark_last_error(), "expected_sha1")) << hark_last_error();

  ASSERT_GT(hark_model_count(), 20);
  hark_model_entry e;
  ASSERT_EQ(hark_model_at(1, &e, sizeof e), HARK_OK);
  EXPECT_STREQ(e.name, "tiny.en");
  EXPECT_EQ(hark_model_at(hark_model_count(), &e, sizeof e), HARK_ERR_INVALID_ARGUMENT);

  // hark_context_load by name, with the load's progress.
  ::setenv("HARK_MODELS", dir.c_str(), 1);
  hark_context_params cp = hark_context_default_params();
  uint64_t last_done = 0, last_total = 1;
  cp.load_progress_callback = [](uint64_t done, uint64_t total, void* u) {
    auto* v = static_cast<std::pair<uint64_t*, uint64_t*>*>(u);
    *v->first = done;
    *v->second = total;
  };
  std::pair<uint64_t*, uint64_t*> sink{&last_done, &last_total};
  cp.load_progress_user_data = &sink;
  hark_context* ctx = nullptr;
  const hark_status st = hark_context_load("tiny.en", &cp, &ctx);
  ::unsetenv("HARK_MODELS");
  ASSERT_EQ(st, HARK_OK) << hark_last_error();
  EXPECT_EQ(last_done, model_->size());
  EXPECT_EQ(last_total, model_->size());
  hark_context_free(ctx);
  EXPECT_EQ(hark_context_load("base.en", nullptr, &ctx), HARK_ERR_IO);
}

TEST(LoadProgress, ReportsTheFileFromZeroToItsSize) {
  TempFile f("load-progress");
  TestModelOptions o;
  ASSERT_TRUE(test_model_preset("micro", &o.hparams));
  write_test_model(o, f.path());
  std::vector<std::pair<uint64_t, uint64_t>> steps;
  ContextParams cp;
  cp.on_load_progress = [&](uint64_t done, uint64_t total) { steps.emplace_back(done, total); };
  auto ctx = Context::load(f.path(), cp);
  ASSERT_GE(steps.size(), 2u);
  EXPECT_EQ(steps.front().first, 0u);
  EXPECT_EQ(steps.back().first, ctx->info().file_bytes);
  EXPECT_EQ(steps.back().second, ctx->info().file_bytes);
}

}  // namespace
}  // namespace hark
