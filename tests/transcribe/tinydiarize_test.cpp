// Speaker turns end to end on a tinydiarize-style test model (make-test-model --tdrz): with
// tdrz_enable its speaker-turn token ends segments and marks them; without, the token is
// suppressed and nothing is marked; a model without the token is refused before any compute.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "frontend/mel.h"
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

  TranscribeParams p = testing::fast_params();
  p.max_tokens_per_window = 48;
  p.tdrz_enable = true;
  std::vector<Segment> live;  // what on_new_segments saw: the same segments, marks included
  p.on_new_segments = [&](const NewSegments& ns) { live.insert(live.end(), ns.segments.begin(), ns.segments.end()); };
  const Transcript on = ctx->transcribe(audio, p);
  p.on_new_segments = nullptr;
  ASSERT_EQ(live.size(), on.segments.size());
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(live[i].text, on.segments[i].text);
    EXPECT_EQ(live[i].speaker_turn_next, on.segments[i].speaker_turn_next) << i;
  }
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

// The same kind of model for a non-speech token (make-test-model --favour-token): "(" (byte 40 of
// the synthesized vocabulary) is written with suppress_nst off and never with it on, so a front
// end's default for it can be told apart.
TEST(SuppressNst, AModelThatWritesANonSpeechTokenWritesItOnlyWhenAllowed) {
  TempFile file("nst-micro");
  TestModelOptions o;
  ASSERT_TRUE(test_model_preset("micro", &o.hparams));
  o.favour_token = '(';
  o.seed = 2;
  write_test_model(o, file.path());
  const std::unique_ptr<Context> ctx = Context::load(file.path());
  const std::vector<float> audio = speech_like_tones(10.0);
  TranscribeParams p = testing::fast_params();
  p.language = "en";
  p.max_tokens_per_window = 32;
  p.suppress_nst = false;
  EXPECT_NE(ctx->transcribe(audio, p).text().find('('), std::string::npos) << "the model wrote no '('";
  p.suppress_nst = true;
  EXPECT_EQ(ctx->transcribe(audio, p).text().find('('), std::string::npos);
  o.favour_token = o.hparams.n_vocab;
  try {
    write_test_model(o, file.path());
    ADD_FAILURE() << "a token beyond the vocabulary was favoured";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--favour-token"), std::string::npos) << e.what();
  }
}

TEST(Tinydiarize, AModelWithoutTheTurnTokenIsRefusedBeforeAnyCompute) {
  // A file that stores ordinary tokens up to and past <|startoflm|>'s id: no speaker-turn token.
  HParams hp;
  ASSERT_TRUE(test_model_preset("micro.en", &hp));
  std::vector<std::string> tokens = synthetic_vocab(hp);
  while (static_cast<int32_t>(tokens.size()) <= special_tokens(hp).solm)
    tokens.push_back("tok" + std::to_string(tokens.size()));
  TempFile file("tdrz-none");
  {
    std::ofstream f(file.path(), std::ios::binary);
    ModelWriter w([&](const void* data, size_t size) {
      f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    });
    w.header(hp, frontend::slaney_mel_filters(hp.n_mels), tokens);
    for (const TensorSpec& spec : whisper_tensor_specs(hp)) {
      const DType type = default_tensor_type(spec.kind, DType::F16);
      const std::vector<uint8_t> bytes = test_tensor_bytes(spec, type, 1);
      w.tensor(spec.name, static_cast<int32_t>(type),
               std::vector<int32_t>(spec.ne.begin(), spec.ne.begin() + spec.n_dims), bytes.data(), bytes.size());
    }
  }
  const std::unique_ptr<Context> ctx = Context::load(file.path());
  TranscribeParams p = testing::fast_params();
  p.tdrz_enable = true;
  bool encoder_ran = false;
  p.on_encoder_begin = [&] { return encoder_ran = true; };
  try {
    ctx->transcribe(speech_like_tones(1.0), p);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tdrz_enable"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(encoder_ran);
}

}  // namespace
}  // namespace hark::testing
