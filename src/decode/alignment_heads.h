// Alignment heads: the decoder cross-attention heads whose attention follows the audio closely
// enough to time words by DTW (decode/alignment.h). Three ways to pick them, as whisper.cpp offers:
//   - a preset: the pairs OpenAI published for each official model (whisper/__init__.py,
//     _ALIGNMENT_HEADS, base85 + gzip boolean masks of shape [n_text_layer, n_text_head]). The
//     table below was checked two ways: the 12 masks were decoded (b85decode, gunzip, one byte a
//     head, row-major) and compared pair by pair with whisper.cpp's g_aheads_* tables; all agree.
//   - the top N text layers, every head in them (whisper.cpp's WHISPER_AHEADS_N_TOP_MOST);
//   - a custom list of (layer, head) pairs.
// Heads are returned sorted by (layer, head), the order OpenAI stacks them in
// (alignment_heads.indices() of a row-major sparse mask).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hark::decode {

struct AlignmentHead {
  int32_t layer = 0;  // text (decoder) layer, 0-based
  int32_t head = 0;   // head within that layer's cross-attention, 0-based
  friend bool operator==(const AlignmentHead&, const AlignmentHead&) = default;
  friend auto operator<=>(const AlignmentHead&, const AlignmentHead&) = default;
};

struct AlignmentHeadsPreset {
  std::string_view name;     // "tiny.en", "tiny", ..., "large-v3-turbo"
  int32_t n_text_layer = 0;  // the model's decoder shape the pairs are for
  int32_t n_text_head = 0;
  std::span<const AlignmentHead> heads;
};

// Every preset, in the order: tiny.en, tiny, base.en, base, small.en, small, medium.en, medium,
// large-v1, large-v2, large-v3, large-v3-turbo.
std::span<const AlignmentHeadsPreset> alignment_heads_presets();

// The preset of that exact name. Throws hark::Error naming the known presets for an unknown name.
const AlignmentHeadsPreset& alignment_heads_preset(std::string_view name);

// Every head of the top n_top text layers (layers n_text_layer - n_top .. n_text_layer - 1).
// Throws hark::Error unless 1 <= n_top <= n_text_layer and n_text_head >= 1.
std::vector<AlignmentHead> top_most_alignment_heads(int32_t n_top, int32_t n_text_layer, int32_t n_text_head);

// Checks heads against a model's decoder shape (each layer and head in range, none twice, at
// least one) and returns them sorted. Throws hark::Error naming the first bad pair.
std::vector<AlignmentHead> checked_alignment_heads(std::span<const AlignmentHead> heads, int32_t n_text_layer,
                                                   int32_t n_text_head);

// Parses a user's list "layer,head layer,head ..." (pairs separated by spaces or ';', e.g.
// "2,4 2,11;3,3"). Throws hark::Error for text that is not such a list. Range checks are left
// to checked_alignment_heads, which knows the model.
std::vector<AlignmentHead> parse_alignment_heads(std::string_view text);

// The heads of `heads` that lie in text layer `layer`, in increasing order (what one decoder
// layer must hand out).
std::vector<int32_t> alignment_heads_in_layer(std::span<const AlignmentHead> heads, int32_t layer);

}  // namespace hark::decode
