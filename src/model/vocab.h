// Vocab: token id -> bytes, for all n_vocab ids of a model.
//
// Ordinary tokens are byte-pair pieces read from the model file; a piece is raw bytes and need not
// be valid UTF-8 on its own (a character may span tokens). Files store only the ordinary tokens
// (and, in English-only files, "<|endoftext|>"); the special tokens after them get the names
// whisper.cpp gives them ("[_SOT_]", "[_LANG_en]", "[_TT_150]" for 3.00 s, ...), so a printed
// token stream reads the same in both programs.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/hparams.h"

namespace hark {

class Vocab {
 public:
  Vocab() = default;
  // Starts a vocabulary for these hyper-parameters; add the file's tokens in id order, then call
  // finish() to name the ids the file did not cover.
  explicit Vocab(const HParams& hp);
  void add_file_token(std::string_view bytes);
  void finish();

  int32_t size() const { return special_.n_vocab; }  // n_vocab: every valid id is below it
  int32_t n_file_tokens() const { return static_cast<int32_t>(offsets_.size()) - 1; }
  const SpecialTokens& special() const { return special_; }

  // Bytes of ordinary token `id`, or the name of a special one. Throws on an id outside the vocab.
  std::string_view text(int32_t id) const;
  bool is_special(int32_t id) const { return id >= special_.eot; }
  // Seconds a timestamp token stands for (0.02 s steps), or -1 for other tokens.
  double timestamp_seconds(int32_t id) const {
    return special_.is_timestamp(id) ? 0.02 * (id - special_.timestamp_begin) : -1.0;
  }

 private:
  SpecialTokens special_{};
  std::string blob_;                      // all file tokens back to back
  std::vector<uint32_t> offsets_{0};      // token i is blob_[offsets_[i], offsets_[i+1])
  std::vector<std::string> synthesized_;  // names of ids n_file_tokens() .. n_vocab-1
};

}  // namespace hark
