#include "decode/suppress.h"

#include <algorithm>
#include <string>
#include <string_view>

namespace hark::decode {

namespace {

// Single characters, then multi-character sequences (space separated).
constexpr std::string_view kSymbolChars = "\"#()*+/:;<=>@[\\]^_`{|}~";
constexpr std::string_view kSymbolStrings[] = {"「",  "」",  "『", "』", "<<", ">>",  "<<<", ">>>",
                                               "--",  "---", "-(", "-[", "('", "(\"", "((",  "))",
                                               "(((", ")))", "[[", "]]", "{{", "}}",  "♪♪",  "♪♪♪"};
// Music and notation characters: suppressed by their first token even when they take several.
constexpr std::string_view kMusic[] = {"♩", "♪", "♫", "♬", "♭", "♮", "♯"};

void add_first_token(const Tokenizer& tok, std::string_view s, std::vector<int32_t>* out) {
  const std::vector<int32_t> ids = tok.encode(s);
  if (ids.empty()) return;
  // OpenAI's BPE merges the space into the symbol's first byte (" \xe2"); ggml files lose such
  // partial-UTF-8 tokens, so the encoding here can start with the bare space instead, and
  // suppressing that would ban " " everywhere. Only a token that carries the symbol counts.
  if (s.size() > 1 && s[0] == ' ' && tok.token_bytes(ids[0]) == " ") return;
  out->push_back(ids[0]);
}

std::string with_space(std::string_view s) {
  std::string r(1, ' ');
  r.append(s);
  return r;
}

}  // namespace

std::vector<int32_t> non_speech_tokens(const Tokenizer& tok) {
  std::vector<std::string> symbols;
  for (char c : kSymbolChars) symbols.emplace_back(1, c);
  for (std::string_view s : kSymbolStrings) symbols.emplace_back(s);

  std::vector<int32_t> ids;
  for (const std::string& s : symbols)
    for (const std::string& variant : {s, with_space(s)}) {
      const int32_t id = tok.find(variant);  // only when the symbol is one whole token
      if (id >= 0) ids.push_back(id);
    }
  for (std::string_view m : kMusic) {
    add_first_token(tok, m, &ids);
    add_first_token(tok, with_space(m), &ids);
  }
  add_first_token(tok, " -", &ids);
  add_first_token(tok, " '", &ids);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<int32_t> blank_tokens(const Tokenizer& tok) {
  std::vector<int32_t> ids;
  const int32_t space = tok.find(" ");
  if (space >= 0) ids.push_back(space);
  ids.push_back(tok.special().eot);
  return ids;
}

}  // namespace hark::decode
