// Alignment-head presets and selection (see alignment_heads.h for where the pairs come from).
#include "decode/alignment_heads.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "runtime/error.h"

namespace hark::decode {

namespace {

using H = AlignmentHead;

// Published (layer, head) pairs. Decoded from OpenAI's _ALIGNMENT_HEADS masks and equal to
// whisper.cpp's g_aheads_* tables (both checked; see the header).
constexpr H kTinyEn[] = {{1, 0}, {2, 0}, {2, 5}, {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}};
constexpr H kTiny[] = {{2, 2}, {3, 0}, {3, 2}, {3, 3}, {3, 4}, {3, 5}};
constexpr H kBaseEn[] = {{3, 3}, {4, 7}, {5, 1}, {5, 5}, {5, 7}};
constexpr H kBase[] = {{3, 1}, {4, 2}, {4, 3}, {4, 7}, {5, 1}, {5, 2}, {5, 4}, {5, 6}};
constexpr H kSmallEn[] = {{6, 6},  {7, 0},  {7, 3},  {7, 8},  {8, 2},  {8, 5},  {8, 7},   {9, 0},  {9, 4}, {9, 8},
                          {9, 10}, {10, 0}, {10, 1}, {10, 2}, {10, 3}, {10, 6}, {10, 11}, {11, 2}, {11, 4}};
constexpr H kSmall[] = {{5, 3}, {5, 9}, {8, 0}, {8, 4}, {8, 7}, {8, 8}, {9, 0}, {9, 7}, {9, 9}, {10, 5}};
constexpr H kMediumEn[] = {{11, 4},  {14, 1}, {14, 12}, {14, 14}, {15, 4}, {16, 0}, {16, 4}, {16, 9},  {17, 12},
                           {17, 14}, {18, 7}, {18, 10}, {18, 15}, {20, 0}, {20, 3}, {20, 9}, {20, 14}, {21, 12}};
constexpr H kMedium[] = {{13, 15}, {15, 4}, {15, 15}, {16, 1}, {20, 0}, {23, 4}};
constexpr H kLargeV1[] = {{9, 19}, {11, 2}, {11, 4}, {11, 17}, {22, 7}, {22, 11}, {22, 17}, {23, 2}, {23, 15}};
constexpr H kLargeV2[] = {{10, 12}, {13, 17}, {16, 11}, {16, 12}, {16, 13}, {17, 15}, {17, 16}, {18, 4},
                          {18, 11}, {18, 19}, {19, 11}, {21, 2},  {21, 3},  {22, 3},  {22, 9},  {22, 12},
                          {23, 5},  {23, 7},  {23, 13}, {25, 5},  {26, 1},  {26, 12}, {27, 15}};
constexpr H kLargeV3[] = {{7, 0}, {10, 17}, {12, 18}, {13, 12}, {16, 1}, {17, 14}, {19, 11}, {21, 4}, {24, 1}, {25, 6}};
constexpr H kLargeV3Turbo[] = {{2, 4}, {2, 11}, {3, 3}, {3, 6}, {3, 11}, {3, 14}};

const std::array<AlignmentHeadsPreset, 12> kPresets = {{
    {"tiny.en", 4, 6, kTinyEn},
    {"tiny", 4, 6, kTiny},
    {"base.en", 6, 8, kBaseEn},
    {"base", 6, 8, kBase},
    {"small.en", 12, 12, kSmallEn},
    {"small", 12, 12, kSmall},
    {"medium.en", 24, 16, kMediumEn},
    {"medium", 24, 16, kMedium},
    {"large-v1", 32, 20, kLargeV1},
    {"large-v2", 32, 20, kLargeV2},
    {"large-v3", 32, 20, kLargeV3},
    {"large-v3-turbo", 4, 20, kLargeV3Turbo},
}};

std::string pair_text(const AlignmentHead& h) {
  return "(" + std::to_string(h.layer) + "," + std::to_string(h.head) + ")";
}

}  // namespace

std::span<const AlignmentHeadsPreset> alignment_heads_presets() { return kPresets; }

const AlignmentHeadsPreset& alignment_heads_preset(std::string_view name) {
  for (const auto& p : kPresets)
    if (p.name == name) return p;
  std::string known;
  for (const auto& p : kPresets) known += (known.empty() ? "" : ", ") + std::string(p.name);
  throw Error("alignment heads: unknown preset '" + std::string(name) + "' (known: " + known +
              "; or give the top N layers, or a list of layer,head pairs)");
}

std::vector<AlignmentHead> top_most_alignment_heads(int32_t n_top, int32_t n_text_layer, int32_t n_text_head) {
  HARK_CHECK(n_text_layer >= 1 && n_text_head >= 1, "alignment heads: the model has " + std::to_string(n_text_layer) +
                                                        " text layers of " + std::to_string(n_text_head) + " heads");
  HARK_CHECK(n_top >= 1 && n_top <= n_text_layer,
             "alignment heads: the number of top text layers must be between 1 and " + std::to_string(n_text_layer) +
                 " for this model, got " + std::to_string(n_top));
  std::vector<AlignmentHead> out;
  out.reserve(static_cast<size_t>(n_top) * static_cast<size_t>(n_text_head));
  for (int32_t l = n_text_layer - n_top; l < n_text_layer; ++l)
    for (int32_t h = 0; h < n_text_head; ++h) out.push_back({l, h});
  return out;
}

std::vector<AlignmentHead> checked_alignment_heads(std::span<const AlignmentHead> heads, int32_t n_text_layer,
                                                   int32_t n_text_head) {
  HARK_CHECK(!heads.empty(), "alignment heads: the list is empty; give at least one layer,head pair");
  for (const auto& h : heads) {
    HARK_CHECK(h.layer >= 0 && h.layer < n_text_layer, "alignment heads: pair " + pair_text(h) + " names text layer " +
                                                           std::to_string(h.layer) + ", but the model has layers 0.." +
                                                           std::to_string(n_text_layer - 1));
    HARK_CHECK(h.head >= 0 && h.head < n_text_head, "alignment heads: pair " + pair_text(h) + " names head " +
                                                        std::to_string(h.head) + ", but the model has heads 0.." +
                                                        std::to_string(n_text_head - 1));
  }
  std::vector<AlignmentHead> out(heads.begin(), heads.end());
  std::sort(out.begin(), out.end());
  const auto dup = std::adjacent_find(out.begin(), out.end());
  HARK_CHECK(dup == out.end(), "alignment heads: pair " + pair_text(*dup) + " is given twice");
  return out;
}

std::vector<AlignmentHead> parse_alignment_heads(std::string_view text) {
  std::vector<AlignmentHead> out;
  size_t pos = 0;
  auto is_sep = [](char c) { return c == ' ' || c == ';' || c == '\t' || c == '\n'; };
  auto bad = [&](const std::string& why) {
    return Error("alignment heads: cannot read '" + std::string(text) + "' as layer,head pairs (" + why +
                 " at offset " + std::to_string(pos) + "); example: \"2,4 2,11 3,3\"");
  };
  auto read_int = [&](int32_t* v) {
    const char* b = text.data() + pos;
    const char* e = text.data() + text.size();
    auto [p, ec] = std::from_chars(b, e, *v);
    if (ec != std::errc() || p == b) throw bad("expected a number");
    pos += static_cast<size_t>(p - b);
  };
  for (;;) {
    while (pos < text.size() && is_sep(text[pos])) ++pos;
    if (pos == text.size()) break;
    AlignmentHead h;
    read_int(&h.layer);
    if (pos == text.size() || text[pos] != ',') throw bad("expected ','");
    ++pos;
    read_int(&h.head);
    if (pos < text.size() && !is_sep(text[pos])) throw bad("unexpected character");
    out.push_back(h);
  }
  if (out.empty()) throw Error("alignment heads: the list '" + std::string(text) + "' holds no layer,head pair");
  return out;
}

std::vector<int32_t> alignment_heads_in_layer(std::span<const AlignmentHead> heads, int32_t layer) {
  std::vector<int32_t> out;
  for (const auto& h : heads)
    if (h.layer == layer) out.push_back(h.head);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hark::decode
