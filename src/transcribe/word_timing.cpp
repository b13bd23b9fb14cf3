// Word timestamps in the long-form loop (see word_timing.h).
#include "transcribe/word_timing.h"

#include <algorithm>
#include <cmath>

#include "model/hparams.h"
#include "runtime/error.h"

namespace hark {

namespace {

// Mel frames (10 ms) per second and per window.
constexpr double kFramesPerSecond = 100.0;
constexpr int64_t kWindowFrames = 3000;

// Python's round() of a non-negative time in frames: ties to even (the default rounding mode).
// Frames are also the results' 10 ms units.
int64_t to_frames(double seconds) { return static_cast<int64_t>(std::nearbyint(seconds * kFramesPerSecond)); }

// What the reference leaves out of a segment's anomaly score: words that are only punctuation
// (OpenAI's `punctuation`, the default prepend and append sets together; a substring test).
bool is_punctuation(std::string_view word) {
  constexpr std::string_view kPunctuation = "\"'\u201c\u00bf([{-\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001";
  return kPunctuation.find(word) != std::string_view::npos;
}

// get_end: the end of the last word of the last segment with words, else the last segment's end.
std::optional<double> last_end(const std::vector<decode::SegmentForWords>& segs) {
  for (auto s = segs.rbegin(); s != segs.rend(); ++s)
    if (!s->words.empty()) return s->words.back().end;
  if (segs.empty()) return std::nullopt;
  return segs.back().end;
}

const decode::SegmentForWords* first_with_words(std::span<const decode::SegmentForWords> segs) {
  for (const auto& s : segs)
    if (!s.words.empty()) return &s;
  return nullptr;
}

// whisper.cpp spells the large presets with dots ("large.v3.turbo"); OpenAI with dashes.
std::string preset_name(std::string name) {
  if (name.rfind("large.v", 0) == 0) {
    for (char& c : name)
      if (c == '.') c = '-';
  }
  return name;
}

}  // namespace

std::vector<decode::AlignmentHead> resolve_alignment_heads(const LoadedModel& m, const TranscribeParams& p) {
  HARK_CHECK(!std::isnan(p.hallucination_silence_threshold),
             "transcribe: hallucination_silence_threshold must not be NaN (<= 0: off)");
  if (!p.word_timestamps) return {};
  const HParams& hp = m.file->hparams();
  const int32_t layers = hp.n_text_layer, heads = hp.n_text_head;
  const std::string name = preset_name(p.dtw_preset);
  std::vector<decode::AlignmentHead> list;
  if (name.empty()) {
    std::string own = hp.size_name();
    if (own == "large") own = "large-v2";  // 80 mel bins and 32 layers: v1 or v2, told apart by nothing
    bool found = false;
    for (const auto& preset : decode::alignment_heads_presets())
      if (preset.name == own && preset.n_text_layer == layers && preset.n_text_head == heads) {
        list.assign(preset.heads.begin(), preset.heads.end());
        found = true;
      }
    // No published heads: OpenAI's default for any model, the last half of the text layers.
    if (!found) list = decode::top_most_alignment_heads(layers - layers / 2, layers, heads);
  } else if (name == "top-n" || name == "n_top_most") {
    HARK_CHECK(p.dtw_n_top >= 1 && p.dtw_n_top <= layers, "transcribe: dtw_n_top must be in [1, " +
                                                              std::to_string(layers) + "] for this model, got " +
                                                              std::to_string(p.dtw_n_top));
    list = decode::top_most_alignment_heads(p.dtw_n_top, layers, heads);
  } else if (name == "custom") {
    list = decode::parse_alignment_heads(p.dtw_heads);
  } else {
    const decode::AlignmentHeadsPreset& preset = decode::alignment_heads_preset(name);
    HARK_CHECK(preset.n_text_layer == layers && preset.n_text_head == heads,
               "transcribe: dtw preset '" + p.dtw_preset + "' is for a decoder of " +
                   std::to_string(preset.n_text_layer) + " layers x " + std::to_string(preset.n_text_head) +
                   " heads; this model has " + std::to_string(layers) + " x " + std::to_string(heads));
    list.assign(preset.heads.begin(), preset.heads.end());
  }
  return decode::checked_alignment_heads(list, layers, heads);
}

double word_anomaly_score(const decode::SegmentWord& w) {
  const double duration = w.end - w.start;
  double score = 0.0;
  if (w.probability < 0.15) score += 1.0;
  if (duration < 0.133) score += (0.133 - duration) * 15;
  if (duration > 2.0) score += duration - 2.0;
  return score;
}

bool is_segment_anomaly(const decode::SegmentForWords* s) {
  if (s == nullptr || s->words.empty()) return false;
  double score = 0.0;
  int n = 0;
  for (const auto& w : s->words) {
    if (is_punctuation(w.word)) continue;
    if (n == 8) break;
    score += word_anomaly_score(w);
    ++n;
  }
  return score >= 3 || score + 0.01 >= n;
}

WordTimer::WordTimer(const LoadedModel& m, decode::SearchModel& model, const TranscribeParams& p,
                     std::vector<decode::AlignmentHead> heads, int64_t offset_units)
    : m_(m), model_(model), p_(p), heads_(std::move(heads)), offset_units_(offset_units) {}

WordOutcome WordTimer::run(const WordWindow& w, std::vector<Segment>& segments) {
  const SpecialTokens& st = m_.file->vocab().special();
  const double time_offset = static_cast<double>(w.seek) / kFramesPerSecond;

  std::vector<decode::SegmentForWords> segs(segments.size());
  std::vector<int32_t> text;
  for (size_t i = 0; i < segments.size(); ++i) {
    segs[i].start = static_cast<double>(segments[i].t0 - offset_units_) / kFramesPerSecond;
    segs[i].end = static_cast<double>(segments[i].t1 - offset_units_) / kFramesPerSecond;
    for (const TokenData& t : segments[i].tokens)
      if (st.is_text(t.id)) segs[i].text_tokens.push_back(t.id);
    text.insert(text.end(), segs[i].text_tokens.begin(), segs[i].text_tokens.end());
  }

  std::vector<decode::WordTiming> alignment;
  if (!text.empty() && !segs.empty()) {
    // find_alignment's sequence: the start sequence without prompt, <|notimestamps|>, the text, eot.
    std::vector<int32_t> seq = m_.start_sequence(w.lang, w.translate, /*timestamps=*/true);
    const int n_sot = static_cast<int>(seq.size());
    seq.push_back(st.no_timestamps);
    seq.insert(seq.end(), text.begin(), text.end());
    seq.push_back(st.eot);
    HARK_CHECK(static_cast<int>(seq.size()) <= model_.n_text_ctx(),
               "word timestamps: " + std::to_string(seq.size()) + " tokens exceed the text context");
    decode::HeadWeights qk;
    std::vector<float> logits;
    if (model_.align(seq, heads_, &qk, &logits) != ComputeStatus::Ok) return {.aborted = true};
    const auto n_vocab = static_cast<size_t>(st.n_vocab);
    const std::span<const float> from_sot =
        std::span<const float>(logits).subspan(std::min(logits.size(), static_cast<size_t>(n_sot) * n_vocab));
    const std::vector<float> probs = decode::text_token_probs(from_sot, st.n_vocab, st.eot, text);
    const decode::TokenBytes bytes = [this](int32_t id) { return m_.tokenizer->token_bytes(id); };
    alignment = decode::find_alignment(qk, static_cast<int>(w.frames), n_sot, text, probs, bytes, st.eot,
                                       language_code(w.lang) ? language_code(w.lang) : "en");
  }
  decode::add_word_timestamps(segs, std::move(alignment), time_offset, last_speech_, p_.prepend_punctuations,
                              p_.append_punctuations);

  WordOutcome out = place(w, segs);
  if (out.aborted || out.drop_window) {
    segments.clear();
    return out;
  }
  segments.resize(segs.size());
  for (size_t i = 0; i < segs.size(); ++i) {
    Segment& s = segments[i];
    s.t0 = offset_units_ + to_frames(segs[i].start);
    s.t1 = offset_units_ + to_frames(segs[i].end);
    s.words.clear();
    for (const decode::SegmentWord& sw : segs[i].words)
      s.words.push_back({sw.word, offset_units_ + to_frames(sw.start), offset_units_ + to_frames(sw.end),
                         static_cast<float>(sw.probability)});
  }
  // A segment left without words (its text joined a word of the segment before, as the
  // reference merges tokens into words across segments) keeps its timestamp bounds, which the
  // words of its neighbours may have passed: it is fitted between them so segments stay in order.
  for (size_t i = 0; i < segments.size(); ++i) {
    Segment& s = segments[i];
    if (!s.words.empty()) continue;
    if (i > 0) s.t0 = std::max(s.t0, segments[i - 1].t1);
    if (i + 1 < segments.size()) s.t1 = std::min(s.t1, segments[i + 1].t0);
    s.t1 = std::max(s.t0, s.t1);
  }
  return out;
}

WordOutcome WordTimer::place(const WordWindow& w, std::vector<decode::SegmentForWords>& segs) {
  WordOutcome out;
  out.next_seek = w.next_seek;
  const double time_offset = static_cast<double>(w.seek) / kFramesPerSecond;
  const double window_end = static_cast<double>(w.seek + kWindowFrames) / kFramesPerSecond;
  const double duration = static_cast<double>(w.frames) / kFramesPerSecond;
  const double content_duration = static_cast<double>(w.content_frames) / kFramesPerSecond;

  // A window that ended mid-speech goes on from its last word, not its last timestamp.
  if (!w.single_timestamp_ending) {
    const std::optional<double> end = last_end(segs);
    if (end && *end > time_offset) {
      out.next_seek = to_frames(*end);
      // Segments after the last word (their text went into a word of an earlier segment) are
      // heard again from the new seek: kept here, their text would come out twice.
      while (!segs.empty() && segs.back().words.empty()) segs.pop_back();
    }
  }

  const double threshold = p_.hallucination_silence_threshold;
  if (threshold > 0.0) {
    if (!w.single_timestamp_ending) {
      const std::optional<double> end = last_end(segs);
      if (end && *end > time_offset)
        out.next_seek = window_end - *end > threshold ? to_frames(*end) : w.seek + w.frames;
    }
    // A suspected hallucination first after a long silence: skip the silence, decode again there.
    const decode::SegmentForWords* first = first_with_words(segs);
    if (first != nullptr && is_segment_anomaly(first)) {
      const double gap = first->start - time_offset;
      if (gap > threshold) {
        out.drop_window = true;
        out.next_seek = std::max(w.seek + to_frames(gap), w.seek + 1);
        return out;
      }
    }
    // A suspected hallucination between silences (or other suspects): cut the window there.
    double last_end_before = last_speech_;
    for (size_t si = 0; si < segs.size(); ++si) {
      const decode::SegmentForWords& s = segs[si];
      if (s.words.empty()) continue;
      if (is_segment_anomaly(&s)) {
        const decode::SegmentForWords* next = first_with_words(std::span(segs).subspan(si + 1));
        const double next_start = next ? next->words.front().start : time_offset + duration;
        const bool silence_before =
            s.start - last_end_before > threshold || s.start < threshold || s.start - time_offset < 2.0;
        const bool silence_after =
            next_start - s.end > threshold || is_segment_anomaly(next) || window_end - s.end < 2.0;
        if (silence_before && silence_after) {
          out.next_seek = to_frames(std::max(time_offset + 1, s.start));
          if (content_duration - s.end < threshold) out.next_seek = w.content_frames;
          segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(si), segs.end());
          break;
        }
      }
      last_end_before = s.end;
    }
  }
  if (const std::optional<double> end = last_end(segs)) last_speech_ = *end;
  out.next_seek = std::max(out.next_seek, w.seek + 1);  // always forward
  return out;
}

}  // namespace hark
