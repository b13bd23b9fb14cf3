// Tokenizer and UTF-8 assembly, on the real tiny / tiny.en vocabularies (../shared/model-headers)
// and on the synthetic vocabulary test models carry.
#include "model/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/model_file.h"
#include "model/model_writer.h"
#include "model_test_util.h"

namespace hark {
namespace {

using testing::error_of;
using testing::mentions;
using testing::model_header_path;

const std::string kFffd(kReplacementChar);

#define REQUIRE_HEADER(var, name)                                                         \
  const std::string var##_path = model_header_path(name);                                 \
  if (var##_path.empty()) GTEST_SKIP() << "../shared/model-headers/" name " not found";   \
  const ModelHeader var = ModelFile::read_header(var##_path)

// ---- Utf8Assembler -------------------------------------------------------------------------------

TEST(Utf8Assembler, PassesValidTextThrough) {
  Utf8Assembler a;
  EXPECT_EQ(a.push("Grüße, 東京 🎉"), "Grüße, 東京 🎉");
  EXPECT_FALSE(a.has_pending());
  EXPECT_EQ(a.flush(), "");
}

TEST(Utf8Assembler, HoldsACharacterSplitOverPieces) {
  Utf8Assembler a;
  const std::string tokyo = "東";  // E6 9D B1
  EXPECT_EQ(a.push(tokyo.substr(0, 1)), "");
  EXPECT_TRUE(a.has_pending());
  EXPECT_EQ(a.push(tokyo.substr(1, 1)), "");
  EXPECT_EQ(a.push(tokyo.substr(2) + "x"), "東x");
  EXPECT_FALSE(a.has_pending());
  // A four-byte character cut after every byte.
  const std::string party = "🎉";
  std::string out;
  for (char c : party) out += a.push(std::string(1, c));
  EXPECT_EQ(out, party);
}

TEST(Utf8Assembler, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(sanitize_utf8("a\x80" "b"), "a" + kFffd + "b");             // lone continuation
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), kFffd + kFffd);                   // overlong lead: each byte
  EXPECT_EQ(sanitize_utf8("\xFF" "x"), kFffd + "x");                     // never valid
  EXPECT_EQ(sanitize_utf8("\xE6\x9D" "x"), kFffd + "x");                 // truncated: one U+FFFD
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);       // UTF-16 surrogate
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // past U+10FFFF
  EXPECT_EQ(sanitize_utf8("\xE6\x9D\xE4\xBA\xAC"), kFffd + "京");        // a new lead ends the old
}

TEST(Utf8Assembler, DanglingPartialBecomesReplacementOnFlush) {
  Utf8Assembler a;
  EXPECT_EQ(a.push("ok\xF0\x9F"), "ok");
  EXPECT_EQ(a.flush(), kFffd);
  EXPECT_FALSE(a.has_pending());
  EXPECT_EQ(a.push("z"), "z");  // usable again after a flush
}

TEST(Utf8Assembler, SameOutputHoweverTheInputIsCut) {
  const std::string bytes = "a\xE6\x9D\xB1\xE6\x9D" "b\xF0\x9F\x8E\x89\xC3\xFF\xC3\xBC\x80";
  const std::string whole = sanitize_utf8(bytes);
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    Utf8Assembler a;
    std::string out = a.push(bytes.substr(0, cut));
    out += a.push(bytes.substr(cut));
    out += a.flush();
    EXPECT_EQ(out, whole) << "cut at " << cut;
  }
}

// ---- the real vocabularies ------------------------------------------------------------------------

TEST(Tokenizer, EnglishIdsAreGpt2s) {
  REQUIRE_HEADER(h, "for-tests-ggml-tiny.en.bin");
  const Tokenizer tok(h.vocab);
  // The file stores plain UTF-8 with real spaces: " Hello" is id 18435 and " world" 995, GPT-2's
  // own ids for them.
  EXPECT_EQ(h.vocab.text(18435), " Hello");
  EXPECT_EQ(h.vocab.text(995), " world");
  EXPECT_EQ(tok.encode(" Hello world"), (std::vector<int32_t>{18435, 995}));
  EXPECT_EQ(tok.encode("Hello world."), (std::vector<int32_t>{15496, 995, 13}));
  EXPECT_EQ(h.vocab.text(15496), "Hello");
  EXPECT_EQ(h.vocab.text(13), ".");
  EXPECT_EQ(tok.find(" the"), 262);
  EXPECT_EQ(tok.find("<|endoftext|>"), -1);  // eot is stored but is not an ordinary token
  EXPECT_TRUE(tok.repaired_byte_tokens());
}

TEST(Tokenizer, MultilingualIds) {
  REQUIRE_HEADER(h, "for-tests-ggml-tiny.bin");
  const Tokenizer tok(h.vocab);
  EXPECT_EQ(h.vocab.text(2425), " Hello");
  EXPECT_EQ(h.vocab.text(1002), " world");
  EXPECT_EQ(tok.encode(" Hello world"), (std::vector<int32_t>{2425, 1002}));
  const std::vector<int32_t> cat = tok.encode(" the cat sat on the mat");
  EXPECT_EQ(cat, (std::vector<int32_t>{264, 3857, 3227, 322, 264, 3803}));
  EXPECT_EQ(h.vocab.text(3857), " cat");
  EXPECT_EQ(h.vocab.text(3803), " mat");
  EXPECT_TRUE(tok.repaired_byte_tokens());
}

TEST(Tokenizer, RoundTripsTextOnBothVocabularies) {
  for (const char* name : {"for-tests-ggml-tiny.bin", "for-tests-ggml-tiny.en.bin"}) {
    const std::string path = model_header_path(name);
    if (path.empty()) GTEST_SKIP() << name << " not found";
    const ModelHeader h = ModelFile::read_header(path);
    const Tokenizer tok(h.vocab);
    for (const std::string& text : std::vector<std::string>
         {" And so, my fellow Americans, ask not what your country can do for you.", "Grüße, 東京",
          " Ça va? Él está aquí — 42 €, 3.14!", "\t tabs\nand newlines  ", "🎉 emoji", kFffd + " replacement"}) {
      const std::vector<int32_t> ids = tok.encode(text);
      EXPECT_FALSE(ids.empty());
      for (int32_t id : ids) {
        EXPECT_TRUE(tok.is_text(id)) << id;
        EXPECT_LT(id, h.vocab.special().eot);
      }
      EXPECT_EQ(tok.decode(ids), text) << name;
    }
  }
}

TEST(Tokenizer, EveryByteIsEncodable) {
  for (const char* name : {"for-tests-ggml-tiny.bin", "for-tests-ggml-tiny.en.bin"}) {
    const std::string path = model_header_path(name);
    if (path.empty()) GTEST_SKIP() << name << " not found";
    const ModelHeader h = ModelFile::read_header(path);
    const Tokenizer tok(h.vocab);
    for (int b = 0; b < 256; ++b) {
      const std::string one(1, static_cast<char>(b));
      const std::vector<int32_t> ids = tok.encode(one);
      ASSERT_EQ(ids.size(), 1u) << name << " byte " << b;
      EXPECT_LT(ids[0], 256) << name << " byte " << b;
      EXPECT_EQ(tok.token_bytes(ids[0]), one) << name << " byte " << b;
    }
  }
}

TEST(Tokenizer, CharacterSplitAcrossTokens) {
  REQUIRE_HEADER(h, "for-tests-ggml-tiny.en.bin");
  const Tokenizer tok(h.vocab);
  // GPT-2's English vocabulary has no token for 東, so it is spelled in byte tokens.
  const std::vector<int32_t> ids = tok.encode("東");
  ASSERT_GE(ids.size(), 2u);
  TextDecoder dec(tok);
  std::string text;
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    EXPECT_EQ(dec.push(ids[i]), "") << "token " << i << " completes no character";
    EXPECT_TRUE(dec.has_pending());
  }
  text += dec.push(ids.back());
  EXPECT_EQ(text, "東");
  EXPECT_FALSE(dec.has_pending());
  // Cut off before the last token, the partial character becomes U+FFFD.
  TextDecoder cut(tok);
  for (size_t i = 0; i + 1 < ids.size(); ++i) EXPECT_EQ(cut.push(ids[i]), "");
  EXPECT_EQ(cut.flush(), kFffd);
  const std::vector<int32_t> head(ids.begin(), ids.end() - 1);
  EXPECT_EQ(tok.decode(head), kFffd);
}

TEST(Tokenizer, SpecialTokensAddNoText) {
  REQUIRE_HEADER(h, "for-tests-ggml-tiny.bin");
  const Tokenizer tok(h.vocab);
  const SpecialTokens& s = h.vocab.special();
  std::vector<int32_t> ids = {s.sot, s.language_token(0), s.transcribe, s.timestamp_begin};
  for (int32_t id : tok.encode(" Hello world")) ids.push_back(id);
  ids.push_back(s.timestamp_begin + 50);
  ids.push_back(s.eot);
  EXPECT_EQ(tok.decode(ids), " Hello world");
  TextDecoder dec(tok);
  std::string text;
  for (int32_t id : ids) text += dec.push(id);
  EXPECT_EQ(text + dec.flush(), " Hello world");
  EXPECT_EQ(tok.token_bytes(s.eot), "[_EOT_]");
  EXPECT_FALSE(tok.is_text(s.eot));
  // Multilingual files store an empty ordinary token just before eot: text, but no bytes.
  EXPECT_TRUE(tok.is_text(50256));
  EXPECT_EQ(tok.token_bytes(50256), "");
}

TEST(Tokenizer, LostTokensDecodeAsReplacement) {
  REQUIRE_HEADER(h, "for-tests-ggml-tiny.en.bin");
  const Tokenizer tok(h.vocab);
  // Id 447 is GPT-2's E2 80 (the start of ’ and —); the file stored it as U+FFFD, so its bytes are
  // lost. It still decodes to valid text.
  EXPECT_EQ(h.vocab.text(447), kFffd);
  const std::vector<int32_t> ids = {447, tok.find("x")};
  EXPECT_EQ(tok.decode(ids), kFffd + "x");
}

TEST(Tokenizer, BadIdsAreErrors) {
  REQUIRE_HEADER(h, "for-tests-ggml-tiny.bin");
  const Tokenizer tok(h.vocab);
  const std::vector<int32_t> bad = {2425, 51865};
  EXPECT_TRUE(mentions(error_of([&] { tok.decode(bad); }), {"51865", "outside the vocabulary"}));
  EXPECT_TRUE(mentions(error_of([&] { tok.token_bytes(-1); }), {"-1", "outside the vocabulary"}));
  TextDecoder dec(tok);
  EXPECT_TRUE(mentions(error_of([&] { dec.push(99999); }), {"99999"}));
}

// ---- synthetic and hand-made vocabularies ----------------------------------------------------------

Vocab make_vocab(const HParams& hp, const std::vector<std::string>& tokens) {
  Vocab v(hp);
  for (const std::string& t : tokens) v.add_file_token(t);
  v.finish();
  return v;
}

TEST(Tokenizer, SyntheticVocabulary) {
  HParams hp;
  ASSERT_TRUE(test_model_preset("micro", &hp));
  const Vocab v = make_vocab(hp, synthetic_vocab(hp));
  const Tokenizer tok(v);
  EXPECT_FALSE(tok.repaired_byte_tokens());  // raw bytes in natural order: nothing to repair
  // Ids 0..255 are the bytes themselves; then strings of letters and spaces.
  EXPECT_EQ(tok.encode("A"), (std::vector<int32_t>{'A'}));
  const std::vector<int32_t> ids = tok.encode("hello world");
  EXPECT_LT(ids.size(), 11u);  // longer tokens were used
  for (int32_t id : ids) EXPECT_GE(id, 256);
  EXPECT_EQ(tok.decode(ids), "hello world");
  const std::string mixed = "Grüße, 東京! \x01\xFF";
  EXPECT_EQ(tok.decode(tok.encode(mixed)), sanitize_utf8(mixed));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(tok.encode(std::string(1, static_cast<char>(b))), (std::vector<int32_t>{b}));
}

TEST(Tokenizer, GreedyLongestMatch) {
  HParams hp;
  ASSERT_TRUE(test_model_preset("micro", &hp));
  const Vocab v = make_vocab(hp, {"a", "b", "ab", "abc", "c", "bcd", "d"});
  const Tokenizer tok(v);
  EXPECT_EQ(tok.max_token_bytes(), 3u);
  // Longest first, left to right: "abc" then "d", not "ab" + "cd" or "a" + "bcd".
  EXPECT_EQ(tok.encode("abcd"), (std::vector<int32_t>{3, 6}));
  EXPECT_EQ(tok.encode("abab"), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(tok.encode(""), (std::vector<int32_t>{}));
}

TEST(Tokenizer, UnencodableByteNamesItsOffset) {
  HParams hp;
  ASSERT_TRUE(test_model_preset("micro", &hp));
  const Vocab v = make_vocab(hp, {"a", "b", " ab"});
  const Tokenizer tok(v);
  EXPECT_TRUE(mentions(error_of([&] { tok.encode(" abba!"); }), {"0x21", "offset 5"}));
  EXPECT_TRUE(mentions(error_of([&] { tok.encode("ab ac"); }), {"0x20", "offset 2"}));
}

}  // namespace
}  // namespace hark
