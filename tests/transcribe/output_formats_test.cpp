// Output formats (txt, srt, vtt, json, csv, lrc, console lines), ModelInfo::describe() and the public
// audio entry points, against hand-written expected text.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hark/hark.hpp"

namespace hark {
namespace {

Segment seg(int64_t t0, int64_t t1, std::string text) {
  Segment s;
  s.t0 = t0;
  s.t1 = t1;
  s.text = std::move(text);
  return s;
}

Transcript sample() {
  Transcript t;
  t.language = "en";
  t.segments.push_back(seg(0, 250, " Hello world."));
  t.segments.push_back(seg(250, 612, " And so, my fellow Americans."));
  return t;
}

TEST(OutputFormats, Timestamps) {
  EXPECT_EQ(format_timestamp(0), "00:00:00.000");
  EXPECT_EQ(format_timestamp(250), "00:00:02.500");
  EXPECT_EQ(format_timestamp(250, true), "00:00:02,500");
  EXPECT_EQ(format_timestamp(6001), "00:01:00.010");
  EXPECT_EQ(format_timestamp(359999), "00:59:59.990");
  EXPECT_EQ(format_timestamp(360000), "01:00:00.000");
  EXPECT_EQ(format_timestamp(((25 * 60 + 7) * 60 + 9) * 100 + 12), "25:07:09.120");  // past a day
  EXPECT_EQ(format_timestamp(int64_t{123} * 3600 * 100), "123:00:00.000");           // 3-digit hours
  EXPECT_EQ(format_timestamp(-5), "00:00:00.000");  // clamped: no format has negative times
  EXPECT_EQ(format_timestamp(-360000, true), "00:00:00,000");
}

TEST(OutputFormats, SegmentLine) {
  EXPECT_EQ(format_segment_line(seg(0, 250, " Hello world.")), "[00:00:00.000 --> 00:00:02.500]  Hello world.\n");
  EXPECT_EQ(format_segment_line(seg(360000, 360150, "x")), "[01:00:00.000 --> 01:00:01.500]  x\n");
}

TEST(OutputFormats, Text) {
  EXPECT_EQ(to_txt(sample()), "Hello world.\nAnd so, my fellow Americans.\n");
  EXPECT_EQ(sample().text(), "Hello world. And so, my fellow Americans.");
  EXPECT_EQ(to_txt(Transcript{}), "");
  EXPECT_EQ(Transcript{}.text(), "");
}

TEST(OutputFormats, Srt) {
  EXPECT_EQ(to_srt(sample()),
            "1\n"
            "00:00:00,000 --> 00:00:02,500\n"
            "Hello world.\n"
            "\n"
            "2\n"
            "00:00:02,500 --> 00:00:06,120\n"
            "And so, my fellow Americans.\n"
            "\n");
  EXPECT_EQ(to_srt(Transcript{}), "");
}

TEST(OutputFormats, Vtt) {
  EXPECT_EQ(to_vtt(sample()),
            "WEBVTT\n"
            "\n"
            "00:00:00.000 --> 00:00:02.500\n"
            "Hello world.\n"
            "\n"
            "00:00:02.500 --> 00:00:06.120\n"
            "And so, my fellow Americans.\n"
            "\n");
  EXPECT_EQ(to_vtt(Transcript{}), "WEBVTT\n\n");
}

TEST(OutputFormats, CuesStayWellFormed) {
  Transcript t;
  t.segments.push_back(seg(0, 100, " Fish & chips <b> --> here"));
  t.segments.push_back(seg(100, 200, "   "));  // nothing to show: no empty cue
  t.segments.push_back(seg(200, 300, " two\n\n\nlines "));
  EXPECT_EQ(to_vtt(t),
            "WEBVTT\n\n"
            "00:00:00.000 --> 00:00:01.000\nFish &amp; chips &lt;b&gt; --&gt; here\n\n"
            "00:00:02.000 --> 00:00:03.000\ntwo\nlines\n\n");
  EXPECT_EQ(to_srt(t),
            "1\n00:00:00,000 --> 00:00:01,000\nFish & chips <b> --> here\n\n"
            "2\n00:00:02,000 --> 00:00:03,000\ntwo\nlines\n\n");
  EXPECT_EQ(to_txt(t), "Fish & chips <b> --> here\ntwo\n\n\nlines\n");
}

TEST(OutputFormats, Json) {
  Transcript t = sample();
  t.segments.resize(1);
  TokenData a;
  a.id = 50364;
  a.text = "[_BEG_]";
  a.p = 0.5f;
  a.logp = -0.5f;
  TokenData b;
  b.id = 2425;
  b.text = " Hello";
  b.p = 0.25f;
  b.logp = -1.5f;
  b.t0 = 0;
  b.t1 = 40;
  t.segments[0].tokens = {a, b};
  t.segments[0].temperature = 0.5f;
  t.segments[0].avg_logprob = -0.25;
  t.segments[0].compression_ratio = 1.5;
  t.segments[0].no_speech_prob = 0.125f;
  t.segments[0].speaker_turn_next = true;
  t.language_prob = 0.75f;
  t.n_fallback_windows = 1;
  t.timings.load_ms = 10;
  t.timings.mel_ms = 2;
  t.timings.encode_ms = 100;
  t.timings.decode_ms = 50;
  t.timings.total_ms = 200;
  t.timings.n_windows = 1;
  t.timings.n_decode_tokens = 10;
  t.timings.audio_seconds = 2.5;
  EXPECT_EQ(to_json(t), R"({
  "language": "en",
  "language_prob": 0.75,
  "n_fallback_windows": 1,
  "text": "Hello world.",
  "segments": [
    {
      "start": 0.0,
      "end": 2.5,
      "t0": 0,
      "t1": 250,
      "text": " Hello world.",
      "temperature": 0.5,
      "avg_logprob": -0.25,
      "compression_ratio": 1.5,
      "no_speech_prob": 0.125,
      "speaker_turn_next": true,
      "tokens": [
        {
          "id": 50364,
          "text": "[_BEG_]",
          "p": 0.5,
          "logp": -0.5
        },
        {
          "id": 2425,
          "text": " Hello",
          "p": 0.25,
          "logp": -1.5,
          "t0": 0,
          "t1": 40
        }
      ]
    }
  ],
  "timings": {
    "load_ms": 10.0,
    "mel_ms": 2.0,
    "encode_ms": 100.0,
    "decode_ms": 50.0,
    "total_ms": 200.0,
    "n_windows": 1,
    "n_threads": 0,
    "n_decode_tokens": 10,
    "decode_ms_per_token": 5.0,
    "audio_seconds": 2.5,
    "real_time_factor": 0.08
  }
}
)");
}

TEST(OutputFormats, Csv) {
  Transcript t = sample();
  t.segments.push_back(seg(612, 100000, R"( She said "hi", then left.)"));
  EXPECT_EQ(to_csv(t),
            "start,end,text\n"
            "0,2500,\" Hello world.\"\n"
            "2500,6120,\" And so, my fellow Americans.\"\n"
            "6120,1000000,\" She said \"\"hi\"\", then left.\"\n");
  EXPECT_EQ(to_csv(Transcript{}), "start,end,text\n");
}

TEST(OutputFormats, Lrc) {
  Transcript t = sample();
  t.segments.push_back(seg(61234, 61300, " Later."));   // 10:12.34
  t.segments.push_back(seg(612345, 612400, " Much."));  // 102:03.45: minutes grow past two digits
  EXPECT_EQ(to_lrc(t),
            "[by:hark]\n"
            "[00:00.00] Hello world.\n"
            "[00:02.50] And so, my fellow Americans.\n"
            "[10:12.34] Later.\n"
            "[102:03.45] Much.\n");
  EXPECT_EQ(to_lrc(Transcript{}), "[by:hark]\n");
}

TEST(OutputFormats, JsonIsValidUtf8EvenForPartialTokens) {
  Transcript t;
  t.language = "ja";
  t.segments.push_back(seg(123, 456, "東京"));
  TokenData half;
  half.id = 1;
  half.text = "\xE6\x9D";  // the first two bytes of 東: a token may end inside a character
  t.segments[0].tokens.push_back(half);
  const std::string out = to_json(t);
  const nlohmann::json j = nlohmann::json::parse(out);  // throws on invalid UTF-8
  EXPECT_EQ(j["segments"][0]["text"], "東京");
  EXPECT_EQ(j["segments"][0]["tokens"][0]["text"], "\xEF\xBF\xBD");
  EXPECT_DOUBLE_EQ(j["segments"][0]["start"].get<double>(), 1.23);
  EXPECT_DOUBLE_EQ(j["segments"][0]["end"].get<double>(), 4.56);
  EXPECT_EQ(j["segments"][0]["t0"], 123);
  EXPECT_EQ(j["segments"][0]["t1"], 456);
  EXPECT_FALSE(j["segments"][0]["tokens"][0].contains("t0"));  // no token timestamps
}

TEST(OutputFormats, JsonCarriesWordsAndLeavesTokensToTheFullForm) {
  Transcript t;
  t.segments.push_back(seg(100, 250, " Hello, world."));
  TokenData tok;
  tok.id = 2425;
  tok.text = " Hello";
  t.segments[0].tokens = {tok};
  t.segments[0].words = {{" Hello,", 100, 150, 0.5f}, {" world.", 150, 250, 0.25f}};
  t.segments.push_back(seg(250, 300, " no words"));
  for (bool full : {true, false}) {
    const nlohmann::json j = nlohmann::json::parse(to_json(t, full));
    EXPECT_EQ(j["segments"][0].contains("tokens"), full);
    const auto& w = j["segments"][0]["words"];
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[0]["word"], " Hello,");
    EXPECT_DOUBLE_EQ(w[0]["start"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(w[0]["end"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(w[1]["probability"].get<double>(), 0.25);
    EXPECT_EQ(w[1]["t1"], 250);
    EXPECT_FALSE(j["segments"][1].contains("words"));  // a segment without words has no list
  }
  EXPECT_EQ(to_json(t), to_json(t, true));
}

TEST(ModelInfo, DescribeListsEverything) {
  ModelInfo m;
  m.path = "/models/ggml-tiny.bin";
  m.size_name = "tiny";
  m.weight_type = "f16";
  m.multilingual = true;
  m.n_vocab = 51865;
  m.n_audio_ctx = 1500;
  m.n_audio_state = 384;
  m.n_audio_head = 6;
  m.n_audio_layer = 4;
  m.n_text_ctx = 448;
  m.n_text_state = 384;
  m.n_text_head = 6;
  m.n_text_layer = 4;
  m.n_mels = 80;
  m.ftype = 1;
  m.file_bytes = 77691713;
  m.tensor_bytes = 3 * 1024 * 1024 / 2;
  m.mapped = true;
  m.load_ms = 12.34;
  EXPECT_EQ(m.describe(),
            "path            /models/ggml-tiny.bin\n"
            "model           tiny\n"
            "weight type     f16\n"
            "languages       multilingual\n"
            "n_vocab         51865\n"
            "n_audio_ctx     1500\n"
            "n_audio_state   384\n"
            "n_audio_head    6\n"
            "n_audio_layer   4\n"
            "n_text_ctx      448\n"
            "n_text_state    384\n"
            "n_text_head     6\n"
            "n_text_layer    4\n"
            "n_mels          80\n"
            "ftype           1\n"
            "file size       74.1 MiB\n"
            "weights         1.5 MiB, memory-mapped from the file\n"
            "load time       12.3 ms\n");
  m.mapped = false;
  m.multilingual = false;
  const std::string d = m.describe();
  EXPECT_NE(d.find("English only"), std::string::npos);
  EXPECT_NE(d.find("copied into memory"), std::string::npos);
}

TEST(PublicAudio, ErrorsNameTheFile) {
  const std::string missing = "/nonexistent/hark-no-such-file.wav";
  try {
    load_audio(missing);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const char junk[] = "this is not audio at all, just some text bytes";
  EXPECT_THROW(decode_audio(junk, sizeof junk), Error);
}

TEST(PublicAudio, DecodesAWavFromMemory) {
  // A 16 kHz mono 16-bit WAV of 1600 samples (0.1 s), built by hand.
  const uint32_t n = 1600, data_bytes = n * 2;
  std::vector<uint8_t> wav;
  auto put = [&](const void* p, size_t k) { wav.insert(wav.end(), (const uint8_t*)p, (const uint8_t*)p + k); };
  auto u32 = [&](uint32_t v) { put(&v, 4); };
  auto u16 = [&](uint16_t v) { put(&v, 2); };
  put("RIFF", 4);
  u32(36 + data_bytes);
  put("WAVEfmt ", 8);
  u32(16);
  u16(1);
  u16(1);
  u32(16000);
  u32(32000);
  u16(2);
  u16(16);
  put("data", 4);
  u32(data_bytes);
  for (uint32_t i = 0; i < n; ++i) u16(i % 2 ? 16384 : 0);
  const std::vector<float> pcm = decode_audio(wav.data(), wav.size());
  ASSERT_EQ(pcm.size(), n);
  EXPECT_FLOAT_EQ(pcm[1], 0.5f);
}

}  // namespace
}  // namespace hark
