#include <gtest/gtest.h>

#include <algorithm>

#include "model/hparams.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/vocab.h"
#include "model_test_util.h"

namespace hark {
namespace {

using testing::error_of;
using testing::mentions;

HParams preset(const char* name) {
  HParams hp;
  EXPECT_TRUE(test_model_preset(name, &hp)) << name;
  return hp;
}

TEST(ModelHParams, SpecialTokensFollowFromVocabularySize) {
  HParams hp = preset("tiny.en");  // 51864
  SpecialTokens s = special_tokens(hp);
  EXPECT_EQ(s.eot, 50256);
  EXPECT_EQ(s.sot, 50257);
  EXPECT_EQ(s.n_languages, 0);
  EXPECT_EQ(s.translate, 50357);
  EXPECT_EQ(s.transcribe, 50358);
  EXPECT_EQ(s.solm, 50359);
  EXPECT_EQ(s.prev, 50360);
  EXPECT_EQ(s.no_speech, 50361);
  EXPECT_EQ(s.no_timestamps, 50362);
  EXPECT_EQ(s.timestamp_begin, 50363);
  EXPECT_EQ(s.language_token(0), -1);

  hp = preset("tiny");  // 51865, 99 languages
  s = special_tokens(hp);
  EXPECT_EQ(s.eot, 50257);
  EXPECT_EQ(s.sot, 50258);
  EXPECT_EQ(s.n_languages, 99);
  EXPECT_EQ(s.language_token(0), 50259);  // <|en|>
  EXPECT_EQ(s.language_token(98), 50357);
  EXPECT_EQ(s.language_token(99), -1);
  EXPECT_EQ(s.translate, 50358);
  EXPECT_EQ(s.transcribe, 50359);
  EXPECT_EQ(s.solm, 50360);
  EXPECT_EQ(s.prev, 50361);
  EXPECT_EQ(s.no_speech, 50362);
  EXPECT_EQ(s.no_timestamps, 50363);
  EXPECT_EQ(s.timestamp_begin, 50364);

  hp = preset("large-v3");  // 51866, 100 languages ("yue" added)
  s = special_tokens(hp);
  EXPECT_EQ(s.eot, 50257);
  EXPECT_EQ(s.n_languages, 100);
  EXPECT_EQ(s.language_token(99), 50358);
  EXPECT_EQ(s.translate, 50359);
  EXPECT_EQ(s.transcribe, 50360);
  EXPECT_EQ(s.no_timestamps, 50364);
  EXPECT_EQ(s.timestamp_begin, 50365);

  // 1501 timestamps, 0.00 .. 30.00 s, end every vocabulary.
  for (int32_t n : {51864, 51865, 51866}) {
    hp.n_vocab = n;
    EXPECT_EQ(n - special_tokens(hp).timestamp_begin, 1501) << n;
  }
}

TEST(ModelHParams, LanguageCodes) {
  EXPECT_STREQ(language_code(0), "en");
  EXPECT_STREQ(language_code(1), "zh");
  EXPECT_STREQ(language_code(98), "su");
  EXPECT_STREQ(language_code(99), "yue");
  EXPECT_EQ(language_code(100), nullptr);
  EXPECT_EQ(language_index("de"), 2);
  EXPECT_EQ(language_index("haw"), 93);
  EXPECT_EQ(language_index("xx"), -1);
  EXPECT_STREQ(language_name(0), "english");
  EXPECT_STREQ(language_name(language_index("ht")), "haitian creole");
  EXPECT_STREQ(language_name(99), "cantonese");
  EXPECT_EQ(language_name(100), nullptr);
  EXPECT_EQ(language_name(-1), nullptr);
}

TEST(ModelHParams, SizeNames) {
  EXPECT_EQ(preset("tiny").size_name(), "tiny");
  EXPECT_EQ(preset("tiny.en").size_name(), "tiny.en");
  EXPECT_EQ(preset("base").size_name(), "base");
  EXPECT_EQ(preset("small.en").size_name(), "small.en");
  EXPECT_EQ(preset("medium").size_name(), "medium");
  EXPECT_EQ(preset("large").size_name(), "large");
  EXPECT_EQ(preset("large-v3").size_name(), "large-v3");
  EXPECT_EQ(preset("large-v3-turbo").size_name(), "large-v3-turbo");
  EXPECT_EQ(preset("micro").size_name(), "custom");
  HParams hp;
  EXPECT_FALSE(test_model_preset("large.en", &hp));
  EXPECT_FALSE(test_model_preset("huge", &hp));
}

TEST(ModelHParams, FileTypes) {
  for (DType t : {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0}) {
    HParams hp = preset("tiny");
    hp.ftype = ftype_for_weight_type(t);
    EXPECT_NO_THROW(validate_hparams(hp, "x")) << dtype_name(t);
    EXPECT_EQ(hp.weight_type(), t);
    EXPECT_EQ(hp.quant_version(), dtype_quantized(t) ? 2 : 0);
  }
  EXPECT_EQ(ftype_for_weight_type(DType::Q8_0), 2007);
  EXPECT_EQ(ftype_for_weight_type(DType::Q5_1), 2009);
  EXPECT_EQ(ftype_for_weight_type(DType::F16), 1);
}

TEST(ModelHParams, RangesAreEnforcedWithFieldAndOffset) {
  struct Case {
    int field;
    int32_t value;
    std::string says;
  };
  const Case cases[] = {
      {0, 51863, "n_vocab at offset 4"},
      {0, 60000, "51864 English-only"},
      {1, 0, "n_audio_ctx at offset 8"},
      {1, 1501, "1..1500"},
      {2, -1, "n_audio_state at offset 12"},
      {2, 1 << 30, "found 1073741824"},
      {3, 0, "n_audio_head at offset 16"},
      {3, 5, "a divisor of n_audio_state 384"},
      {4, 0, "n_audio_layer at offset 20"},
      {4, INT32_MAX, "1..128"},
      {5, 449, "n_text_ctx at offset 24"},
      {6, 0, "n_text_state at offset 28"},
      {7, 7, "n_text_head at offset 32"},
      {8, -5, "n_text_layer at offset 36"},
      {9, 100, "n_mels at offset 40: expected 80 or 128, found 100"},
      {10, -1, "ftype at offset 44"},
      {10, 4, "file type 0 (f32)"},
      {10, 5, "found 5"},
      {10, 2, "re-quantize"},
      {10, 1008, "re-quantize"},
      {10, 3007, "newer than this build"},
  };
  for (const Case& c : cases) {
    HParams hp = preset("tiny");
    hp.field(c.field) = c.value;
    const std::string msg = error_of([&] { validate_hparams(hp, "m.bin"); });
    EXPECT_TRUE(mentions(msg, {"m.bin: ", c.says})) << HParams::field_name(c.field) << "=" << c.value;
  }
}

TEST(ModelVocab, SpecialTokensAreNamedAfterFileTokens) {
  HParams hp = preset("tiny");
  Vocab v(hp);
  v.add_file_token("a");
  v.add_file_token(std::string_view("\xe5\x9c", 2));  // half a character: raw bytes are kept
  v.finish();
  EXPECT_EQ(v.size(), 51865);
  EXPECT_EQ(v.n_file_tokens(), 2);
  EXPECT_EQ(v.text(0), "a");
  EXPECT_EQ(v.text(1), std::string_view("\xe5\x9c", 2));
  EXPECT_EQ(v.text(2), "[_extra_token_2]");
  EXPECT_EQ(v.text(50257), "[_EOT_]");
  EXPECT_EQ(v.text(50258), "[_SOT_]");
  EXPECT_EQ(v.text(50259), "[_LANG_en]");
  EXPECT_EQ(v.text(50357), "[_LANG_su]");
  EXPECT_EQ(v.text(50358), "[_TRANSLATE_]");
  EXPECT_EQ(v.text(50359), "[_TRANSCRIBE_]");
  EXPECT_EQ(v.text(50360), "[_SOLM_]");
  EXPECT_EQ(v.text(50361), "[_PREV_]");
  EXPECT_EQ(v.text(50362), "[_NOSP_]");
  EXPECT_EQ(v.text(50363), "[_NOT_]");
  EXPECT_EQ(v.text(50364), "[_BEG_]");
  EXPECT_EQ(v.text(50365), "[_TT_1]");
  EXPECT_EQ(v.text(51864), "[_TT_1500]");
  EXPECT_DOUBLE_EQ(v.timestamp_seconds(51864), 30.0);
  EXPECT_DOUBLE_EQ(v.timestamp_seconds(50364), 0.0);
  EXPECT_EQ(v.timestamp_seconds(50363), -1.0);
  EXPECT_TRUE(v.is_special(50257));
  EXPECT_FALSE(v.is_special(50256));
  EXPECT_TRUE(mentions(error_of([&] { v.text(51865); }), {"token id 51865 outside"}));
  EXPECT_TRUE(mentions(error_of([&] { v.text(-1); }), {"token id -1 outside"}));
}

TEST(ModelVocab, SyntheticVocabularyHasTheRealFileSize) {
  for (const char* name : {"micro", "tiny.en", "large-v3"}) {
    const HParams hp = preset(name);
    const std::vector<std::string> tokens = synthetic_vocab(hp);
    EXPECT_EQ(tokens.size(), 50257u) << name;
    EXPECT_EQ(tokens[65], "A");
    EXPECT_EQ(tokens[256], "  ");
    EXPECT_EQ(tokens[257], " a");
    EXPECT_EQ(tokens.back(), hp.multilingual() ? tokens.back() : "<|endoftext|>");
    std::vector<std::string> sorted(tokens.begin(), tokens.end());
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "duplicate tokens in " << name;
  }
}

TEST(ModelMel, SlaneyFilterbankMatchesTheShape) {
  const frontend::MelFilters m = frontend::slaney_mel_filters(80);
  ASSERT_EQ(m.n_mels, 80);
  ASSERT_EQ(m.weights.size(), 80u * 201u);
  for (int b = 0; b < 80; ++b) {
    float peak = 0.0f;
    for (int k = 0; k < 201; ++k) {
      const float w = m.weights[static_cast<size_t>(b * 201 + k)];
      EXPECT_GE(w, 0.0f);
      peak = std::max(peak, w);
    }
    EXPECT_GT(peak, 0.0f) << "empty band " << b;
  }
  const frontend::MelFilters m128 = frontend::slaney_mel_filters(128);
  EXPECT_EQ(m128.weights.size(), 128u * 201u);
}

}  // namespace
}  // namespace hark
