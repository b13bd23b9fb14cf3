// The energy VAD (whisper.rn's realtime VAD) as a pure function: on real speech with pauses
// (the shared three-clip recording, espeak-ng utterances between sox silences) and on built
// signals for each option.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <numbers>
#include <string>

#include "hark/hark.hpp"
#include "vad/vad_test_util.h"

namespace hark {
namespace {

constexpr int kSr = 16000;

// seconds of a tone at amplitude a, frequency hz
std::vector<float> tone(double seconds, float a, double hz = 1000.0) {
  std::vector<float> v(static_cast<size_t>(seconds * kSr));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = a * static_cast<float>(std::sin(2.0 * std::numbers::pi * hz * static_cast<double>(i) / kSr));
  return v;
}

std::vector<float> join(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(EnergyVad, PauseAfterSpeechInRealSpeech) {
  const std::string wav = hark::testing::shared_vad_path("vad-three-clips.wav");
  if (wav.empty()) GTEST_SKIP() << "../shared/vad not found";
  const std::vector<float> s = load_audio(wav);
  auto upto = [&](double t) { return std::span<const float>(s).first(static_cast<size_t>(t * kSr)); };
  // speech runs 0.32-6.91 s, then a pause until 8.55 s: the second after 7.9 s is quiet
  EXPECT_TRUE(energy_vad(upto(7.9)).detected);
  // in the middle of the first clip the last second is as loud as the window
  EXPECT_FALSE(energy_vad(upto(5.0)).detected);
  EXPECT_FALSE(energy_vad(upto(12.0)).detected);
}

TEST(EnergyVad, NotEnoughAudioIsNoDecision) {
  const auto speech_then_quiet = join(tone(1.5, 0.5f), tone(0.5, 0.0f));  // exactly 2 s: not more
  EXPECT_FALSE(energy_vad(speech_then_quiet).detected);
  EXPECT_EQ(energy_vad(speech_then_quiet).energy_all, 0.0f);
  EXPECT_TRUE(energy_vad(join(speech_then_quiet, tone(0.1, 0.0f))).detected);
}

TEST(EnergyVad, WindowIsTheLastVadMsAndAtLeastTwoSeconds) {
  // 3 s loud, then 1.5 s quiet: a 2 s window sees 0.5 s loud + 1.5 s quiet -> paused
  const auto s = join(tone(3.0, 0.5f), tone(1.5, 0.0f));
  EXPECT_TRUE(energy_vad(s).detected);
  EnergyVadOptions o;
  o.vad_ms = 500;  // raised to 2000: the same answer
  EXPECT_EQ(energy_vad(s, o).energy_all, energy_vad(s).energy_all);
  // the last part is last_ms long: 2000 ms compares the quiet 1.5 s plus 0.5 s of tone
  o.vad_ms = 4000;
  o.last_ms = 2000;
  const auto r = energy_vad(s, o);
  // the last 2 s hold 0.5 s of tone, the 4 s window 2.5 s: (0.5 / 2) / (2.5 / 4) = 0.4
  EXPECT_NEAR(r.energy_last / r.energy_all, 0.4, 0.01);
}

TEST(EnergyVad, ThresholdComparesTheEndWithTheWhole) {
  // 1 s at amplitude 1 then 1.2 s at 0.4: the last second is 0.4 against a mean of ~0.67
  const auto s = join(tone(1.0, 1.0f), tone(1.2, 0.4f));
  EnergyVadOptions o;
  o.vad_thold = 0.7f;
  EXPECT_TRUE(energy_vad(s, o).detected);
  o.vad_thold = 0.5f;
  EXPECT_FALSE(energy_vad(s, o).detected);
  // a steady signal never ends in a pause
  EXPECT_FALSE(energy_vad(tone(3.0, 0.3f)).detected);
}

TEST(EnergyVad, HighPassIgnoresRumble) {
  // speech-band tone, then a strong 20 Hz rumble only: high-passed at 100 Hz the end is quiet
  const auto s = join(tone(1.5, 0.3f, 800.0), tone(1.0, 0.6f, 20.0));
  EXPECT_TRUE(energy_vad(s).detected);
  EnergyVadOptions o;
  o.freq_thold = 0.0f;  // unfiltered, the rumble is the loudest part
  EXPECT_FALSE(energy_vad(s, o).detected);
}

// Runs a shell command quietly; true when it exits 0.
bool sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// Real synthesized speech (espeak-ng) between silences made and joined by sox: during speech the
// VAD sees no pause, a second after each utterance it does, and a window of silence alone has
// no energy at all (no speech to end: the realtime slicer does not cut there).
TEST(EnergyVad, EspeakSpeechBetweenSoxSilences) {
  if (!sh("command -v espeak-ng")) GTEST_SKIP() << "espeak-ng is not installed (Debian: espeak-ng)";
  if (!sh("command -v sox")) GTEST_SKIP() << "sox is not installed (Debian: sox)";
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-evad-" + std::to_string(::getpid());
  ASSERT_TRUE(sh("mkdir -p '" + dir + "'"));
  const std::string s1 = dir + "/s1.wav", s2 = dir + "/s2.wav", sil = dir + "/sil.wav", all = dir + "/all.wav";
  ASSERT_TRUE(sh("espeak-ng -w '" + s1 +
                 "' 'The quick brown fox jumps over the lazy dog while the farmer watches "
                 "from the old wooden fence.'"));
  ASSERT_TRUE(sh("espeak-ng -w '" + s2 +
                 "' 'Seven silver spoons were found beneath the kitchen floor of the "
                 "abandoned house on the hill.'"));
  // 3 s of digital silence in espeak-ng's own format (22.05 kHz, 16-bit mono), then the whole file
  ASSERT_TRUE(sh("sox -n -r 22050 -c 1 -b 16 '" + sil + "' trim 0 3"));
  ASSERT_TRUE(sh("sox '" + sil + "' '" + s1 + "' '" + sil + "' '" + s2 + "' '" + sil + "' '" + all + "'"));
  const std::vector<float> a = load_audio(all);
  const std::vector<float> p1 = load_audio(s1), p2 = load_audio(s2);
  sh("rm -rf '" + dir + "'");
  const double d1 = double(p1.size()) / kSr, d2 = double(p2.size()) / kSr;
  ASSERT_NEAR(double(a.size()) / kSr, 9 + d1 + d2, 0.01);
  // Where each utterance really sounds inside espeak-ng's file (it adds quiet at both ends).
  auto sounding = [](const std::vector<float>& p, double* from, double* to) {
    size_t i = 0, j = p.size();
    while (i < j && std::fabs(p[i]) < 0.01f) ++i;
    while (j > i && std::fabs(p[j - 1]) < 0.01f) --j;
    *from = double(i) / kSr;
    *to = double(j) / kSr;
  };
  double starts[2], ends[2];
  sounding(p1, &starts[0], &ends[0]);
  sounding(p2, &starts[1], &ends[1]);
  starts[0] += 3, ends[0] += 3;
  starts[1] += 6 + d1, ends[1] += 6 + d1;
  auto upto = [&](double t) { return energy_vad(std::span<const float>(a).first(size_t(t * kSr))); };
  for (int u = 0; u < 2; ++u) {
    ASSERT_GT(ends[u] - starts[u], 3.0) << "utterance " << u << ": too short for a 2 s window inside it";
    for (double t = starts[u] + 1.0; t < ends[u] - 0.3; t += 0.25) {  // inside the utterance: no pause
      const EnergyVadResult r = upto(t);
      EXPECT_FALSE(r.detected) << "utterance " << u << " at " << t << " s";
      EXPECT_GT(r.energy_last, 1e-4f) << "utterance " << u << " at " << t << " s";  // the slicer's "sound"
    }
    for (double t = ends[u] + 1.0; t <= ends[u] + 1.5; t += 0.1)  // a second into the pause after it
      EXPECT_TRUE(upto(t).detected) << "pause after utterance " << u << " at " << t << " s";
    const EnergyVadResult quiet = upto(ends[u] + 2.9);  // the last 2 s: silence only
    EXPECT_LT(quiet.energy_all, 1e-4f) << "silence after utterance " << u;
  }
  const EnergyVadResult lead = upto(2.9);  // the silence before any speech
  EXPECT_LT(lead.energy_all, 1e-4f);
}

TEST(EnergyVad, BadOptionsAreErrors) {
  const auto s = tone(3.0, 0.1f);
  EnergyVadOptions o;
  o.last_ms = 0;
  EXPECT_THROW(energy_vad(s, o), Error);
  o = {};
  o.last_ms = 2000;  // not shorter than the window
  EXPECT_THROW(energy_vad(s, o), Error);
  o = {};
  o.freq_thold = 9000.0f;
  EXPECT_THROW(energy_vad(s, o), Error);
  o = {};
  o.vad_thold = -1.0f;
  EXPECT_THROW(energy_vad(s, o), Error);
}

}  // namespace
}  // namespace hark
