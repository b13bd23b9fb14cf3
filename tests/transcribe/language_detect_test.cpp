// Language detection as its own call: every language's probability from any offset, the same
// answer transcribe() reaches with language "auto", and clear errors before any compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontend/mel.h"
#include "transcribe/micro_model.h"

namespace hark::testing {
namespace {

class LanguageDetect : public MicroModelTest {};

void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST_F(LanguageDetect, GivesEveryLanguagesProbabilityAndNamesTheTopOne) {
  auto ctx = load();
  const std::vector<float> audio = speech_like_tones(8.0);
  const LanguageDetection d = ctx->detect_language(audio);
  ASSERT_FALSE(d.aborted);
  ASSERT_EQ(d.probs.size(), 99u);  // the micro model's languages: every one but Cantonese (large-v3's)
  EXPECT_NEAR(std::accumulate(d.probs.begin(), d.probs.end(), 0.0), 1.0, 1e-4);
  const auto top = std::max_element(d.probs.begin(), d.probs.end()) - d.probs.begin();
  EXPECT_EQ(d.language, language_code_at(static_cast<int>(top)));
  EXPECT_FLOAT_EQ(d.probability, d.probs[static_cast<size_t>(top)]);
  // Deterministic, and a state of one's own answers the same.
  const LanguageDetection again = ctx->new_state()->detect_language(audio);
  EXPECT_EQ(again.probs, d.probs);
}

TEST_F(LanguageDetect, AgreesWithAutoTranscriptionAtTheSameOffset) {
  auto ctx = load();
  const std::vector<float> audio = speech_like_tones(40.0);
  for (int64_t offset_ms : {0, 31000}) {
    DetectLanguageParams dp;
    dp.offset_ms = offset_ms;
    const LanguageDetection d = ctx->detect_language(audio, dp);
    TranscribeParams tp = testing::fast_params();
    tp.language = "auto";
    tp.offset_ms = offset_ms;
    tp.max_tokens_per_window = 4;  // only the language is compared
    const Transcript t = ctx->transcribe(audio, tp);
    EXPECT_EQ(t.language, d.language) << "offset " << offset_ms;
    EXPECT_FLOAT_EQ(t.language_prob, d.probability) << "offset " << offset_ms;
  }
  // From an offset it listens to the audio there: the same as the audio cut at that point.
  DetectLanguageParams at;
  at.offset_ms = 31000;
  const std::vector<float> cut(audio.begin() + 31 * kSampleRate, audio.end());
  EXPECT_EQ(ctx->detect_language(audio, at).probs, ctx->detect_language(cut).probs);
}

// A log-mel given instead of audio (faster-whisper's features=): the audio's own log-mel gives the
// audio's answer; a shorter one is padded with zeros, a longer one cut at 3000 frames.
TEST_F(LanguageDetect, ListensToAGivenLogMel) {
  auto ctx = load();
  const std::vector<float> audio = speech_like_tones(8.0);
  const frontend::LogMel mel =
      frontend::log_mel_spectrogram(audio.data(), audio.size(), frontend::slaney_mel_filters(ctx->info().n_mels), 1);
  // The content frames only, row-major [n_mels][frames], as a caller holds them.
  DetectLanguageParams dp;
  for (int m = 0; m < mel.n_mels; ++m)
    for (size_t t = 0; t < mel.n_content_frames; ++t) dp.mel.push_back(mel.at(m, t));
  const std::vector<float> none;
  const LanguageDetection d = ctx->detect_language(none, dp);
  ASSERT_FALSE(d.aborted);
  const LanguageDetection from_audio = ctx->detect_language(audio);
  ASSERT_EQ(d.probs.size(), from_audio.probs.size());
  for (size_t i = 0; i < d.probs.size(); ++i) EXPECT_NEAR(d.probs[i], from_audio.probs[i], 1e-4) << i;
  DetectLanguageParams odd;
  odd.mel.assign(static_cast<size_t>(ctx->info().n_mels) * 10 + 3, 0.0f);
  expect_error([&] { ctx->detect_language(none, odd); }, "n_mels");
  DetectLanguageParams nan;
  nan.mel.assign(static_cast<size_t>(ctx->info().n_mels) * 10, 0.0f);
  nan.mel[7] = std::nanf("");
  expect_error([&] { ctx->detect_language(none, nan); }, "mel value 7");
}

TEST_F(LanguageDetect, StopsWhenAsked) {
  auto ctx = load();
  DetectLanguageParams dp;
  dp.should_abort = [] { return true; };
  const LanguageDetection d = ctx->detect_language(speech_like_tones(5.0), dp);
  EXPECT_TRUE(d.aborted);
  EXPECT_TRUE(d.language.empty());
  EXPECT_TRUE(d.probs.empty());
}

TEST_F(LanguageDetect, BadInputIsAClearError) {
  auto ctx = load();
  const std::vector<float> audio = speech_like_tones(2.0);
  expect_error([&] { ctx->detect_language(std::vector<float>{}); }, "no audio");
  DetectLanguageParams past;
  past.offset_ms = 5000;
  expect_error([&] { ctx->detect_language(audio, past); }, "past the end");
  DetectLanguageParams threads;
  threads.n_threads = -1;
  expect_error([&] { ctx->detect_language(audio, threads); }, "n_threads");
  std::vector<float> nan = audio;
  nan[1234] = std::nanf("");
  expect_error([&] { ctx->detect_language(nan, {}); }, "samples[1234] is NaN");
}

TEST(LanguageDetectEnglishOnly, IsAClearError) {
  TempFile f("e2e-micro-en");
  TestModelOptions o;
  ASSERT_TRUE(test_model_preset("micro.en", &o.hparams));
  write_test_model(o, f.path());
  auto ctx = Context::load(f.path());
  try {
    ctx->detect_language(speech_like_tones(2.0));
    ADD_FAILURE() << "an English-only model detected a language";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("English-only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hark::testing
