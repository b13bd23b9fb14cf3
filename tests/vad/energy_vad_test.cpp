// The energy VAD (whisper.rn's realtime VAD) as a pure function: on real speech with pauses
// (the shared three-clip recording) and on built signals for each option.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

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
