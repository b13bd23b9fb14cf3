#include "model/tokenizer.h"

#include <algorithm>
#include <cstdio>

#include <unicode/uchar.h>

#include "runtime/error.h"

namespace hark {

// ---- UTF-8 -------------------------------------------------------------------------------------

namespace {

// Length of the character a lead byte starts, or 0 when no valid character starts with it
// (continuation bytes 80..BF, overlong leads C0/C1, and F5..FF, beyond U+10FFFF).
int utf8_length(uint8_t b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

// Whether `b` may follow `lead` as its first continuation byte. The narrower ranges after E0, ED,
// F0 and F4 are what rule out overlong forms, UTF-16 surrogates and code points past U+10FFFF.
bool valid_second(uint8_t lead, uint8_t b) {
  switch (lead) {
    case 0xE0: return b >= 0xA0 && b <= 0xBF;
    case 0xED: return b >= 0x80 && b <= 0x9F;
    case 0xF0: return b >= 0x90 && b <= 0xBF;
    case 0xF4: return b >= 0x80 && b <= 0x8F;
    default: return b >= 0x80 && b <= 0xBF;
  }
}

}  // namespace

void Utf8Assembler::push_byte(uint8_t b, std::string* out) {
  if (n_pending_ > 0) {
    const bool ok = n_pending_ == 1 ? valid_second(pending_[0], b) : (b >= 0x80 && b <= 0xBF);
    if (ok) {
      pending_[n_pending_++] = b;
      if (n_pending_ == need_) {
        out->append(reinterpret_cast<const char*>(pending_), static_cast<size_t>(n_pending_));
        n_pending_ = 0;
      }
      return;
    }
    // The held bytes were a valid start that went nowhere: one U+FFFD for all of them, and `b`
    // is looked at afresh (it may start the next character).
    out->append(kReplacementChar);
    n_pending_ = 0;
  }
  const int len = utf8_length(b);
  if (len == 1) {
    out->push_back(static_cast<char>(b));
  } else if (len == 0) {
    out->append(kReplacementChar);
  } else {
    pending_[0] = b;
    n_pending_ = 1;
    need_ = len;
  }
}

void Utf8Assembler::push(std::string_view bytes, std::string* out) {
  for (char c : bytes) push_byte(static_cast<uint8_t>(c), out);
}

void Utf8Assembler::flush(std::string* out) {
  if (n_pending_ > 0) out->append(kReplacementChar);
  n_pending_ = 0;
}

std::string sanitize_utf8(std::string_view bytes) {
  Utf8Assembler a;
  std::string out;
  out.reserve(bytes.size());
  a.push(bytes, &out);
  a.flush(&out);
  return out;
}

// ---- GPT-2 pre-tokenization ----------------------------------------------------------------------

namespace {

enum class CharClass { Letter, Number, Space, Other };

struct Char {
  CharClass cls;
  size_t len;  // bytes
};

// The character at text[i]: a valid UTF-8 sequence, or one byte (class Other) where none starts.
Char char_at(std::string_view text, size_t i) {
  const uint8_t b = static_cast<uint8_t>(text[i]);
  if (b < 0x80) {
    // ASCII without ICU: letters, digits, and White_Space (\t \n \v \f \r and space).
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')) return {CharClass::Letter, 1};
    if (b >= '0' && b <= '9') return {CharClass::Number, 1};
    if (b == ' ' || (b >= 0x09 && b <= 0x0D)) return {CharClass::Space, 1};
    return {CharClass::Other, 1};
  }
  const int len = utf8_length(b);
  if (len == 0 || i + static_cast<size_t>(len) > text.size()) return {CharClass::Other, 1};
  UChar32 cp = b & (0xFF >> (len + 1));
  for (int k = 1; k < len; ++k) {
    const uint8_t c = static_cast<uint8_t>(text[i + static_cast<size_t>(k)]);
    if (k == 1 ? !valid_second(b, c) : (c < 0x80 || c > 0xBF)) return {CharClass::Other, 1};
    cp = (cp << 6) | (c & 0x3F);
  }
  const size_t n = static_cast<size_t>(len);
  const uint32_t gc = U_MASK(u_charType(cp));
  if (gc & U_GC_L_MASK) return {CharClass::Letter, n};
  if (gc & U_GC_N_MASK) return {CharClass::Number, n};
  if (u_isUWhiteSpace(cp)) return {CharClass::Space, n};
  return {CharClass::Other, n};
}

// Length of the contraction ('s 't 're 've 'm 'll 'd, lower case only) at the start of `rest`, or 0.
size_t contraction(std::string_view rest) {
  if (rest.size() < 2 || rest[0] != '\'') return 0;
  for (std::string_view c : {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"})
    if (rest.starts_with(c)) return c.size();
  return 0;
}

}  // namespace

void pretokenize(std::string_view text, std::vector<std::string_view>* out) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    size_t end;
    const Char c = char_at(text, i);
    if (const size_t k = contraction(text.substr(i)); k > 0) {
      end = i + k;  // 's|'t|'re|'ve|'m|'ll|'d
    } else if (c.cls != CharClass::Space ||
               (text[i] == ' ' && i + 1 < n && char_at(text, i + 1).cls != CharClass::Space)) {
      // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional space, then a run of one class.
      size_t j = c.cls == CharClass::Space ? i + 1 : i;
      const CharClass run = char_at(text, j).cls;
      while (j < n) {
        const Char d = char_at(text, j);
        if (d.cls != run) break;
        j += d.len;
      }
      end = j;
    } else {
      // Whitespace. '\s+(?!\S)': the run, less its last character when text follows (that one
      // goes with the word after it); '\s+' when that would leave nothing (a single space).
      size_t j = i, last = i;
      while (j < n) {
        const Char d = char_at(text, j);
        if (d.cls != CharClass::Space) break;
        last = j;
        j += d.len;
      }
      end = (j < n && last > i) ? last : j;
    }
    out->push_back(text.substr(i, end - i));
    i = end;
  }
}

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> out;
  pretokenize(text, &out);
  return out;
}

// ---- Tokenizer ---------------------------------------------------------------------------------

namespace {

// The byte each of the first 256 ids of a GPT-2 byte-level vocabulary stands for: the bytes GPT-2
// maps to printable characters of their own ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) come first, in
// increasing order, then the remaining 68 bytes, also in increasing order.
std::array<uint8_t, 256> gpt2_byte_order() {
  std::array<uint8_t, 256> order{};
  auto printable = [](int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE); };
  size_t n = 0;
  for (int b = 0; b < 256; ++b)
    if (printable(b)) order[n++] = static_cast<uint8_t>(b);
  for (int b = 0; b < 256; ++b)
    if (!printable(b)) order[n++] = static_cast<uint8_t>(b);
  return order;
}

}  // namespace

Tokenizer::Tokenizer(const Vocab& vocab) : vocab_(&vocab) {
  n_text_ = std::min(vocab.special().eot, vocab.n_file_tokens());

  // Repair the byte tokens when the file wrote U+FFFD for the bytes >= 0x80 (see tokenizer.h).
  if (n_text_ >= 256) {
    const std::array<uint8_t, 256> order = gpt2_byte_order();
    bool gpt2_order = true;
    int lost = 0;
    for (int32_t id = 0; id < 256 && gpt2_order; ++id) {
      const std::string_view t = vocab.text(id);
      const char byte = static_cast<char>(order[static_cast<size_t>(id)]);
      if (t.size() == 1 && t[0] == byte) continue;
      if (order[static_cast<size_t>(id)] >= 0x80 && t == kReplacementChar) {
        ++lost;
        continue;
      }
      gpt2_order = false;
    }
    if (gpt2_order && lost > 0) {
      repaired_ = true;
      for (size_t i = 0; i < 256; ++i) byte_of_id_[i] = static_cast<char>(order[i]);
    }
  }

  byte_token_.fill(-1);
  ranks_.reserve(static_cast<size_t>(n_text_) + static_cast<size_t>(n_text_) / 8);
  for (int32_t id = 0; id < n_text_; ++id) {
    const std::string_view t = token_bytes(id);
    if (t.empty()) continue;  // multilingual files store an empty token at 50256
    // In a repaired vocabulary, a longer token holding U+FFFD stands for bytes that were lost.
    if (repaired_ && id >= 256 && t.find(kReplacementChar) != std::string_view::npos) continue;
    // Several ids may share bytes (the U+FFFD placeholders); the lowest one wins.
    if (!ranks_.emplace(t, kRankStep * id).second) continue;
    if (t.size() == 1) byte_token_[static_cast<uint8_t>(t[0])] = id;
    max_len_ = std::max(max_len_, t.size());
  }

  // Bridges: a token that no two lower-ranked known tokens make was built from a lost one.
  for (int32_t id = 0; id < n_text_; ++id) {
    const std::string_view t = token_bytes(id);
    if (t.size() < 2 || rank_of(t) != kRankStep * id) continue;  // skipped above, or a duplicate
    add_bridges(t, kRankStep * id, 1);
  }
}

namespace {

// Whether `bytes` is all whole, valid UTF-8 characters.
bool is_valid_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const uint8_t b = static_cast<uint8_t>(bytes[i]);
    const int len = utf8_length(b);
    if (len == 0 || i + static_cast<size_t>(len) > bytes.size()) return false;
    for (int k = 1; k < len; ++k) {
      const uint8_t c = static_cast<uint8_t>(bytes[i + static_cast<size_t>(k)]);
      if (k == 1 ? !valid_second(b, c) : (c < 0x80 || c > 0xBF)) return false;
    }
    i += static_cast<size_t>(len);
  }
  return true;
}

}  // namespace

// Makes `bytes` reachable by merges ranked below `below`: when no split of it has both halves
// ranked below, each half that is an unknown piece of a character (never valid UTF-8 alone, so a
// lost token) becomes a bridge ranked just under `below`, and is made reachable in turn.
void Tokenizer::add_bridges(std::string_view bytes, int64_t below, int depth) {
  for (size_t k = 1; k < bytes.size(); ++k)
    if (rank_of(bytes.substr(0, k)) < below && rank_of(bytes.substr(k)) < below) return;
  if (depth >= kRankStep) return;  // deeper than any character's pieces: leave it
  const int64_t rank = below - 1;
  for (size_t k = 1; k < bytes.size(); ++k) {
    const std::string_view halves[2] = {bytes.substr(0, k), bytes.substr(k)};
    for (int side = 0; side < 2; ++side) {
      const std::string_view missing = halves[side], other = halves[1 - side];
      if (rank_of(other) >= below || missing.size() < 2 || is_valid_utf8(missing)) continue;
      const auto tok = ranks_.find(missing);
      if (tok != ranks_.end() && tok->second % kRankStep == 0) continue;  // a real token, ranked higher
      auto [it, added] = bridges_.try_emplace(std::string(missing), rank);
      if (!added && it->second <= rank) continue;
      it->second = rank;
      ranks_[std::string_view(it->first)] = rank;
      add_bridges(it->first, rank, depth + 1);
    }
  }
}

int32_t Tokenizer::find(std::string_view bytes) const {
  const auto it = ranks_.find(bytes);
  if (it == ranks_.end() || it->second % kRankStep != 0) return -1;
  return static_cast<int32_t>(it->second / kRankStep);
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  HARK_CHECK(id >= 0 && id < vocab_->size(), "token id " + std::to_string(id) + " outside the vocabulary of " +
                                                 std::to_string(vocab_->size()) + " tokens");
  if (repaired_ && id < 256) return std::string_view(&byte_of_id_[static_cast<size_t>(id)], 1);
  return vocab_->text(id);
}

void Tokenizer::merge_piece(std::string_view piece, bool use_bridges, std::vector<int32_t>* ids) const {
  if (piece.empty()) return;
  if (piece.size() == 1) {
    ids->push_back(byte_token_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  // A piece that is a token is taken whole (as tiktoken does).
  if (const int32_t id = find(piece); id >= 0) {
    ids->push_back(id);
    return;
  }
  // Parts start at start[i] and end at start[i + 1]; rank[i] is that of parts i and i+1 merged.
  // Each round merges the lowest-ranked pair (the leftmost of equals); only the ranks beside the
  // merge change. Quadratic in the piece's length, which for text is a word.
  const size_t n = piece.size();
  std::vector<size_t> start(n + 1);
  for (size_t i = 0; i <= n; ++i) start[i] = i;
  auto pair_rank = [&](size_t i) {  // parts i and i+1; needs i + 2 < start.size()
    const int64_t r = rank_of(piece.substr(start[i], start[i + 2] - start[i]));
    return use_bridges || r % kRankStep == 0 ? r : kNoRank;
  };
  std::vector<int64_t> rank(n - 1);
  for (size_t i = 0; i + 1 < n; ++i) rank[i] = pair_rank(i);
  while (!rank.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < rank.size(); ++i)
      if (rank[i] < rank[best]) best = i;
    if (rank[best] == kNoRank) break;
    start.erase(start.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    rank.erase(rank.begin() + static_cast<std::ptrdiff_t>(best));
    if (best < rank.size()) rank[best] = pair_rank(best);
    if (best > 0) rank[best - 1] = pair_rank(best - 1);
  }
  for (size_t i = 0; i + 1 < start.size(); ++i) {
    const std::string_view part = piece.substr(start[i], start[i + 1] - start[i]);
    if (const int32_t id = find(part); id >= 0 || part.size() == 1) {
      ids->push_back(part.size() == 1 ? byte_token_[static_cast<uint8_t>(part[0])] : id);
    } else {
      merge_piece(part, /*use_bridges=*/false, ids);  // a bridge whose token was lost: its bytes' tokens
    }
  }
}

void Tokenizer::check_bytes(std::string_view text) const {
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (byte_token_[static_cast<uint8_t>(text[pos])] >= 0) continue;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[pos])));
    throw Error("tokenizer: byte " + std::string(hex) + " at offset " + std::to_string(pos) +
                " of the text has no token in this vocabulary (" + std::to_string(n_text_) + " ordinary tokens)");
  }
}

void Tokenizer::encode_piece(std::string_view piece, std::vector<int32_t>* ids) const {
  check_bytes(piece);
  merge_piece(piece, /*use_bridges=*/true, ids);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  check_bytes(text);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  std::vector<std::string_view> pieces;
  pretokenize(text, &pieces);
  for (std::string_view piece : pieces) merge_piece(piece, /*use_bridges=*/true, &ids);
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  Utf8Assembler utf8;
  std::string out;
  for (int32_t id : ids) {
    const std::string_view bytes = token_bytes(id);  // checks the range
    if (is_text(id)) utf8.push(bytes, &out);
  }
  utf8.flush(&out);
  return out;
}

std::string TextDecoder::push(int32_t id) {
  const std::string_view bytes = tok_->token_bytes(id);
  if (!tok_->is_text(id)) return {};
  return utf8_.push(bytes);
}

}  // namespace hark
