#include "transcribe/window_pipeline.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <string>

#include "decode/split_window.h"
#include "decode/token_timestamps.h"
#include "frontend/mel.h"
#include "model/hparams.h"
#include "runtime/stopwatch.h"
#include "transcribe/job_language.h"
#include "transcribe/max_len.h"

namespace hark {

namespace {

// OpenAI's single_timestamp_ending: the window's tokens (end-of-text aside) end in one timestamp
// after a text token, i.e. the model said "no more speech after this".
bool single_timestamp_ending(const SpecialTokens& st, std::span<const int32_t> tokens) {
  size_t n = tokens.size();
  while (n > 0 && tokens[n - 1] == st.eot) --n;
  return n >= 2 && !st.is_timestamp(tokens[n - 2]) && st.is_timestamp(tokens[n - 1]);
}

// A chunk's tokens as a whole: when text follows the last timestamp (the model ran out of window
// before closing its segment), a closing timestamp at the chunk's end is added, so split_window
// keeps that text instead of leaving it to a next window (chunks have none).
std::vector<int32_t> closed_at_end(const SpecialTokens& st, std::vector<int32_t> tokens, int64_t frames) {
  while (!tokens.empty() && tokens.back() == st.eot) tokens.pop_back();
  bool any_timestamp = false, text_after = false;
  for (int32_t id : tokens) {
    if (st.is_timestamp(id)) {
      any_timestamp = true;
      text_after = false;
    } else if (st.is_text(id)) {
      text_after = true;
    }
  }
  if (any_timestamp && text_after)
    tokens.push_back(st.timestamp_begin + static_cast<int32_t>(std::min<int64_t>(frames, frontend::kWindowFrames) / 2));
  return tokens;
}

// Token t0/t1 of one segment from the probabilities recorded at each token's step. (A search
// that recorded none leaves every token unsure: times shared by text length.)
void set_token_times(const SpecialTokens& st, const decode::WindowTokens& w, const decode::RawSegment& rs,
                     int64_t window_offset, const TranscribeParams& p, Segment* seg) {
  std::vector<decode::TimedTokenInput> in;
  for (size_t k = 0; k < rs.tokens.size(); ++k) {
    const size_t at = rs.positions[k];
    in.push_back({seg->tokens[k].text, at < w.ts_probs.size() ? w.ts_probs[at] : decode::TimestampProb{}});
  }
  const std::vector<decode::TokenTime> times =
      decode::assign_token_times(st, in, window_offset, seg->t0, seg->t1, p.thold_pt, p.thold_ptsum);
  for (size_t k = 0; k < times.size(); ++k) {
    seg->tokens[k].t0 = times[k].t0;
    seg->tokens[k].t1 = times[k].t1;
  }
}

std::vector<Segment> window_segments(const LoadedModel& m, const decode::WindowTokens& w,
                                     std::span<const decode::RawSegment> raw, double compression_ratio,
                                     int64_t token_time_offset, const TranscribeParams& p, bool token_timestamps) {
  const SpecialTokens& st = m.file->vocab().special();
  std::vector<Segment> out;
  for (const decode::RawSegment& rs : raw) {
    Segment seg;
    seg.t0 = rs.t0;
    seg.t1 = rs.t1;
    seg.text = m.tokenizer->decode(rs.tokens);
    seg.temperature = w.temperature;
    seg.avg_logprob = w.avg_logprob;
    seg.compression_ratio = compression_ratio;
    seg.no_speech_prob = w.no_speech_prob;
    seg.speaker_turn_next = rs.speaker_turn_next;
    for (size_t k = 0; k < rs.tokens.size(); ++k) {
      TokenData td;
      td.id = rs.tokens[k];
      td.text = std::string(m.tokenizer->token_bytes(td.id));
      td.p = w.probs[rs.positions[k]];
      td.logp = w.logprobs[rs.positions[k]];
      seg.tokens.push_back(std::move(td));
    }
    if (token_timestamps) set_token_times(st, w, rs, token_time_offset, p, &seg);
    out.push_back(std::move(seg));
  }
  return out;
}

void keep_token_times_inside(std::vector<Segment>& segments) {
  for (Segment& seg : segments)
    for (TokenData& td : seg.tokens) {
      if (td.t0 < 0) continue;
      td.t0 = std::clamp(td.t0, seg.t0, seg.t1);
      td.t1 = std::clamp(td.t1, td.t0, seg.t1);
    }
}

std::vector<Segment> wrap_to_max_len(const LoadedModel& m, std::vector<Segment> segments, const TranscribeParams& p) {
  return wrap_segments(std::move(segments), p.max_len, p.split_on_word, [&m](std::span<const TokenData> toks) {
    std::vector<int32_t> ids;
    for (const TokenData& td : toks) ids.push_back(td.id);
    return m.tokenizer->decode(ids);
  });
}

}  // namespace

WindowPipeline::WindowPipeline(const LoadedModel& m, decode::SearchModel& model, const JobRequest& req,
                               const TranscribeParams& p, const decode::Thresholds& thresholds, int64_t content_frames)
    : m_(m),
      req_(req),
      p_(p),
      thresholds_(thresholds),
      content_frames_(content_frames),
      // max_len cuts segments at token times, so it needs them (as in whisper.cpp).
      token_timestamps_(p.token_timestamps || p.max_len > 0),
      words_(m, model, p, req.alignment_heads, req.offset_units) {}

WindowSegments WindowPipeline::segments(const DecodedWindow& win, double* decode_ms) {
  const SpecialTokens& st = m_.file->vocab().special();
  const decode::WindowTokens& w = *win.tokens;
  const int64_t offset = req_.offset_units + win.seek;  // on the caller's timeline
  WindowSegments out;
  const char* code = language_code(win.lang);
  out.window = {offset, offset + win.frames, false, code ? code : "en"};
  out.next_seek = win.seek + win.frames;
  // Silence: the model says no one speaks, and is unsure of what it would write.
  if (decode::is_silence(thresholds_, w.avg_logprob, w.no_speech_prob)) {
    out.window.skipped_as_silence = true;
    return out;
  }
  decode::WindowResult r = win.whole ? decode::split_window(st, closed_at_end(st, w.tokens, win.frames), offset,
                                                            win.frames, req_.speaker_turn)
                                     : decode::split_window(st, w.tokens, offset, win.frames, req_.speaker_turn);
  if (p_.single_segment && !r.segments.empty()) {
    // The window's text as one segment, from its first opening time to the end of its audio.
    decode::RawSegment one;
    one.t0 = r.segments.front().t0;
    one.t1 = offset + win.frames;
    for (const decode::RawSegment& rs : r.segments) {
      one.tokens.insert(one.tokens.end(), rs.tokens.begin(), rs.tokens.end());
      one.positions.insert(one.positions.end(), rs.positions.begin(), rs.positions.end());
      one.speaker_turn_next = one.speaker_turn_next || rs.speaker_turn_next;
    }
    r.segments.assign(1, std::move(one));
  }
  if (p_.single_segment) r.consumed_frames = win.frames;
  out.speaker_turn_first = r.speaker_turn_first;
  out.segments = window_segments(m_, w, r.segments, win.compression_ratio, offset, p_, token_timestamps_);
  for (Segment& s : out.segments) s.seek = offset;
  // A chunk's text is kept whole (as a window that ends on a single timestamp: no seek to move).
  out.next_seek = win.whole ? win.end : win.seek + std::max<int64_t>(r.consumed_frames, 1);
  if (p_.word_timestamps) {
    // Words, refined segment bounds and the next seek from the last word (word_timing.h).
    const auto t = std::chrono::steady_clock::now();
    const WordOutcome wo =
        words_.run({win.seek, win.frames, content_frames_, out.next_seek,
                    win.whole || single_timestamp_ending(st, w.tokens), win.lang, window_translates(p_, win.lang)},
                   out.segments);
    *decode_ms += ms_since(t);
    if (wo.aborted) {
      out.aborted = true;
      out.segments.clear();
      return out;
    }
    out.next_seek = wo.next_seek;
    if (wo.drop_window) {  // a leading hallucination: nothing of this window is kept
      out.dropped = true;
      out.segments.clear();
      return out;
    }
    if (token_timestamps_) keep_token_times_inside(out.segments);
  }
  // max_len last: it cuts at token times, and hands each part the words that start in it.
  out.segments = wrap_to_max_len(m_, std::move(out.segments), p_);
  return out;
}

void JobProgress::update(int64_t done, int64_t total, int cap) {
  set(static_cast<int>(std::min<int64_t>(cap, done * 100 / std::max<int64_t>(total, 1))));
}

void JobProgress::set(int pct) {
  if (pct <= percent_) return;
  percent_ = pct;
  if (report_) report_(pct);
}

}  // namespace hark
