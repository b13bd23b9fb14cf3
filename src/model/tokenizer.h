// Tokenizer: text <-> Whisper token ids over a model file's vocabulary (model/vocab.h).
//
// What the vocabulary in a model file holds (checked on ../shared/model-headers, both tiny and
// tiny.en): ordinary tokens are stored as plain UTF-8 bytes with real spaces (" Hello", not GPT-2's
// byte-to-unicode form "ĠHello"). Ids 0..255 are the 256 single-byte tokens in GPT-2's byte order
// ('!'..'~', then 0xA1..0xAC, 0xAE..0xFF, then 0x00..0x20, 0x7F..0xA0, 0xAD). But every token that
// was not valid UTF-8 on its own — the 128 bytes >= 0x80, and merged pieces of a multi-byte
// character such as E2 80 — was written as U+FFFD (EF BF BD): 255 such tokens in tiny.en, 574 in
// tiny. Files converted straight from the tiktoken ranks keep the raw bytes instead.
//
// So the tokenizer repairs what it can: when ids 0..255 match GPT-2's byte order (each is its byte,
// or U+FFFD where its byte is >= 0x80), id i is taken to be byte order[i]. Every byte can then be
// encoded, and decoding a character split into byte tokens gives it back. The other U+FFFD tokens
// stand for bytes that are lost; they decode as U+FFFD and are never produced by encode (a U+FFFD
// in the text is encoded as its three byte tokens, which is what it is).
//
// encode() works as OpenAI's tiktoken does for Whisper: the text is cut into pre-tokens by GPT-2's
// pattern (see pretokenize below; Whisper's English and multilingual encodings both use it), and
// each pre-token's bytes are merged pairwise by byte-pair encoding whose ranks are the token ids
// (lowest id first; a pre-token that is itself a token is taken whole). Special tokens are never
// produced from text.
//
// A token lost to U+FFFD (above) still matters to encode as a step on the way: tiktoken reaches
// "中" (E4 B8 AD, id 5975 in tiny) through the lost E4 B8. Where a token cannot be built from two
// lower-ranked known tokens, its missing halves become "bridges": merge steps without an id,
// ranked just below the token they lead to. So every known token is reached as tiktoken reaches
// it; a bridge left over at the end (its token was lost, e.g. E5 AE of 宇, which tiktoken writes
// as [2415, 229]) is written as its bytes' own tokens. Files with raw bytes have no bridges, and
// there encode() gives exactly tiktoken's ids.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/vocab.h"

namespace hark {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Utf8Assembler: bytes in, in pieces of any size; complete, valid UTF-8 out. A character whose
// bytes are split over pieces (a token ending inside a character) is held back until the piece
// that completes it arrives. Invalid bytes become U+FFFD: one per maximal prefix of a valid
// sequence, one per other bad byte (the Unicode-recommended practice), so the output is the same
// however the input is cut into pieces.
class Utf8Assembler {
 public:
  // Appends the complete characters that `bytes` yields (after any held bytes) to *out.
  void push(std::string_view bytes, std::string* out);
  std::string push(std::string_view bytes) {
    std::string out;
    push(bytes, &out);
    return out;
  }
  // Ends the stream: a character still incomplete becomes U+FFFD.
  void flush(std::string* out);
  std::string flush() {
    std::string out;
    flush(&out);
    return out;
  }
  bool has_pending() const { return n_pending_ > 0; }
  void reset() { n_pending_ = 0; }

 private:
  void push_byte(uint8_t b, std::string* out);
  uint8_t pending_[4] = {};
  int n_pending_ = 0;  // bytes held: a valid prefix of a multi-byte character
  int need_ = 0;       // the full length of that character
};

// Replaces invalid UTF-8 in `bytes` (a whole string, so a trailing partial is invalid too).
std::string sanitize_utf8(std::string_view bytes);

// GPT-2's pre-tokenization, the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as a scanner over code points (letters = general category L*, numbers = N*, \s = White_Space,
// from ICU). Appends the pieces of `text`, in order, to *out; together they are all of `text`. A
// byte that is not part of valid UTF-8 counts as one character that is neither letter, number nor
// space, so any bytes are cut and encoded.
void pretokenize(std::string_view text, std::vector<std::string_view>* out);
std::vector<std::string_view> pretokenize(std::string_view text);

class Tokenizer {
 public:
  // Indexes the vocabulary's ordinary tokens. `vocab` must outlive the tokenizer.
  explicit Tokenizer(const Vocab& vocab);
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  const Vocab& vocab() const { return *vocab_; }
  const SpecialTokens& special() const { return vocab_->special(); }

  // Ordinary token ids for `text` (any bytes; need not be valid UTF-8): pre-tokens, then byte-pair
  // merges ranked by token id (see the top of this file). Throws hark::Error naming the byte
  // offset of a byte that has no token of its own (only in vocabularies without the 256 bytes).
  std::vector<int32_t> encode(std::string_view text) const;
  // The byte-pair merges of one piece alone (no pre-tokenization), appended to *ids.
  void encode_piece(std::string_view piece, std::vector<int32_t>* ids) const;

  // The bytes token `id` stands for: an ordinary token's bytes (repaired as above), or a special
  // token's name. Throws hark::Error for an id outside the vocabulary.
  std::string_view token_bytes(int32_t id) const;
  bool is_text(int32_t id) const { return id >= 0 && id < n_text_; }
  // The id of the ordinary token with exactly these bytes (the lowest, if several), or -1.
  int32_t find(std::string_view bytes) const;

  // Text of the ordinary tokens among `ids`, special tokens skipped, always valid UTF-8.
  // Throws hark::Error for an id outside the vocabulary.
  std::string decode(std::span<const int32_t> ids) const;

  // True when the byte tokens were recovered from U+FFFD placeholders (see the top of this file).
  bool repaired_byte_tokens() const { return repaired_; }
  size_t max_token_bytes() const { return max_len_; }
  // How many bridges (see the top of this file) the vocabulary needed: 0 when no token was lost.
  size_t n_bridges() const { return bridges_.size(); }

  // Merge ranks: a token's is kRankStep * id; a bridge's is a little below the rank of the token it
  // leads to (one less per level of nesting); kNoRank for bytes that merge into nothing.
  static constexpr int64_t kRankStep = 8;
  static constexpr int64_t kNoRank = INT64_MAX;
  int64_t merge_rank(std::string_view bytes) const { return rank_of(bytes); }

 private:
  int64_t rank_of(std::string_view bytes) const {
    const auto it = ranks_.find(bytes);
    return it == ranks_.end() ? kNoRank : it->second;
  }
  void add_bridges(std::string_view bytes, int64_t below, int depth);
  void check_bytes(std::string_view text) const;  // throws for a byte without a token
  void merge_piece(std::string_view piece, bool use_bridges, std::vector<int32_t>* ids) const;

  const Vocab* vocab_;
  int32_t n_text_ = 0;  // ids 0 .. n_text_-1 are ordinary tokens the file stores
  bool repaired_ = false;
  std::array<char, 256> byte_of_id_{};     // after repair: the byte of each id below 256
  std::array<int32_t, 256> byte_token_{};  // the token of each single byte, or -1
  size_t max_len_ = 0;
  // Bytes -> merge rank, for tokens (views into the vocabulary or byte_of_id_) and bridges (views
  // into the keys of bridges_, whose nodes never move).
  std::unordered_map<std::string_view, int64_t> ranks_;
  std::unordered_map<std::string, int64_t> bridges_;
};

// TextDecoder: token ids in, one at a time, as the decoder produces them; text out as soon as it
// forms whole characters. Special tokens (timestamps, language, ...) add no text.
class TextDecoder {
 public:
  explicit TextDecoder(const Tokenizer& tok) : tok_(&tok) {}
  // The text that is complete after token `id`; may be empty while a character is incomplete.
  std::string push(int32_t id);
  // Ends the text: an incomplete character becomes U+FFFD.
  std::string flush() { return utf8_.flush(); }
  bool has_pending() const { return utf8_.has_pending(); }
  void reset() { utf8_.reset(); }

 private:
  const Tokenizer* tok_;
  Utf8Assembler utf8_;
};

}  // namespace hark
