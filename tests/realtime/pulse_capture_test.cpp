// The real capture path: a PulseAudio daemon of the test's own with a null sink, a clip played
// into the sink, and `hark stream` recording the sink's monitor. The saved WAV must hold the clip
// (its loudness envelope correlates with the clip's) and the events must show it transcribed.
// Skipped, saying why, where hark was built without PulseAudio or the daemon cannot start.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "audio/audio.h"
#include "transcribe/micro_model.h"

namespace hark::testing {
namespace {

// Mean |x| per 10 ms: the clip and its recording are compared by these (resampling in the
// sound server changes samples, not the envelope).
std::vector<double> envelope(const std::vector<float>& a) {
  std::vector<double> e(a.size() / 160);
  for (size_t i = 0; i < e.size(); ++i) {
    double s = 0;
    for (size_t j = 0; j < 160; ++j) s += std::fabs(a[i * 160 + j]);
    e[i] = s / 160;
  }
  return e;
}

// The best normalised correlation of the clip's envelope against the recording's, over lags.
double best_correlation(const std::vector<double>& clip, const std::vector<double>& rec) {
  double best = -1;
  for (size_t lag = 0; lag + clip.size() <= rec.size(); ++lag) {
    double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
    const double n = double(clip.size());
    for (size_t i = 0; i < clip.size(); ++i) {
      const double x = clip[i], y = rec[lag + i];
      sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
    }
    const double den = std::sqrt((sxx - sx * sx / n) * (syy - sy * sy / n));
    if (den > 0) best = std::max(best, (sxy - sx * sy / n) / den);
  }
  return best;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class PulseCaptureTest : public MicroModelTest {};

TEST_F(PulseCaptureTest, StreamRecordsAndTranscribesWhatIsPlayedIntoANullSink) {
  if (!capture_supported()) GTEST_SKIP() << "hark was built without PulseAudio (libpulse-dev)";
  if (std::system("command -v pulseaudio >/dev/null && command -v paplay >/dev/null") != 0)
    GTEST_SKIP() << "pulseaudio or paplay is not installed (Debian: pulseaudio pulseaudio-utils)";
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-pulse-" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
  const std::string env = "XDG_RUNTIME_DIR='" + dir + "' HOME='" + dir + "' PULSE_RUNTIME_PATH='" + dir +
                          "/run' PULSE_SERVER='unix:" + dir + "/sock' ";
  // Its own socket, anonymous auth, no idle exit, only the modules the test needs.
  const std::string start = env +
                            "pulseaudio --daemonize=no --exit-idle-time=-1 -n --disable-shm=yes "
                            "--load='module-native-protocol-unix auth-anonymous=1 socket=" +
                            dir +
                            "/sock' "
                            "--load='module-null-sink sink_name=hark_null' >'" +
                            dir +
                            "/daemon.log' 2>&1 & "
                            "echo $! >'" +
                            dir + "/daemon.pid'";
  ASSERT_EQ(std::system(start.c_str()), 0);
  const std::string up =
      env + "sh -c 'for i in $(seq 50); do pactl info >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1'";
  const bool daemon_up = std::system(up.c_str()) == 0;
  auto stop_daemon = [&] {
    std::system(("kill $(cat '" + dir + "/daemon.pid') 2>/dev/null; sleep 0.2; rm -rf '" + dir + "'").c_str());
  };
  if (!daemon_up) {
    const std::string log = read_all(dir + "/daemon.log");
    stop_daemon();
    GTEST_SKIP() << "the PulseAudio daemon did not start: " << log;
  }

  std::vector<float> clip = speech_like_tones(2.5);
  for (float& v : clip) v = std::round(v * 32767.0f) / 32768.0f;  // as 16-bit PCM
  {
    audio::WavWriter w(dir + "/clip.wav", kSampleRate, 1);
    w.write(clip.data(), clip.size());
  }
  // hark records the sink's monitor; once its WAV exists capture is about to start, so the clip
  // is played a moment later, and hark ends itself after --max-sec.
  const std::string run = env +
                          "sh -c '\"$0\" stream -nf -m \"$1\" --capture hark_null.monitor --max-sec 4.5 "
                          "--slice-sec 5 --min-sec 0.5 --save \"$2/rec.wav\" --json >\"$2/events.txt\" "
                          "2>\"$2/stream.err\" & hp=$!; "
                          "for i in $(seq 100); do [ -f \"$2/rec.wav\" ] && break; sleep 0.05; done; sleep 0.3; "
                          "paplay --device=hark_null \"$2/clip.wav\"; wait $hp' '" HARK_CLI_PATH "' '" +
                          file_->path() + "' '" + dir + "'";
  const int rc = std::system(run.c_str());
  const std::string events = read_all(dir + "/events.txt");
  const std::string err = read_all(dir + "/stream.err");
  std::vector<float> rec;
  try {
    rec = load_audio(dir + "/rec.wav");
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  stop_daemon();
  ASSERT_EQ(rc, 0) << err;
  EXPECT_NEAR(double(rec.size()), 4.5 * kSampleRate, 1.0);
  const double corr = best_correlation(envelope(clip), envelope(rec));
  EXPECT_GT(corr, 0.9) << "the recording does not hold the clip";
  EXPECT_NE(events.find("\"isCapturing\":false"), std::string::npos) << events;
  EXPECT_NE(events.find("\"final\":true"), std::string::npos) << events;
  EXPECT_NE(events.find("\"code\":0"), std::string::npos) << events;
}

}  // namespace
}  // namespace hark::testing
