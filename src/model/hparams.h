// HParams: the eleven hyper-parameters at the head of a Whisper model file, and what follows from
// them: the model's size name, whether it is multilingual, the weight type, and the ids of the
// special tokens (end of text, start of transcript, languages, task, timestamps...), which the
// file does not store but which are fixed by n_vocab.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/dtype.h"

namespace hark {

struct HParams {
  int32_t n_vocab = 51865;
  int32_t n_audio_ctx = 1500;
  int32_t n_audio_state = 384;
  int32_t n_audio_head = 6;
  int32_t n_audio_layer = 4;
  int32_t n_text_ctx = 448;
  int32_t n_text_state = 384;
  int32_t n_text_head = 6;
  int32_t n_text_layer = 4;
  int32_t n_mels = 80;
  int32_t ftype = 1;  // file type + 1000 * quantization version (see below)

  static constexpr int kCount = 11;  // fields, in file order
  // Field i in file order, and its name as the file format calls it.
  int32_t& field(int i);
  int32_t field(int i) const { return const_cast<HParams*>(this)->field(i); }
  static const char* field_name(int i);

  int32_t file_type() const { return ftype % 1000; }
  int32_t quant_version() const { return ftype / 1000; }
  // Weight type of the 2-D matrices (f32, f16, q4_0 ...); requires a valid ftype.
  DType weight_type() const;
  // Multilingual vocabularies have n_vocab >= 51865; 51864 is English-only.
  bool multilingual() const { return n_vocab >= 51865; }
  int num_languages() const { return multilingual() ? n_vocab - 51765 - 1 : 0; }
  // "tiny", "base.en", "large-v3", "large-v3-turbo", ... or "custom" when the dims match no
  // released model (test models).
  std::string size_name() const;
  std::string describe() const;  // one line with every field, for `hark info` and logs

  bool operator==(const HParams&) const = default;
};

// Throws hark::Error naming the first field outside its sane range (with its byte offset in the
// file and the range expected). Every later size in the file is checked against these, so the
// bounds are what keeps a hostile file from asking for an absurd allocation.
void validate_hparams(const HParams& hp, const std::string& label);

// The file's ftype for a weight type (quantized types carry quantization version 2).
int32_t ftype_for_weight_type(DType weight_type);
// The weight type of a raw ftype; false when the file type is unknown or unsupported.
bool weight_type_for_ftype(int32_t ftype, DType* out);

// Ids of the special tokens. They sit after the ordinary (byte-pair) tokens; their position
// depends on whether the vocabulary is English-only and on how many languages it has (99, or
// 100 for large-v3's 51866).
struct SpecialTokens {
  int32_t eot;              // <|endoftext|>
  int32_t sot;              // <|startoftranscript|>
  int32_t lang_first;       // first language token (sot + 1); n_languages of them
  int32_t n_languages;      // 0 for English-only models
  int32_t translate;        // <|translate|>
  int32_t transcribe;       // <|transcribe|>
  int32_t solm;             // <|startoflm|>
  int32_t prev;             // <|startofprev|>
  int32_t no_speech;        // <|nospeech|> (also "nocaptions")
  int32_t no_timestamps;    // <|notimestamps|>
  int32_t timestamp_begin;  // <|0.00|>; token timestamp_begin + i is i * 0.02 s
  int32_t n_vocab;

  // Token for language index `lang` (0 = "en"), or -1 when the model has no such language.
  int32_t language_token(int lang) const { return lang >= 0 && lang < n_languages ? lang_first + lang : -1; }
  bool is_timestamp(int32_t id) const { return id >= timestamp_begin && id < n_vocab; }
  // Ordinary text tokens are those before eot.
  bool is_text(int32_t id) const { return id >= 0 && id < eot; }
};
SpecialTokens special_tokens(const HParams& hp);

// Whisper's language codes in token order ("en", "zh", "de", ...); 100 entries.
inline constexpr int kMaxLanguages = 100;
const char* language_code(int lang);          // nullptr when out of range
const char* language_name(int lang);          // "english", "chinese", ...; nullptr when out of range
int language_index(const std::string& code);  // -1 when unknown

}  // namespace hark
