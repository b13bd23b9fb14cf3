// Speaker turns end to end on a tinydiarize-style test model (make-test-model --tdrz): with
// tdrz_enable its speaker-turn token ends segments and marks them; without, the token is
// suppressed and nothing is marked.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "hark/hark.hpp"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "transcribe/micro_model.h"

namespace hark::testing {
namespace {

TEST(Tinydiarize, TurnsEndSegmentsOnATdrzModel) {
  TempFile file("tdrz-micro");
  TestModelOptions o;
  ASSERT_TRUE(test_model_preset("micro.en", &o.hparams));
  o.tdrz = true;
  write_test_model(o, file.path());
  ContextParams cp;
  cp.n_threads = 2;
  const std::unique_ptr<Context> ctx = Context::load(file.path(), cp);
  const std::vector<float> audio = speech_like_tones(30.0);

  TranscribeParams p;
  p.max_tokens_per_window = 48;
  p.tdrz_enable = true;
  const Transcript on = ctx->transcribe(audio, p);
  const Transcript again = ctx->transcribe(audio, p);
  int turns = 0;
  ASSERT_EQ(on.segments.size(), again.segments.size());
  for (size_t i = 0; i < on.segments.size(); ++i) {
    turns += on.segments[i].speaker_turn_next;
    EXPECT_EQ(on.segments[i].speaker_turn_next, again.segments[i].speaker_turn_next);
    EXPECT_EQ(on.segments[i].text, again.segments[i].text);
  }
  EXPECT_GT(turns, 0) << "the tdrz test model wrote no speaker turn";
  const std::string json = to_json(on);
  EXPECT_NE(json.find("\"speaker_turn_next\": true"), std::string::npos);

  p.tdrz_enable = false;
  const Transcript off = ctx->transcribe(audio, p);
  for (const Segment& s : off.segments) EXPECT_FALSE(s.speaker_turn_next) << s.text;
}

}  // namespace
}  // namespace hark::testing
