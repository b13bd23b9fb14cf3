// `hark download` and the progress output of `hark transcribe`, run as a user would: the built
// binary against a loopback server (tests/model_store/file_server.h), output piped (so: no bar).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "audio/audio.h"
#include "cli/cli_test_util.h"
#include "hark/models.hpp"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "model_store/digest.h"
#include "model_store/file_server.h"

namespace hark {
namespace {

namespace fs = std::filesystem;

using testing::CliRun;
using testing::shell_quote;
const auto& slurp = testing::read_file;

bool has(const std::string& s, const std::string& piece) { return s.find(piece) != std::string::npos; }

class CliDownload : public ::testing::Test {
 protected:
  void SetUp() override {
    cli_ = testing::cli_path();
    if (cli_.empty() || !fs::exists(cli_)) GTEST_SKIP() << "the hark binary was not built";
    const char* tmp = std::getenv("TMPDIR");
    dir_ = fs::path(tmp && *tmp ? tmp : "/tmp") / ("hark-cli-download-" + std::to_string(::getpid()) + "-" +
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = DType::F16;
    write_test_model(o, (dir_ / "micro.bin").string());
    model_ = slurp(dir_ / "micro.bin");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  CliRun hark(const std::string& args, const std::string& env = "") { return testing::run_cli(args, dir_, env); }
  std::string sha1() const {
    Digest h(Digest::Kind::Sha1);
    h.update(model_.data(), model_.size());
    return h.hex();
  }
  void write_tones(const fs::path& p) {
    audio::WavWriter w(p.string(), audio::kSampleRate);
    std::vector<float> a(4 * audio::kSampleRate);
    for (size_t i = 0; i < a.size(); ++i) {
      const double t = static_cast<double>(i) / audio::kSampleRate;
      a[i] = static_cast<float>((std::fmod(t, 2.0) < 1.5 ? 0.3 : 0.0) * std::sin(2 * M_PI * (200 + 30 * t) * t));
    }
    w.write(a.data(), a.size());
    w.close();
  }

  std::string cli_;
  fs::path dir_;
  std::string model_;
};

TEST_F(CliDownload, ListNamesTheOfficialModels) {
  const CliRun r = hark("download --list --dir " + shell_quote((dir_ / "models").string()));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* n : {"tiny.en", "base", "small.en-tdrz", "large-v3-turbo", "large-v3-turbo-q8_0"})
    EXPECT_TRUE(has(r.out, std::string("\n") + n + " ")) << n << " missing in\n" << r.out;
  // Every model's size is given (a person chooses by it).
  EXPECT_FALSE(has(r.out, " ? ")) << r.out;
  EXPECT_TRUE(has(r.out, "\ntiny-q5_1                 31 MiB")) << r.out;
}

// whisper.cpp's Silero VAD files are in the registry: downloaded by name, then named to -vm.
TEST_F(CliDownload, TheSileroVadModelByName) {
  const std::string shared = testing::shared_dir();
  const std::string vad = shared + "/vad/silero-v6.2.0-ggml.bin";
  if (shared.empty() || !fs::exists(vad)) GTEST_SKIP() << "../shared/vad not found";
  const std::string bytes = slurp(vad);
  testing::FileServer server("ggml-silero-v6.2.0.bin", bytes);
  const std::string models = (dir_ / "vad-models").string();
  // The registry's published length is the real file's (../shared holds it): a download of
  // another length is refused, so a wrong figure would refuse every download.
  const hark::ModelEntry* entry = hark::find_model_entry("silero-v6.2.0");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->size, bytes.size());
  Digest h(Digest::Kind::Sha1);
  h.update(bytes.data(), bytes.size());
  const CliRun r = hark("download silero-v6.2.0 --dir " + shell_quote(models) + " --base-url " + server.base_url() +
                        " --sha1 " + h.hex());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, models + "/ggml-silero-v6.2.0.bin\n");
  EXPECT_TRUE(has(hark("download --list").out, "\nsilero-v6.2.0 "));
  write_tones(dir_ / "tones.wav");
  const CliRun v =
      hark("vad -vm silero-v6.2.0 " + shell_quote((dir_ / "tones.wav").string()), "HARK_MODELS=" + shell_quote(models));
  EXPECT_EQ(v.code, 0) << v.err;
}

TEST_F(CliDownload, DownloadsVerifiesAndPrintsThePath) {
  testing::FileServer server("ggml-tiny.en.bin", model_);
  const std::string models = (dir_ / "models").string();
  const CliRun r =
      hark("download tiny.en --dir " + shell_quote(models) + " --base-url " + server.base_url() + " --sha1 " + sha1());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, models + "/ggml-tiny.en.bin\n");
  EXPECT_TRUE(has(r.err, "verified: given SHA-1")) << r.err;
  EXPECT_FALSE(has(r.err, "progress =")) << r.err;  // piped: nothing extra (README)
  EXPECT_FALSE(has(r.err, "\r")) << r.err;
  EXPECT_EQ(slurp(models + "/ggml-tiny.en.bin"), model_);
  // -pp: plain percentage lines, no bar.
  const CliRun pp = hark("download tiny.en -pp --force --dir " + shell_quote(models) + " --base-url " +
                         server.base_url() + " --sha1 " + sha1());
  ASSERT_EQ(pp.code, 0) << pp.err;
  EXPECT_TRUE(has(pp.err, "progress = 100%")) << pp.err;
  EXPECT_FALSE(has(pp.err, "\r")) << pp.err;

  // -m takes the name now; and the model is found through $HARK_MODELS.
  write_tones(dir_ / "tones.wav");
  const CliRun t = hark("transcribe -m tiny.en -nf -q " + shell_quote((dir_ / "tones.wav").string()),
                        "HARK_MODELS=" + shell_quote(models));
  EXPECT_EQ(t.code, 0) << t.err;
}

TEST_F(CliDownload, ErrorsAreClear) {
  testing::FileServer server("ggml-tiny.en.bin", model_);
  const std::string models = (dir_ / "models").string();
  std::string bad = sha1();
  bad[0] = bad[0] == '0' ? '1' : '0';
  const CliRun mismatch =
      hark("download tiny.en --dir " + shell_quote(models) + " --base-url " + server.base_url() + " --sha1 " + bad);
  EXPECT_EQ(mismatch.code, 1);
  EXPECT_TRUE(has(mismatch.err, "hark: error: ")) << mismatch.err;
  EXPECT_TRUE(has(mismatch.err, "SHA-1 mismatch")) << mismatch.err;
  EXPECT_FALSE(fs::exists(models + "/ggml-tiny.en.bin"));

  const CliRun missing =
      hark("download tiny.en --dir " + shell_quote(models) + " --base-url " + server.base_url() + "/none");
  EXPECT_EQ(missing.code, 1);
  EXPECT_TRUE(has(missing.err, "HTTP 404")) << missing.err;
  // Nothing came, so nothing is kept, and nothing is said to be.
  const CliRun refused = hark("download tiny.en --dir " + shell_quote(models) + " --base-url http://127.0.0.1:1");
  EXPECT_EQ(refused.code, 1);
  EXPECT_TRUE(has(refused.err, "cannot connect")) << refused.err;
  EXPECT_FALSE(has(refused.err, "kept in")) << refused.err;
  EXPECT_FALSE(fs::exists(models + "/ggml-tiny.en.bin.part"));

  const CliRun unknown = hark("download tiny.fr");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(has(unknown.err, "unknown model 'tiny.fr'")) << unknown.err;
  EXPECT_EQ(hark("download").code, 2);
  EXPECT_EQ(hark("download tiny.en --sha1 abc").code, 2);
}

TEST_F(CliDownload, AMissingModelByNameSaysHowToGetIt) {
  write_tones(dir_ / "tones.wav");
  const CliRun r = hark("transcribe -m base.en " + shell_quote((dir_ / "tones.wav").string()),
                        "HARK_MODELS=" + shell_quote((dir_ / "models").string()));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.err, "hark download base.en")) << r.err;
}

TEST_F(CliDownload, TranscribeProgressOnlyWhenAsked) {
  write_tones(dir_ / "tones.wav");
  const std::string args = "transcribe -m " + shell_quote((dir_ / "micro.bin").string()) + " -nf " +
                           shell_quote((dir_ / "tones.wav").string());
  const CliRun piped = hark(args);
  ASSERT_EQ(piped.code, 0) << piped.err;
  EXPECT_FALSE(has(piped.err, "progress")) << piped.err;  // piped: nothing extra
  EXPECT_FALSE(has(piped.err, "\r")) << piped.err;

  const CliRun lines = hark(args + " --print-progress");
  ASSERT_EQ(lines.code, 0) << lines.err;
  EXPECT_TRUE(has(lines.err, "tones.wav: progress = 100%")) << lines.err;
  EXPECT_FALSE(has(lines.err, "\r")) << lines.err;
  EXPECT_EQ(lines.out, piped.out);  // the transcript is the same

  const CliRun pp = hark(args + " -pp -q");  // whisper.cpp's spelling; -q keeps the asked-for lines
  ASSERT_EQ(pp.code, 0) << pp.err;
  EXPECT_TRUE(has(pp.err, "progress = 100%")) << pp.err;
}

}  // namespace
}  // namespace hark
