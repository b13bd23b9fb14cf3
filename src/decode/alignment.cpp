// Word timestamps by DTW over cross-attention (see alignment.h for the steps and the reference).
#include "decode/alignment.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "model/tokenizer.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Valid UTF-8 (as sanitize_utf8 returns) to code points.
std::u32string code_points(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n && i + static_cast<size_t>(k) < s.size(); ++k)
      c = (c << 6) | (static_cast<unsigned char>(s[i + static_cast<size_t>(k)]) & 0x3F);
    out.push_back(c);
    i += static_cast<size_t>(n);
  }
  return out;
}

void append_utf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Python's str.isspace() code points (what str.strip() with no argument removes).
bool py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string py_strip(std::string_view s) {
  const std::u32string cps = code_points(s);
  size_t b = 0, e = cps.size();
  while (b < e && py_space(cps[b])) ++b;
  while (e > b && py_space(cps[e - 1])) --e;
  std::string out;
  for (size_t i = b; i < e; ++i) append_utf8(cps[i], &out);
  return out;
}

// Python's `needle in haystack` for str: a substring test (true for ""). On valid UTF-8 a byte
// substring match is a code-point substring match (UTF-8 is self-synchronizing).
bool py_in(std::string_view needle, std::string_view haystack) {
  return haystack.find(needle) != std::string_view::npos;
}

bool starts_with_space(std::string_view s) { return !s.empty() && s.front() == ' '; }
bool ends_with_space(std::string_view s) { return !s.empty() && s.back() == ' '; }

// Python's string.punctuation.
constexpr std::string_view kAsciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

// np.median: the middle value, or the mean of the two middle ones.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

}  // namespace

// ---- steps 1-5 ----------------------------------------------------------------------------------

HeadWeights keep_frames_and_softmax(const HeadWeights& qk, int n_keep, float qk_scale) {
  n_keep = std::clamp(n_keep, 0, qk.n_frames);
  HeadWeights w(qk.n_heads, qk.n_tokens, n_keep);
  if (n_keep == 0) return w;
  for (int h = 0; h < qk.n_heads; ++h)
    for (int t = 0; t < qk.n_tokens; ++t) {
      const float* in = &qk.data[qk.index(h, t, 0)];
      float* out = &w.data[w.index(h, t, 0)];
      float mx = -std::numeric_limits<float>::infinity();
      for (int f = 0; f < n_keep; ++f) mx = std::max(mx, in[f] * qk_scale);
      double sum = 0.0;
      for (int f = 0; f < n_keep; ++f) {
        out[f] = std::exp(in[f] * qk_scale - mx);
        sum += out[f];
      }
      for (int f = 0; f < n_keep; ++f) out[f] = static_cast<float>(out[f] / sum);
    }
  return w;
}

HeadWeights keep_frames_and_renormalize(const HeadWeights& probs, int n_keep) {
  n_keep = std::clamp(n_keep, 0, probs.n_frames);
  HeadWeights w(probs.n_heads, probs.n_tokens, n_keep);
  if (n_keep == 0) return w;
  for (int h = 0; h < probs.n_heads; ++h)
    for (int t = 0; t < probs.n_tokens; ++t) {
      const float* in = &probs.data[probs.index(h, t, 0)];
      float* out = &w.data[w.index(h, t, 0)];
      double sum = 0.0;
      for (int f = 0; f < n_keep; ++f) sum += in[f];
      for (int f = 0; f < n_keep; ++f) out[f] = static_cast<float>(in[f] / sum);
    }
  return w;
}

void standardize_tokens(HeadWeights& w) {
  const int T = w.n_tokens;
  if (T == 0) return;
  std::vector<double> mean(static_cast<size_t>(w.n_frames)), var(static_cast<size_t>(w.n_frames));
  for (int h = 0; h < w.n_heads; ++h) {
    std::fill(mean.begin(), mean.end(), 0.0);
    std::fill(var.begin(), var.end(), 0.0);
    for (int t = 0; t < T; ++t)
      for (int f = 0; f < w.n_frames; ++f) mean[static_cast<size_t>(f)] += w.at(h, t, f);
    for (auto& m : mean) m /= T;
    for (int t = 0; t < T; ++t)
      for (int f = 0; f < w.n_frames; ++f) {
        const double d = w.at(h, t, f) - mean[static_cast<size_t>(f)];
        var[static_cast<size_t>(f)] += d * d;
      }
    for (int f = 0; f < w.n_frames; ++f) {
      const auto m = static_cast<float>(mean[static_cast<size_t>(f)]);
      const auto sd = static_cast<float>(std::sqrt(var[static_cast<size_t>(f)] / T));  // unbiased=False
      for (int t = 0; t < T; ++t) w.at(h, t, f) = (w.at(h, t, f) - m) / sd;
    }
  }
}

void median_filter_row(std::span<const float> in, std::span<float> out, int width) {
  HARK_CHECK(out.size() == in.size(), "median filter: output size differs from input size");
  const int n = static_cast<int>(in.size());
  const int pad = width / 2;
  // The reference returns before checking the width when the row is too short to pad.
  if (n <= pad) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  HARK_CHECK(width > 0 && width % 2 == 1,
             "median filter: the width must be a positive odd number, got " + std::to_string(width));
  std::vector<float> win(static_cast<size_t>(width));
  for (int f = 0; f < n; ++f) {
    for (int k = -pad; k <= pad; ++k) {
      int idx = f + k;
      if (idx < 0)
        idx = -idx;  // reflect: x[-1] = x[1]
      else if (idx >= n)
        idx = 2 * (n - 1) - idx;  // x[n] = x[n-2]
      win[static_cast<size_t>(k + pad)] = in[static_cast<size_t>(idx)];
    }
    // sort()[..., width // 2]: the middle of the sorted window
    std::nth_element(win.begin(), win.begin() + pad, win.end());
    out[static_cast<size_t>(f)] = win[static_cast<size_t>(pad)];
  }
}

void median_filter_frames(HeadWeights& w, int width) {
  std::vector<float> row(static_cast<size_t>(w.n_frames));
  for (int h = 0; h < w.n_heads; ++h)
    for (int t = 0; t < w.n_tokens; ++t) {
      std::span<float> r(&w.data[w.index(h, t, 0)], static_cast<size_t>(w.n_frames));
      std::copy(r.begin(), r.end(), row.begin());
      median_filter_row(row, r, width);
    }
}

Matrix mean_over_heads(const HeadWeights& w) {
  HARK_CHECK(w.n_heads > 0, "alignment: no heads to average");
  Matrix m(w.n_tokens, w.n_frames);
  for (int t = 0; t < w.n_tokens; ++t)
    for (int f = 0; f < w.n_frames; ++f) {
      float s = 0.0f;
      for (int h = 0; h < w.n_heads; ++h) s += w.at(h, t, f);
      m.at(t, f) = s / static_cast<float>(w.n_heads);
    }
  return m;
}

Matrix rows_between(const Matrix& m, int first, int end) {
  HARK_CHECK(first >= 0 && first <= end && end <= m.rows, "alignment: rows [" + std::to_string(first) + ", " +
                                                              std::to_string(end) + ") do not lie in a matrix of " +
                                                              std::to_string(m.rows) + " rows");
  Matrix out(end - first, m.cols);
  std::copy(m.data.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(first) * static_cast<size_t>(m.cols)),
            m.data.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(end) * static_cast<size_t>(m.cols)),
            out.data.begin());
  return out;
}

Matrix alignment_matrix(const HeadWeights& qk, int n_mel_frames, int n_sot, const AlignmentOptions& opt) {
  HARK_CHECK(qk.n_heads > 0, "alignment: no alignment heads");
  HARK_CHECK(qk.data.size() == qk.index(qk.n_heads, 0, 0), "alignment: the weights hold " +
                                                               std::to_string(qk.data.size()) + " values, expected " +
                                                               std::to_string(qk.index(qk.n_heads, 0, 0)));
  HARK_CHECK(n_sot >= 1 && qk.n_tokens >= n_sot + 2,
             "alignment: " + std::to_string(qk.n_tokens) + " token rows cannot hold a sot sequence of " +
                 std::to_string(n_sot) + ", <|notimestamps|> and <|endoftext|>");
  HARK_CHECK(!opt.input_is_softmax || opt.qk_scale == 1.0f,
             "alignment: qk_scale cannot be applied to attention probabilities");
  const int n_keep = std::max(n_mel_frames, 0) / 2;
  HeadWeights w = opt.input_is_softmax ? keep_frames_and_renormalize(qk, n_keep)
                                       : keep_frames_and_softmax(qk, n_keep, opt.qk_scale);
  standardize_tokens(w);
  median_filter_frames(w, opt.medfilt_width);
  return rows_between(mean_over_heads(w), n_sot, qk.n_tokens - 1);
}

// ---- step 6 -------------------------------------------------------------------------------------

DtwTables dtw_tables(const Matrix& x) {
  const int N = x.rows, M = x.cols;
  DtwTables t;
  t.rows = N + 1;
  t.cols = M + 1;
  const size_t n = static_cast<size_t>(t.rows) * static_cast<size_t>(t.cols);
  t.cost.assign(n, std::numeric_limits<float>::infinity());
  t.trace.assign(n, int8_t{-1});
  auto at = [&](int i, int j) { return static_cast<size_t>(i) * static_cast<size_t>(t.cols) + static_cast<size_t>(j); };
  t.cost[0] = 0.0f;
  for (int j = 1; j <= M; ++j)
    for (int i = 1; i <= N; ++i) {
      const float c0 = t.cost[at(i - 1, j - 1)];
      const float c1 = t.cost[at(i - 1, j)];
      const float c2 = t.cost[at(i, j - 1)];
      float c;
      int8_t tr;
      if (c0 < c1 && c0 < c2) {
        c = c0;
        tr = 0;
      } else if (c1 < c0 && c1 < c2) {
        c = c1;
        tr = 1;
      } else {
        c = c2;
        tr = 2;
      }
      // f64 sum of an f32 value and an f32 cost, stored into the f32 table: one f32 rounding.
      t.cost[at(i, j)] = static_cast<float>(static_cast<double>(x.at(i - 1, j - 1)) + static_cast<double>(c));
      t.trace[at(i, j)] = tr;
    }
  return t;
}

AlignmentPath backtrace(DtwTables t) {
  auto at = [&](int i, int j) { return static_cast<size_t>(i) * static_cast<size_t>(t.cols) + static_cast<size_t>(j); };
  for (int j = 0; j < t.cols; ++j) t.trace[at(0, j)] = 2;
  for (int i = 0; i < t.rows; ++i) t.trace[at(i, 0)] = 1;
  int i = t.rows - 1, j = t.cols - 1;
  AlignmentPath p;
  while (i > 0 || j > 0) {
    p.text_indices.push_back(i - 1);
    p.time_indices.push_back(j - 1);
    switch (t.trace[at(i, j)]) {
      case 0:
        --i;
        --j;
        break;
      case 1: --i; break;
      case 2: --j; break;
      default:
        throw Error("alignment: DTW trace has no move at (" + std::to_string(i) + ", " + std::to_string(j) + ")");
    }
  }
  std::reverse(p.text_indices.begin(), p.text_indices.end());
  std::reverse(p.time_indices.begin(), p.time_indices.end());
  return p;
}

AlignmentPath dtw(const Matrix& x) {
  HARK_CHECK(x.rows > 0 && x.cols > 0, "alignment: DTW needs at least one token and one frame, got " +
                                           std::to_string(x.rows) + " x " + std::to_string(x.cols));
  HARK_CHECK(x.data.size() == static_cast<size_t>(x.rows) * static_cast<size_t>(x.cols),
             "alignment: DTW matrix size does not match its shape");
  return backtrace(dtw_tables(x));
}

// ---- step 7 -------------------------------------------------------------------------------------

WordSplit split_tokens_on_unicode(std::span<const int32_t> tokens, const TokenBytes& bytes) {
  std::string all;
  for (int32_t t : tokens) all += bytes(t);
  const std::u32string full = code_points(sanitize_utf8(all));

  WordSplit out;
  std::vector<int32_t> current;
  std::string current_bytes;
  size_t offset = 0;  // code points of the words so far
  for (int32_t t : tokens) {
    current.push_back(t);
    current_bytes += bytes(t);
    std::string decoded = sanitize_utf8(current_bytes);
    const std::u32string cps = code_points(decoded);
    const size_t bad = cps.find(kReplacement);
    // A U+FFFD that the whole text also has at this place is a real one (bytes that never form a
    // character), not a character still waiting for its next token. Past the end of the full text
    // (Python would raise there; it does not happen for one consistent token list) counts as real.
    const bool complete =
        bad == std::u32string::npos || offset + bad >= full.size() || full[offset + bad] == kReplacement;
    if (complete) {
      out.words.push_back(std::move(decoded));
      out.tokens.push_back(std::move(current));
      current.clear();
      current_bytes.clear();
      offset += cps.size();
    }
  }
  return out;
}

WordSplit split_tokens_on_spaces(std::span<const int32_t> tokens, const TokenBytes& bytes, int32_t eot) {
  WordSplit pieces = split_tokens_on_unicode(tokens, bytes);
  WordSplit out;
  for (size_t k = 0; k < pieces.words.size(); ++k) {
    const std::string& piece = pieces.words[k];
    const bool special = pieces.tokens[k].front() >= eot;
    const bool with_space = starts_with_space(piece);
    const bool punctuation = py_in(py_strip(piece), kAsciiPunctuation);
    if (special || with_space || punctuation || out.words.empty()) {
      out.words.push_back(piece);
      out.tokens.push_back(pieces.tokens[k]);
    } else {
      out.words.back() += piece;
      out.tokens.back().insert(out.tokens.back().end(), pieces.tokens[k].begin(), pieces.tokens[k].end());
    }
  }
  return out;
}

bool splits_on_unicode(std::string_view language) {
  return language == "zh" || language == "ja" || language == "th" || language == "lo" || language == "my" ||
         language == "yue";
}

WordSplit split_to_word_tokens(std::span<const int32_t> tokens, const TokenBytes& bytes, int32_t eot,
                               std::string_view language) {
  // Languages written without spaces between words: without morpheme analysis, every place the
  // tokens decode to whole characters is taken as a word boundary.
  if (splits_on_unicode(language)) return split_tokens_on_unicode(tokens, bytes);
  return split_tokens_on_spaces(tokens, bytes, eot);
}

std::vector<WordTiming> word_timings(const WordSplit& split, const AlignmentPath& path,
                                     std::span<const float> text_token_probs) {
  const size_t n_words = split.tokens.size();
  if (n_words <= 1) return {};  // only the eot: nothing to time
  // word_boundaries = [0, cumsum(len(tokens) of every word but the last)]
  std::vector<size_t> boundaries{0};
  for (size_t w = 0; w + 1 < n_words; ++w) boundaries.push_back(boundaries.back() + split.tokens[w].size());

  // jump_times: the first frame of each row the path visits (the path steps rows one at a time,
  // so entry k is row k), in seconds.
  HARK_CHECK(path.text_indices.size() == path.time_indices.size() && !path.text_indices.empty(),
             "alignment: the DTW path is empty or its index lists differ in length");
  std::vector<double> jump_times;
  for (size_t k = 0; k < path.text_indices.size(); ++k)
    if (k == 0 || path.text_indices[k] != path.text_indices[k - 1])
      jump_times.push_back(path.time_indices[k] / kAlignFramesPerSecond);
  HARK_CHECK(boundaries.back() < jump_times.size(), "alignment: the path covers " + std::to_string(jump_times.size()) +
                                                        " token rows, the words need " +
                                                        std::to_string(boundaries.back() + 1));
  HARK_CHECK(boundaries.back() <= text_token_probs.size(), "alignment: " + std::to_string(text_token_probs.size()) +
                                                               " token probabilities for " +
                                                               std::to_string(boundaries.back()) + " text tokens");

  std::vector<WordTiming> out;
  out.reserve(n_words - 1);
  for (size_t w = 0; w + 1 < n_words; ++w) {
    WordTiming wt;
    wt.word = split.words[w];
    wt.tokens = split.tokens[w];
    wt.start = jump_times[boundaries[w]];
    wt.end = jump_times[boundaries[w + 1]];
    double sum = 0.0;
    for (size_t i = boundaries[w]; i < boundaries[w + 1]; ++i) sum += static_cast<double>(text_token_probs[i]);
    const size_t n = boundaries[w + 1] - boundaries[w];
    wt.probability = n > 0 ? sum / static_cast<double>(n) : std::nan("");
    out.push_back(std::move(wt));
  }
  return out;
}

std::vector<float> text_token_probs(std::span<const float> logits, int n_vocab, int32_t eot,
                                    std::span<const int32_t> text_tokens) {
  HARK_CHECK(n_vocab > 0 && eot > 0 && eot <= n_vocab, "alignment: bad vocabulary size or eot id");
  HARK_CHECK(logits.size() >= text_tokens.size() * static_cast<size_t>(n_vocab),
             "alignment: " + std::to_string(logits.size() / static_cast<size_t>(n_vocab)) + " logits rows for " +
                 std::to_string(text_tokens.size()) + " text tokens");
  std::vector<float> out;
  out.reserve(text_tokens.size());
  for (size_t i = 0; i < text_tokens.size(); ++i) {
    const float* row = logits.data() + i * static_cast<size_t>(n_vocab);
    const int32_t tok = text_tokens[i];
    HARK_CHECK(tok >= 0 && tok < eot, "alignment: text token " + std::to_string(tok) + " is not an ordinary token");
    const float mx = *std::max_element(row, row + eot);
    double sum = 0.0;
    for (int32_t v = 0; v < eot; ++v) sum += std::exp(static_cast<double>(row[v] - mx));
    out.push_back(static_cast<float>(std::exp(static_cast<double>(row[tok] - mx)) / sum));
  }
  return out;
}

std::vector<WordTiming> find_alignment(const HeadWeights& qk, int n_mel_frames, int n_sot,
                                       std::span<const int32_t> text_tokens, std::span<const float> text_token_probs_,
                                       const TokenBytes& bytes, int32_t eot, std::string_view language,
                                       const AlignmentOptions& opt) {
  if (text_tokens.empty()) return {};
  HARK_CHECK(static_cast<size_t>(qk.n_tokens) == static_cast<size_t>(n_sot) + text_tokens.size() + 2,
             "alignment: the attention has " + std::to_string(qk.n_tokens) + " token rows, expected " +
                 std::to_string(static_cast<size_t>(n_sot) + text_tokens.size() + 2) +
                 " (sot sequence, notimestamps, text tokens, eot)");
  // No audio position to align to (a window of less than 2 mel frames): nothing to time.
  if (std::min(std::max(n_mel_frames, 0) / 2, qk.n_frames) == 0) return {};
  const Matrix m = alignment_matrix(qk, n_mel_frames, n_sot, opt);
  Matrix neg = m;
  for (auto& v : neg.data) v = -v;
  const AlignmentPath path = dtw(neg);
  std::vector<int32_t> with_eot(text_tokens.begin(), text_tokens.end());
  with_eot.push_back(eot);
  return word_timings(split_to_word_tokens(with_eot, bytes, eot, language), path, text_token_probs_);
}

// ---- add_word_timestamps ------------------------------------------------------------------------

void merge_punctuations(std::vector<WordTiming>& alignment, std::string_view prepended, std::string_view appended) {
  if (alignment.size() < 2) return;
  // Prepended marks (opening quotes, brackets, '¿', '-') belong to the word after them. From the
  // end, so a run of them all lands on the same word; j stays on the word that receives them.
  {
    int i = static_cast<int>(alignment.size()) - 2;
    int j = static_cast<int>(alignment.size()) - 1;
    while (i >= 0) {
      WordTiming& prev = alignment[static_cast<size_t>(i)];
      WordTiming& next = alignment[static_cast<size_t>(j)];
      if (starts_with_space(prev.word) && py_in(py_strip(prev.word), prepended)) {
        next.word = prev.word + next.word;
        next.tokens.insert(next.tokens.begin(), prev.tokens.begin(), prev.tokens.end());
        prev.word.clear();
        prev.tokens.clear();
      } else {
        j = i;
      }
      --i;
    }
  }
  // Appended marks (closing quotes and brackets, stops, commas) belong to the word before them,
  // unless that word ends in a space. An emptied word is "" and so "in" any string: it merges
  // as nothing, and i stays on the word before it.
  {
    size_t i = 0, j = 1;
    while (j < alignment.size()) {
      WordTiming& prev = alignment[i];
      WordTiming& next = alignment[j];
      if (!ends_with_space(prev.word) && py_in(next.word, appended)) {
        prev.word += next.word;
        prev.tokens.insert(prev.tokens.end(), next.tokens.begin(), next.tokens.end());
        next.word.clear();
        next.tokens.clear();
      } else {
        i = j;
      }
      ++j;
    }
  }
}

double round2(double x) {
  if (!std::isfinite(x)) return x;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, 2);
  double y = 0.0;
  std::from_chars(buf, r.ptr, y);
  return y;
}

void add_word_timestamps(std::span<SegmentForWords> segments, std::vector<WordTiming> alignment, double time_offset,
                         double last_speech_timestamp, std::string_view prepend_punctuations,
                         std::string_view append_punctuations) {
  if (segments.empty()) return;

  // The typical word length of this window: median of the non-zero durations, at most 0.7 s.
  std::vector<double> durations;
  for (const auto& w : alignment)
    if (w.end - w.start != 0.0) durations.push_back(w.end - w.start);
  double median_duration = durations.empty() ? 0.0 : median(durations);
  median_duration = std::min(0.7, median_duration);
  const double max_duration = median_duration * 2;

  // Sentence ends: DTW tends to stretch a word next to a pause over the silence, so a sentence
  // mark longer than max keeps its start, and the word after a sentence mark keeps its end.
  if (!durations.empty()) {
    constexpr std::string_view kSentenceEndMarks = ".\u3002!\uff01?\uff1f";
    for (size_t i = 1; i < alignment.size(); ++i) {
      WordTiming& w = alignment[i];
      if (w.end - w.start > max_duration) {
        if (py_in(w.word, kSentenceEndMarks))
          w.end = w.start + max_duration;
        else if (py_in(alignment[i - 1].word, kSentenceEndMarks))
          w.start = w.end - max_duration;
      }
    }
  }

  merge_punctuations(alignment, prepend_punctuations, append_punctuations);

  size_t word_index = 0;
  for (SegmentForWords& seg : segments) {
    size_t saved_tokens = 0;
    std::vector<SegmentWord> words;
    // A segment takes words until it has as many tokens as it holds (merged-away words count 0).
    while (word_index < alignment.size() && saved_tokens < seg.text_tokens.size()) {
      const WordTiming& t = alignment[word_index];
      if (!t.word.empty())
        words.push_back({t.word, round2(time_offset + t.start), round2(time_offset + t.end), t.probability});
      saved_tokens += t.tokens.size();
      ++word_index;
    }

    if (!words.empty()) {
      // After a pause, the first word (or first two) tends to start too early, covering the
      // silence: cut it to at most max_duration, sharing the boundary with a long second word.
      if (words[0].end - last_speech_timestamp > median_duration * 4 &&
          (words[0].end - words[0].start > max_duration ||
           (words.size() > 1 && words[1].end - words[0].start > max_duration * 2))) {
        if (words.size() > 1 && words[1].end - words[1].start > max_duration) {
          const double boundary = std::max(words[1].end / 2, words[1].end - max_duration);
          words[0].end = words[1].start = boundary;
        }
        words[0].start = std::max(0.0, words[0].end - max_duration);
      }

      // The segment's own timestamps win over a first/last word that overhangs them by > 0.5 s;
      // otherwise the segment is fitted to its words.
      if (seg.start < words[0].end && seg.start - 0.5 > words[0].start) {
        words[0].start = std::max(0.0, std::min(words[0].end - median_duration, seg.start));
      } else {
        seg.start = words[0].start;
      }
      if (seg.end > words.back().start && seg.end + 0.5 < words.back().end) {
        words.back().end = std::max(words.back().start + median_duration, seg.end);
      } else {
        seg.end = words.back().end;
      }
      last_speech_timestamp = seg.end;
    }
    seg.words = std::move(words);
  }
}

}  // namespace hark::decode
