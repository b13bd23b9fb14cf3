// Every decoding option end to end on the micro model (random weights: the text is nonsense, but
// each option must run, give the same text twice, keep the text valid UTF-8 and the timestamps in
// order, and do what it says where that is visible in the output).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "hark/hark.hpp"
#include "transcribe/micro_model.h"

namespace hark {
namespace {

std::vector<float> tones(double seconds) {
  const size_t n = static_cast<size_t>(seconds * kSampleRate);
  std::vector<float> a(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / kSampleRate;
    const double gate = std::fmod(t, 3.0) < 2.2 ? 1.0 : 0.0;
    const double f = 200.0 + 50.0 * std::sin(0.9 * t);
    a[i] = static_cast<float>(gate * 0.3 * std::sin(2 * M_PI * f * t));
  }
  return a;
}

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

std::string dump(const Transcript& t) {
  std::string s = t.language + "\n";
  for (const Segment& g : t.segments) s += std::to_string(g.t0) + "-" + std::to_string(g.t1) + ":" + g.text + "\n";
  return s;
}

class DecodingOptions : public testing::MicroModelTest {
 protected:
  // Runs twice; checks what every option must keep; returns the transcript.
  Transcript run_twice(const std::function<void(TranscribeParams&)>& set, double seconds = 4.0) {
    static std::unique_ptr<Context> ctx;
    if (!ctx) ctx = load(2);
    TranscribeParams p = testing::fast_params();
    p.max_tokens_per_window = 24;  // keeps the random model's windows short
    set(p);
    const std::vector<float> a = tones(seconds);
    const Transcript t1 = ctx->transcribe(a, p);
    const Transcript t2 = ctx->transcribe(a, p);
    EXPECT_EQ(dump(t1), dump(t2)) << "not deterministic";
    int64_t prev = 0;
    for (const Segment& s : t1.segments) {
      EXPECT_TRUE(valid_utf8(s.text)) << s.text;
      EXPECT_LE(s.t0, s.t1);
      EXPECT_GE(s.t0, prev);
      EXPECT_LE(s.t1, static_cast<int64_t>(seconds * 100));
      prev = s.t0;
      EXPECT_GE(s.temperature, p.temperature);
      EXPECT_LE(s.temperature, 1.0f + 1e-6f);
      EXPECT_LE(s.avg_logprob, 0.0);
      EXPECT_GE(s.no_speech_prob, 0.0f);
      EXPECT_LE(s.no_speech_prob, 1.0f);
      for (const TokenData& tok : s.tokens) EXPECT_NEAR(tok.logp, std::log(tok.p), 1e-3);
    }
    EXPECT_FALSE(t1.aborted);
    return t1;
  }
};

TEST_F(DecodingOptions, GreedyDefaults) {
  const Transcript t = run_twice([](TranscribeParams&) {});
  for (const Segment& s : t.segments) EXPECT_EQ(s.temperature, 0.0f);
  EXPECT_EQ(t.n_fallback_windows, 0);
}

TEST_F(DecodingOptions, BeamSearchAndBatchedBestOf) {
  const double seconds = 2.0;
  const Transcript greedy = run_twice([](TranscribeParams&) {}, seconds);
  const Transcript beam = run_twice(
      [](TranscribeParams& p) {
        p.beam_size = 5;
        p.patience = 1.5f;
      },
      seconds);
  for (const Segment& s : beam.segments) EXPECT_EQ(s.temperature, 0.0f);
  EXPECT_GT(beam.timings.n_decode_tokens, greedy.timings.n_decode_tokens);  // every beam's tokens
  EXPECT_LT(beam.timings.n_decode_steps, beam.timings.n_decode_tokens);     // one step for all beams
  // best-of 5 at T > 0: five candidates a step. beam_size is a T = 0 option (as OpenAI's): at
  // T > 0 best-of runs alone, so it changes nothing there.
  auto sampled = [](int beams) {
    return [beams](TranscribeParams& p) {
      p.temperature = 0.6f;
      p.best_of = 5;
      p.seed = 3;
      p.beam_size = beams;
    };
  };
  EXPECT_EQ(dump(run_twice(sampled(1), seconds)), dump(run_twice(sampled(5), seconds)));
}

TEST_F(DecodingOptions, SampledBestOfWithSeed) {
  const Transcript a = run_twice([](TranscribeParams& p) {
    p.temperature = 0.7f;
    p.best_of = 3;
    p.seed = 11;
  });
  for (const Segment& s : a.segments) EXPECT_FLOAT_EQ(s.temperature, 0.7f);
  run_twice([](TranscribeParams& p) {
    p.temperature = 0.7f;
    p.best_of = 2;
    p.length_penalty = 0.6f;
  });
}

TEST_F(DecodingOptions, TemperatureFallback) {
  // A random model is unsure everywhere: the window falls back to 1.0.
  const Transcript t = run_twice([](TranscribeParams& p) {
    p.temperature_inc = 0.5f;
    p.best_of = 2;
  });
  EXPECT_EQ(t.n_fallback_windows, static_cast<int>(t.windows.size()));
  for (const Segment& s : t.segments) EXPECT_FLOAT_EQ(s.temperature, 1.0f);
}

// The public callback: each retry of each window, on the audio's timeline (offset included), at
// the next temperature; the count matches the transcript's windows and temperatures.
TEST_F(DecodingOptions, EachFallbackIsToldWithItsWindowAndTemperature) {
  std::unique_ptr<Context> ctx = load(2);
  TranscribeParams p = testing::fast_params();
  p.max_tokens_per_window = 24;
  p.temperature_inc = 0.5f;  // 0, 0.5, 1.0
  p.best_of = 2;
  p.offset_ms = 500;
  std::vector<Fallback> told;
  p.on_fallback = [&](const Fallback& f) { told.push_back(f); };
  const std::vector<float> a = tones(4.0);
  const Transcript t = ctx->transcribe(a, p);
  ASSERT_GT(t.n_fallback_windows, 0) << "the random model is unsure everywhere";
  // Every window fails at 0 and 0.5 (its segments say 1.0 was kept): two retries each.
  ASSERT_EQ(told.size(), 2 * t.windows.size());
  for (size_t k = 0; k < told.size(); ++k) {
    const Window& w = t.windows[k / 2];
    EXPECT_EQ(told[k].t0, w.t0);
    EXPECT_GE(told[k].t0, 50) << "on the caller's timeline, after the offset";
    EXPECT_GT(told[k].t1, told[k].t0);
    EXPECT_LE(told[k].t1, 400);
    EXPECT_FLOAT_EQ(told[k].temperature, k % 2 == 0 ? 0.5f : 1.0f);
  }
  // A callback that throws stops the job; transcribe() rethrows it.
  p.on_fallback = [](const Fallback&) { throw std::runtime_error("stop at the first retry"); };
  EXPECT_THROW(ctx->transcribe(a, p), std::runtime_error);
}

TEST_F(DecodingOptions, Suppression) {
  run_twice([](TranscribeParams& p) { p.suppress_nst = false; });
  run_twice([](TranscribeParams& p) { p.suppress_blank = false; });
  const std::regex re("[a-m ]+");
  const Transcript t = run_twice([](TranscribeParams& p) { p.suppress_regex = "[a-m ]+"; });
  for (const Segment& s : t.segments)
    for (const TokenData& tok : s.tokens) EXPECT_FALSE(std::regex_match(tok.text, re)) << tok.text;
  const Transcript plain = run_twice([](TranscribeParams&) {});
  std::vector<int32_t> seen;
  for (const Segment& s : plain.segments)
    for (const TokenData& tok : s.tokens) seen.push_back(tok.id);
  if (!seen.empty()) {
    const Transcript t2 = run_twice([&](TranscribeParams& p) { p.suppress_tokens = seen; });
    for (const Segment& s : t2.segments)
      for (const TokenData& tok : s.tokens) EXPECT_EQ(std::count(seen.begin(), seen.end(), tok.id), 0) << tok.id;
  }
}

TEST_F(DecodingOptions, Prompting) {
  run_twice([](TranscribeParams& p) { p.initial_prompt = "A glossary: hark, whisper."; }, 40.0);
  run_twice(
      [](TranscribeParams& p) {
        p.initial_prompt = "A glossary: hark, whisper.";
        p.carry_initial_prompt = true;
      },
      40.0);
  run_twice([](TranscribeParams& p) { p.no_context = true; }, 40.0);
  run_twice([](TranscribeParams& p) { p.max_context = 4; }, 40.0);
}

TEST_F(DecodingOptions, TimestampOptions) {
  const Transcript t0 = run_twice([](TranscribeParams& p) { p.max_initial_timestamp = 0.0f; });
  if (!t0.segments.empty()) {
    EXPECT_EQ(t0.segments[0].t0, 0);  // the first timestamp is <|0.00|>
  }
  const Transcript one = run_twice([](TranscribeParams& p) { p.single_segment = true; }, 40.0);
  EXPECT_LE(one.segments.size(), one.windows.size());
  run_twice([](TranscribeParams& p) { p.timestamps = false; });
}

// Every token inside its segment, in order, each ending where the next starts or later.
void expect_token_times(const Transcript& t) {
  for (const Segment& s : t.segments) {
    int64_t prev = s.t0;
    for (const TokenData& tok : s.tokens) {
      EXPECT_GE(tok.t0, prev) << tok.text;
      EXPECT_LE(tok.t0, tok.t1) << tok.text;
      EXPECT_LE(tok.t1, s.t1) << tok.text;
      prev = tok.t1;
    }
  }
}

TEST_F(DecodingOptions, TokenTimestampsAndMaxLen) {
  const Transcript plain = run_twice([](TranscribeParams&) {});
  for (const Segment& s : plain.segments)
    for (const TokenData& tok : s.tokens) EXPECT_EQ(tok.t0, -1);
  const Transcript timed = run_twice([](TranscribeParams& p) { p.token_timestamps = true; });
  EXPECT_EQ(dump(timed), dump(plain));  // the same text and segments, now with token times
  expect_token_times(timed);
  for (const bool on_word : {false, true}) {
    const Transcript cut = run_twice([&](TranscribeParams& p) {
      p.max_len = 8;
      p.split_on_word = on_word;
    });
    expect_token_times(cut);
    std::string joined, plain_joined;
    for (const Segment& s : cut.segments) {
      joined += s.text;
      // Longer only when a token (a word, with split_on_word) could not be cut.
      if (s.text.size() > 8 && !on_word) {
        EXPECT_EQ(s.tokens.size(), 1u) << s.text;
      }
      if (on_word) {
        for (size_t k = 1; k < s.tokens.size(); ++k) {
          if (s.text.size() > 8 && s.tokens[k].text.starts_with(' ')) ADD_FAILURE() << "uncut word in " << s.text;
        }
      }
    }
    for (const Segment& s : plain.segments) plain_joined += s.text;
    EXPECT_EQ(joined, plain_joined);  // cutting moves no text
    EXPECT_GE(cut.segments.size(), plain.segments.size());
  }
  // Every option at once: beam search, word timestamps (which move segment bounds), token times
  // and max_len; token times stay inside the moved segments.
  const Transcript all = run_twice([](TranscribeParams& p) {
    p.beam_size = 3;
    p.word_timestamps = true;
    p.token_timestamps = true;
    p.max_len = 12;
  });
  expect_token_times(all);
  for (const Segment& s : all.segments) EXPECT_FALSE(s.words.empty()) << s.text;
}

TEST_F(DecodingOptions, BadValuesFailBeforeAnyCompute) {
  auto ctx = load(1);
  const std::vector<float> a = tones(1.0);
  for (const auto& [set, word] : std::vector<std::pair<std::function<void(TranscribeParams&)>, std::string>>{
           {[](TranscribeParams& p) { p.temperature = -1.0f; }, "temperature"},
           {[](TranscribeParams& p) { p.best_of = 0; }, "best_of"},
           {[](TranscribeParams& p) { p.beam_size = 0; }, "beam_size"},
           {[](TranscribeParams& p) { p.beam_size = 65; }, "beam_size"},
           {[](TranscribeParams& p) { p.patience = 0.0f; }, "patience"},
           {[](TranscribeParams& p) { p.patience = NAN; }, "patience"},
           {[](TranscribeParams& p) { p.suppress_regex = "a{"; }, "suppress_regex"},
           {[](TranscribeParams& p) { p.temperature_inc = NAN; }, "temperature_inc"},
           {[](TranscribeParams& p) { p.thold_pt = 2.0f; }, "thold_pt"},
           {[](TranscribeParams& p) { p.max_len = -3; }, "max_len"}}) {
    TranscribeParams p = testing::fast_params();
    set(p);
    testing::expect_refused_before_compute(*ctx, a, p, word);
  }
}

}  // namespace
}  // namespace hark
