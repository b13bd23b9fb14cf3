// The fixture the end-to-end transcription tests share: one micro test model (random f16 weights,
// the real file format) written once per suite, loaded with a chosen thread count.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hark/hark.hpp"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "transcribe/test_params.h"

namespace hark::testing {

// Speech-like test audio: a tone gliding in pitch around base_hz with a harmonic, in 2.2 s bursts
// with 0.8 s pauses; deterministic.
inline std::vector<float> speech_like_tones(double seconds, double base_hz = 180.0) {
  const size_t n = static_cast<size_t>(seconds * kSampleRate);
  std::vector<float> a(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / kSampleRate;
    const double gate = std::fmod(t, 3.0) < 2.2 ? 1.0 : 0.0;
    const double f = base_hz + 60.0 * std::sin(0.7 * t);
    a[i] = static_cast<float>(gate * (0.3 * std::sin(2 * M_PI * f * t) + 0.1 * std::sin(2 * M_PI * 3.1 * f * t)));
  }
  return a;
}

// A transcription these params must refuse before any compute: a hark::Error whose message
// holds `word` (the setting it is about), and no encoder window run.
inline void expect_refused_before_compute(Context& ctx, std::span<const float> audio, TranscribeParams p,
                                          const std::string& word) {
  bool encoder_ran = false;
  p.on_encoder_begin = [&] {
    encoder_ran = true;
    return true;
  };
  try {
    ctx.transcribe(audio, p);
    ADD_FAILURE() << word << ": no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
  EXPECT_FALSE(encoder_ran) << word;
}

class MicroModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    file_ = new TempFile("e2e-micro");
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = DType::F16;
    write_test_model(o, file_->path());
  }
  static void TearDownTestSuite() {
    delete file_;
    file_ = nullptr;
  }
  static std::unique_ptr<Context> load(int threads = 2) {
    ContextParams cp;
    cp.n_threads = threads;
    return Context::load(file_->path(), cp);
  }
  static inline TempFile* file_ = nullptr;
};

}  // namespace hark::testing
