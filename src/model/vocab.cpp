#include "model/vocab.h"

#include "runtime/error.h"

namespace hark {

Vocab::Vocab(const HParams& hp) : special_(special_tokens(hp)) {}

void Vocab::add_file_token(std::string_view bytes) {
  HARK_CHECK(n_file_tokens() < special_.n_vocab,
             "vocabulary: more tokens than n_vocab " + std::to_string(special_.n_vocab));
  blob_.append(bytes);
  offsets_.push_back(static_cast<uint32_t>(blob_.size()));
}

void Vocab::finish() {
  const SpecialTokens& s = special_;
  synthesized_.clear();
  for (int32_t id = n_file_tokens(); id < s.n_vocab; ++id) {
    std::string name;
    if (id > s.timestamp_begin)
      name = "[_TT_" + std::to_string(id - s.timestamp_begin) + "]";
    else if (id == s.eot)
      name = "[_EOT_]";
    else if (id == s.sot)
      name = "[_SOT_]";
    else if (id == s.translate)
      name = "[_TRANSLATE_]";
    else if (id == s.transcribe)
      name = "[_TRANSCRIBE_]";
    else if (id == s.solm)
      name = "[_SOLM_]";
    else if (id == s.prev)
      name = "[_PREV_]";
    else if (id == s.no_speech)
      name = "[_NOSP_]";
    else if (id == s.no_timestamps)
      name = "[_NOT_]";
    else if (id == s.timestamp_begin)
      name = "[_BEG_]";
    else if (s.language_token(id - s.lang_first) == id)
      name = std::string("[_LANG_") + language_code(id - s.lang_first) + "]";
    else
      name = "[_extra_token_" + std::to_string(id) + "]";
    synthesized_.push_back(std::move(name));
  }
}

std::string_view Vocab::text(int32_t id) const {
  HARK_CHECK(id >= 0 && id < special_.n_vocab,
             "token id " + std::to_string(id) + " outside the vocabulary of " + std::to_string(special_.n_vocab));
  const int32_t n = n_file_tokens();
  if (id < n) {
    const size_t i = static_cast<size_t>(id);
    return std::string_view(blob_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
  }
  HARK_CHECK(static_cast<size_t>(id - n) < synthesized_.size(), "Vocab::text before Vocab::finish");
  return synthesized_[static_cast<size_t>(id - n)];
}

}  // namespace hark
