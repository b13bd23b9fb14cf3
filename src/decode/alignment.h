// Word timestamps by DTW over cross-attention: OpenAI's find_alignment / add_word_timestamps
// (whisper/timing.py), as plain functions on plain arrays, one function a step, no graph types.
//
// The forward pass that feeds this (done elsewhere) runs the decoder once, teacher-forced, on
//     [sot_sequence..., <|notimestamps|>, text tokens..., <|endoftext|>]          (n_tokens rows)
// and keeps, for each alignment head (decode/alignment_heads.h), the cross-attention logits
// QK = (q . k) / sqrt(d_head) BEFORE the softmax, for every token row over the audio positions
// (n_audio_ctx = 1500 columns). Softmax is taken here, after cutting the columns to the positions
// that hold real audio, exactly as the reference does. From those:
//   1. keep_frames_and_softmax: columns [0, n_mel_frames / 2); softmax of (qk * qk_scale) per row.
//   2. standardize_tokens: per head and column, (w - mean) / std over the token rows (population
//      std, torch.std_mean(..., dim=-2, unbiased=False)).
//   3. median_filter_frames: median of width 7 along the columns, reflect-padded (torch's
//      "reflect": the edge is not repeated, x[-1] = x[1]); rows of <= width/2 columns unfiltered.
//   4. mean_over_heads: the [n_tokens][n_frames] average of the heads.
//   5. rows [n_sot, n_tokens - 1): drops the sot sequence and <|endoftext|>, keeps <|notimestamps|>
//      (row k is the decoder position that PREDICTS text token k: the input at k is the token
//      before it) and every text token's row.
//   6. dtw(-matrix): the cheapest monotone path, as dtw_cpu + backtrace.
//   7. word_timings: words from split_to_word_tokens(text + [eot]); a word starts at the frame
//      where the path first enters the row of its first token, ends where it enters the row of the
//      next word's first token; frames / 50 = seconds; probability = mean of its tokens'.
// Then add_word_timestamps: merge_punctuations and the duration clipping, per segment.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hark::decode {

// One [n_tokens][n_frames] matrix per head, frames innermost: value (h, t, f) is at
// data[(h * n_tokens + t) * n_frames + f].
struct HeadWeights {
  int n_heads = 0;
  int n_tokens = 0;
  int n_frames = 0;
  std::vector<float> data;

  HeadWeights() = default;
  HeadWeights(int heads, int tokens, int frames)
      : n_heads(heads),
        n_tokens(tokens),
        n_frames(frames),
        data(static_cast<size_t>(heads) * static_cast<size_t>(tokens) * static_cast<size_t>(frames), 0.0f) {}
  float& at(int h, int t, int f) { return data[index(h, t, f)]; }
  float at(int h, int t, int f) const { return data[index(h, t, f)]; }
  size_t index(int h, int t, int f) const {
    return (static_cast<size_t>(h) * static_cast<size_t>(n_tokens) + static_cast<size_t>(t)) *
               static_cast<size_t>(n_frames) +
           static_cast<size_t>(f);
  }
};

// Row-major [rows][cols].
struct Matrix {
  int rows = 0;
  int cols = 0;
  std::vector<float> data;

  Matrix() = default;
  Matrix(int r, int c) : rows(r), cols(c), data(static_cast<size_t>(r) * static_cast<size_t>(c), 0.0f) {}
  float& at(int r, int c) { return data[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)]; }
  float at(int r, int c) const {
    return data[static_cast<size_t>(r) * static_cast<size_t>(cols) + static_cast<size_t>(c)];
  }
};

// Audio positions (encoder outputs) per second and per mel frame: the encoder halves the 100 mel
// frames a second, so a path column is 20 ms (TOKENS_PER_SECOND = 50 in the reference).
inline constexpr double kAlignFramesPerSecond = 50.0;

// ---- steps 1-6 ----------------------------------------------------------------------------------

// Step 1. Keeps columns [0, n_keep) of every row (n_keep is clamped to qk.n_frames) and turns each
// row of qk * qk_scale into probabilities with a softmax over those columns only.
HeadWeights keep_frames_and_softmax(const HeadWeights& qk, int n_keep, float qk_scale = 1.0f);
// Step 1 for a graph that hands out attention probabilities (a softmax over all n_audio_ctx
// positions) instead of logits: keeps columns [0, n_keep) and rescales each row to sum to 1, which
// is the same softmax over the kept columns (for qk_scale 1), up to rounding.
HeadWeights keep_frames_and_renormalize(const HeadWeights& probs, int n_keep);

// Step 2. For each head and column: subtracts the mean over the token rows and divides by their
// population standard deviation. A column whose rows are all equal divides by zero, as the
// reference does (NaN/inf); real attention over several tokens never does.
void standardize_tokens(HeadWeights& w);

// Step 3, on one row: out[f] = median of in[f - width/2 .. f + width/2], indices outside the row
// reflected about its ends without repeating them. width must be odd and positive (hark::Error
// otherwise); a row of <= width/2 values is copied unchanged (the reference returns early because
// torch's reflect padding needs pad < length).
void median_filter_row(std::span<const float> in, std::span<float> out, int width);
// Step 3 on every row of every head.
void median_filter_frames(HeadWeights& w, int width);

// Step 4. The element-wise mean of the heads: [n_tokens][n_frames].
Matrix mean_over_heads(const HeadWeights& w);

// Step 5. Rows [first, end) of m.
Matrix rows_between(const Matrix& m, int first, int end);

// Steps 1-5 together: the matrix whose negation goes to dtw. n_mel_frames: the mel frames of the
// window that hold real audio (<= 3000); the audio positions kept are n_mel_frames / 2.
// n_sot: length of the sot sequence (sot [, language, task]); qk.n_tokens must be at least
// n_sot + 2. The result has qk.n_tokens - n_sot - 1 rows: <|notimestamps|> and the text tokens.
struct AlignmentOptions {
  int medfilt_width = 7;
  float qk_scale = 1.0f;
  // The input holds probabilities (softmax over all positions), not logits: step 1 renormalizes
  // instead (keep_frames_and_renormalize); qk_scale must then be 1.
  bool input_is_softmax = false;
};
Matrix alignment_matrix(const HeadWeights& qk, int n_mel_frames, int n_sot, const AlignmentOptions& opt = {});

// ---- step 6: DTW ----------------------------------------------------------------------------------

// The cost and trace tables of dtw_cpu, (N + 1) x (M + 1) each, row-major with M + 1 columns.
// cost[0][0] = 0, the rest of row 0 and column 0 = +inf; for i, j >= 1, from the three
// predecessors c0 = cost[i-1][j-1] (diagonal), c1 = cost[i-1][j] (next token, same frame),
// c2 = cost[i][j-1] (same token, next frame):
//   c0 < c1 && c0 < c2 -> trace 0, c = c0
//   else c1 < c0 && c1 < c2 -> trace 1, c = c1
//   else -> trace 2, c = c2   (every tie, even c0 == c1 < c2, lands here and takes c2)
// cost[i][j] = x[i-1][j-1] + c, stored as f32 (the reference's cost array is float32; the sum of
// two floats rounded once to f32 is what the double sum stored into it gives). trace is -1 where
// unset; the backtrace overrides row 0 with 2 and column 0 with 1 (backtrace() does that).
struct DtwTables {
  int rows = 0;  // N + 1
  int cols = 0;  // M + 1
  std::vector<float> cost;
  std::vector<int8_t> trace;
};
DtwTables dtw_tables(const Matrix& x);

// The path as two equally long index lists, from (0, 0) to (N - 1, M - 1), in path order.
struct AlignmentPath {
  std::vector<int32_t> text_indices;  // row of x (token)
  std::vector<int32_t> time_indices;  // column of x (audio position, 20 ms each)
};
// Walks the trace back from (N, M) to (0, 0) (trace row 0 set to 2, column 0 to 1 first), noting
// (i - 1, j - 1) before each move: 0 -> both back, 1 -> token back, 2 -> frame back.
AlignmentPath backtrace(DtwTables tables);
// dtw_cpu(x): backtrace(dtw_tables(x)). x must have at least one row and one column.
AlignmentPath dtw(const Matrix& x);

// ---- step 7: words -----------------------------------------------------------------------------

// Bytes of a token: an ordinary token's bytes, a special token's name (any ASCII text).
using TokenBytes = std::function<std::string_view(int32_t)>;

struct WordSplit {
  std::vector<std::string> words;            // UTF-8 text, invalid bytes as U+FFFD
  std::vector<std::vector<int32_t>> tokens;  // the tokens of each word
};

// split_tokens_on_unicode: cuts after every token at which the tokens so far decode without an
// incomplete character (a U+FFFD that is not also in the decode of all the tokens at that place).
WordSplit split_tokens_on_unicode(std::span<const int32_t> tokens, const TokenBytes& bytes);
// split_tokens_on_spaces: the unicode pieces above joined into words; a piece starts a new word
// when its first token is special (>= eot), it starts with a space, its text with Python's
// whitespace stripped is a substring of string.punctuation (so also when it is only whitespace),
// or it is the first piece.
WordSplit split_tokens_on_spaces(std::span<const int32_t> tokens, const TokenBytes& bytes, int32_t eot);
// True for the languages the reference splits on unicode: zh, ja, th, lo, my, yue.
bool splits_on_unicode(std::string_view language);
WordSplit split_to_word_tokens(std::span<const int32_t> tokens, const TokenBytes& bytes, int32_t eot,
                               std::string_view language);

struct WordTiming {
  std::string word;
  std::vector<int32_t> tokens;
  double start = 0.0;  // seconds from the start of the window
  double end = 0.0;
  double probability = 0.0;  // mean of the word's token probabilities
};

// find_alignment's last part. split: split_to_word_tokens(text tokens + [eot]); path: dtw over
// the n_text + 1 rows of alignment_matrix; text_token_probs: one per text token. Every word but
// the last (the eot) gets a timing. Empty when split holds fewer than two words.
std::vector<WordTiming> word_timings(const WordSplit& split, const AlignmentPath& path,
                                     std::span<const float> text_token_probs);

// The probability of each text token, as find_alignment computes it: a softmax over the ordinary
// tokens only (ids < eot) of the logits row that predicted it. logits: row i (n_vocab values) is
// the output at decoder position n_sot + i, i.e. the row predicting text_tokens[i].
std::vector<float> text_token_probs(std::span<const float> logits, int n_vocab, int32_t eot,
                                    std::span<const int32_t> text_tokens);

// Everything of find_alignment after the forward pass: [] when there are no text tokens or no
// audio positions. qk: the heads' pre-softmax cross-attention logits over the sequence
// [sot_sequence (n_sot), notimestamps, text_tokens, eot]. Throws hark::Error on inconsistent sizes.
std::vector<WordTiming> find_alignment(const HeadWeights& qk, int n_mel_frames, int n_sot,
                                       std::span<const int32_t> text_tokens, std::span<const float> text_token_probs,
                                       const TokenBytes& bytes, int32_t eot, std::string_view language,
                                       const AlignmentOptions& opt = {});

// ---- add_word_timestamps ---------------------------------------------------------------------------

// The reference's defaults (timing.py: add_word_timestamps' keyword defaults), as UTF-8.
inline constexpr std::string_view kPrependPunctuations = "\"'\u201c\u00bf([{-";
inline constexpr std::string_view kAppendPunctuations = "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001";

// merge_punctuations: a word that starts with a space and whose stripped text is a substring of
// `prepended` is moved (text and tokens) to the front of the next non-emptied word, going from
// the end; then a word whose whole text is a substring of `appended` is moved to the end of the
// previous word that does not end in a space, going from the start. Moved words are left with ""
// and no tokens (they stay in the list); times and probabilities never move.
void merge_punctuations(std::vector<WordTiming>& alignment, std::string_view prepended, std::string_view appended);

struct SegmentWord {
  std::string word;
  double start = 0.0;  // seconds, absolute
  double end = 0.0;
  double probability = 0.0;
};

struct SegmentForWords {
  double start = 0.0;  // seconds, absolute; updated from the words
  double end = 0.0;
  std::vector<int32_t> text_tokens;  // the segment's tokens below eot (no timestamps)
  std::vector<SegmentWord> words;    // filled by add_word_timestamps
};

// add_word_timestamps after find_alignment: `alignment` is find_alignment over all the window's
// segments' text tokens, concatenated in order. time_offset: the window's start in seconds.
// last_speech_timestamp: the end of the last word before this window (seconds). Rules, in order:
//  - median word duration over the non-zero durations, capped at 0.7 s; max = 2 x median.
//  - a word longer than max is clipped to max at sentence ends: a word that is itself a sentence
//    mark (".。!！?？", substring test) keeps its start; a word after one keeps its end (the model
//    tends to stretch the word next to a pause over the silence).
//  - merge_punctuations(prepend, append).
//  - the words go to their segments by token count; start/end are rounded to 0.01 s after adding
//    time_offset, words emptied by merging are dropped.
//  - per segment, after a pause (first word ends more than 4 x median after the last speech) a
//    first word longer than max, or a first two words spanning more than 2 x max, are pulled in:
//    if the second word is longer than max, the two meet at max(its end / 2, its end - max);
//    the first word then starts at most max before its end (a word after silence absorbs it).
//  - the segment's own start is preferred when the first word starts more than 0.5 s before it
//    (and the segment starts before the first word ends): the word then starts at
//    max(0, min(word end - median, segment start)); otherwise the segment starts at the first
//    word. Likewise at the end: the segment's end is kept when the last word ends more than 0.5 s
//    after it (and the segment ends after the last word starts), the word then ends at
//    max(word start + median, segment end); otherwise the segment ends at the last word.
void add_word_timestamps(std::span<SegmentForWords> segments, std::vector<WordTiming> alignment, double time_offset,
                         double last_speech_timestamp, std::string_view prepend_punctuations = kPrependPunctuations,
                         std::string_view append_punctuations = kAppendPunctuations);

// Python's round(x, 2): the double nearest to x rounded to 2 decimals, ties to even on the exact
// binary value (what Python's correctly rounded decimal conversion gives).
double round2(double x);

}  // namespace hark::decode
