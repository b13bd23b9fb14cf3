// `hark stream` as a user runs it: raw PCM on stdin with --json gives one event per line, ending
// with isCapturing false and the whole recording; a bad capture device is a clear error.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "transcribe/micro_model.h"

namespace hark::testing {
namespace {

class StreamCliTest : public MicroModelTest {};

std::string run_capture(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  *rc = ::pclose(p);
  return out;
}

TEST_F(StreamCliTest, StdinPcmWithJsonPrintsOneEventPerLine) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string raw =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-stream-" + std::to_string(::getpid()) + ".raw";
  {
    const std::vector<float> audio = speech_like_tones(1.5);
    std::ofstream f(raw, std::ios::binary);
    for (float v : audio) {
      const int16_t s = int16_t(v * 32767.0f);
      const char b[2] = {char(s & 0xff), char((s >> 8) & 0xff)};
      f.write(b, 2);
    }
  }
  int rc = -1;
  const std::string out =
      run_capture(std::string("'") + HARK_CLI_PATH + "' stream -nf -m '" + file_->path() +
                      "' --capture - --slice-sec 1 --min-sec 0.5 --partial-sec 0 --json < '" + raw + "'",
                  &rc);
  std::remove(raw.c_str());
  ASSERT_EQ(rc, 0) << out;
  std::istringstream lines(out);
  std::string line, last;
  int n = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(line.front(), '{') << line;
    EXPECT_EQ(line.back(), '}') << line;
    last = line;
    ++n;
  }
  EXPECT_EQ(n, 3);  // two finals (1 s, 0.5 s) and the closing event
  EXPECT_NE(last.find("\"isCapturing\":false"), std::string::npos) << last;
  EXPECT_NE(last.find("\"recordingTime\":1500"), std::string::npos) << last;
  EXPECT_NE(last.find("\"isStoppedByAction\":false"), std::string::npos) << last;
}

// --pcm-rate/--pcm-channels: 1.5 s of 8 kHz stereo on stdin is 1.5 s of recording.
TEST_F(StreamCliTest, StdinPcmAtAnotherRateAndChannelCount) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string raw =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-stream8k-" + std::to_string(::getpid()) + ".raw";
  {
    std::ofstream f(raw, std::ios::binary);
    for (int i = 0; i < 12000; ++i) {
      const int16_t s = int16_t(8000 * std::sin(2 * M_PI * 200.0 * i / 8000.0));
      const char b[4] = {char(s & 0xff), char((s >> 8) & 0xff), char(s & 0xff), char((s >> 8) & 0xff)};
      f.write(b, 4);
    }
  }
  int rc = -1;
  const std::string cmd = std::string("'") + HARK_CLI_PATH + "' stream -nf -m '" + file_->path() +
                          "' --capture - --pcm-rate 8000 --pcm-channels 2 --slice-sec 1 --min-sec 0.5 "
                          "--partial-sec 0 --json < '" +
                          raw + "'";
  const std::string out = run_capture(cmd, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"recordingTime\":1500"), std::string::npos) << out;
  const std::string bad = run_capture(
      std::string("'") + HARK_CLI_PATH + "' stream -m x --capture - --pcm-rate 5 < '" + raw + "' 2>&1", &rc);
  std::remove(raw.c_str());
  EXPECT_NE(rc, 0);
  EXPECT_NE(bad.find("pcm-rate"), std::string::npos) << bad;
}

TEST_F(StreamCliTest, NoSuchCaptureDeviceIsAClearError) {
  int rc = -1;
  const std::string out = run_capture("PULSE_SERVER=unix:/nonexistent/hark '" + std::string(HARK_CLI_PATH) +
                                          "' stream -nf -m '" + file_->path() + "' --capture nosuch 2>&1",
                                      &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("no capture device"), std::string::npos) << out;
}

}  // namespace
}  // namespace hark::testing
