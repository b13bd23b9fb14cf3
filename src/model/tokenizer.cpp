#include "model/tokenizer.h"

#include <algorithm>
#include <cstdio>

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

  edges_.reserve(static_cast<size_t>(n_text_) * 3);
  for (int32_t id = 0; id < n_text_; ++id) {
    const std::string_view t = token_bytes(id);
    if (t.empty()) continue;  // multilingual files store an empty token at 50256
    // In a repaired vocabulary, a longer token holding U+FFFD stands for bytes that were lost.
    if (repaired_ && id >= 256 && t.find(kReplacementChar) != std::string_view::npos) continue;
    insert(t, id);
  }
}

int32_t Tokenizer::child(int32_t node, uint8_t b) const {
  const auto it = edges_.find(static_cast<uint64_t>(node) << 8 | b);
  return it == edges_.end() ? -1 : it->second;
}

void Tokenizer::insert(std::string_view bytes, int32_t id) {
  int32_t node = 0;
  for (char c : bytes) {
    const uint64_t key = static_cast<uint64_t>(node) << 8 | static_cast<uint8_t>(c);
    auto [it, added] = edges_.try_emplace(key, static_cast<int32_t>(node_token_.size()));
    if (added) node_token_.push_back(-1);
    node = it->second;
  }
  // Several ids may share bytes (the U+FFFD placeholders); the lowest one wins.
  if (node_token_[static_cast<size_t>(node)] < 0) node_token_[static_cast<size_t>(node)] = id;
  max_len_ = std::max(max_len_, bytes.size());
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  HARK_CHECK(id >= 0 && id < vocab_->size(), "token id " + std::to_string(id) + " outside the vocabulary of " +
                                                 std::to_string(vocab_->size()) + " tokens");
  if (repaired_ && id < 256) return std::string_view(&byte_of_id_[static_cast<size_t>(id)], 1);
  return vocab_->text(id);
}

int32_t Tokenizer::find(std::string_view bytes) const {
  if (bytes.empty()) return -1;
  int32_t node = 0;
  for (char c : bytes) {
    node = child(node, static_cast<uint8_t>(c));
    if (node < 0) return -1;
  }
  return node_token_[static_cast<size_t>(node)];
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    // Walk the trie as far as the text allows; the last token passed is the longest match.
    int32_t node = 0, best_id = -1;
    size_t best_len = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      node = child(node, static_cast<uint8_t>(text[i]));
      if (node < 0) break;
      if (const int32_t id = node_token_[static_cast<size_t>(node)]; id >= 0) {
        best_id = id;
        best_len = i + 1 - pos;
      }
    }
    if (best_id < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[pos])));
      throw Error("tokenizer: byte " + std::string(hex) + " at offset " + std::to_string(pos) +
                  " of the text has no token in this vocabulary (" + std::to_string(n_text_) +
                  " ordinary tokens)");
    }
    ids.push_back(best_id);
    pos += best_len;
  }
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
