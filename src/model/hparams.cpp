#include "model/hparams.h"

#include <array>
#include <cstring>
#include <sstream>

#include "runtime/error.h"

namespace hark {

namespace {

constexpr const char* kFieldNames[HParams::kCount] = {"n_vocab",       "n_audio_ctx", "n_audio_state", "n_audio_head",
                                                      "n_audio_layer", "n_text_ctx",  "n_text_state",  "n_text_head",
                                                      "n_text_layer",  "n_mels",      "ftype"};

// The quantized block layouts hark reads are those of quantization version 2; files quantized
// before it store other layouts under the same type ids, and reading them would give garbage.
constexpr int32_t kQuantVersion = 2;

struct FileType {
  int32_t id;
  DType weight;
};
// File types (ftype % 1000) and the weight type of their matrices. Others (e.g. 4, "q4_1 with
// some f16") were never produced for Whisper and are rejected.
constexpr std::array<FileType, 7> kFileTypes{{{0, DType::F32},
                                              {1, DType::F16},
                                              {2, DType::Q4_0},
                                              {3, DType::Q4_1},
                                              {7, DType::Q8_0},
                                              {8, DType::Q5_0},
                                              {9, DType::Q5_1}}};

constexpr std::array<const char*, kMaxLanguages> kLanguages{
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt",  "tr", "pl", "ca", "nl", "ar", "sv", "it", "id",
    "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro",  "da", "hu", "ta", "no", "th", "ur", "hr", "bg",
    "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv",  "bn", "sr", "az", "sl", "kn", "et", "mk", "br",
    "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw",  "gl", "mr", "pa", "si", "km", "sn", "yo", "so",
    "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi",  "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt",
    "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue"};

// Their English names in the same order (OpenAI's LANGUAGES, as its verbose_json reports them).
constexpr std::array<const char*, kMaxLanguages> kLanguageNames{
    "english",    "chinese",    "german",        "spanish",        "russian",   "korean",     "french",
    "japanese",   "portuguese", "turkish",       "polish",         "catalan",   "dutch",      "arabic",
    "swedish",    "italian",    "indonesian",    "hindi",          "finnish",   "vietnamese", "hebrew",
    "ukrainian",  "greek",      "malay",         "czech",          "romanian",  "danish",     "hungarian",
    "tamil",      "norwegian",  "thai",          "urdu",           "croatian",  "bulgarian",  "lithuanian",
    "latin",      "maori",      "malayalam",     "welsh",          "slovak",    "telugu",     "persian",
    "latvian",    "bengali",    "serbian",       "azerbaijani",    "slovenian", "kannada",    "estonian",
    "macedonian", "breton",     "basque",        "icelandic",      "armenian",  "nepali",     "mongolian",
    "bosnian",    "kazakh",     "albanian",      "swahili",        "galician",  "marathi",    "punjabi",
    "sinhala",    "khmer",      "shona",         "yoruba",         "somali",    "afrikaans",  "occitan",
    "georgian",   "belarusian", "tajik",         "sindhi",         "gujarati",  "amharic",    "yiddish",
    "lao",        "uzbek",      "faroese",       "haitian creole", "pashto",    "turkmen",    "nynorsk",
    "maltese",    "sanskrit",   "luxembourgish", "myanmar",        "tibetan",   "tagalog",    "malagasy",
    "assamese",   "tatar",      "hawaiian",      "lingala",        "hausa",     "bashkir",    "javanese",
    "sundanese",  "cantonese"};

std::string field_error(const std::string& label, int i, int32_t value, const std::string& expected) {
  return label + ": hyper-parameter " + kFieldNames[i] + " at offset " + std::to_string(4 + 4 * i) + ": expected " +
         expected + ", found " + std::to_string(value);
}

void check_range(const HParams& hp, const std::string& label, int i, int32_t lo, int32_t hi, const char* why) {
  const int32_t v = hp.field(i);
  if (v < lo || v > hi) {
    throw Error(field_error(label, i, v, std::to_string(lo) + ".." + std::to_string(hi) + " (" + why + ")"));
  }
}

}  // namespace

int32_t& HParams::field(int i) {
  switch (i) {
    case 0: return n_vocab;
    case 1: return n_audio_ctx;
    case 2: return n_audio_state;
    case 3: return n_audio_head;
    case 4: return n_audio_layer;
    case 5: return n_text_ctx;
    case 6: return n_text_state;
    case 7: return n_text_head;
    case 8: return n_text_layer;
    case 9: return n_mels;
    case 10: return ftype;
  }
  throw Error("HParams::field: no field " + std::to_string(i));
}

const char* HParams::field_name(int i) {
  HARK_CHECK(i >= 0 && i < kCount, "HParams::field_name: no field " + std::to_string(i));
  return kFieldNames[i];
}

DType HParams::weight_type() const {
  DType t;
  HARK_CHECK(weight_type_for_ftype(ftype, &t), "unsupported ftype " + std::to_string(ftype));
  return t;
}

std::string HParams::size_name() const {
  struct Size {
    int32_t layers, state;
    const char* name;
  };
  static constexpr Size kSizes[] = {
      {4, 384, "tiny"}, {6, 512, "base"}, {12, 768, "small"}, {24, 1024, "medium"}, {32, 1280, "large"}};
  for (const Size& s : kSizes) {
    if (n_audio_layer != s.layers || n_audio_state != s.state || n_text_state != s.state) continue;
    std::string name = s.name;
    if (name == "large") {
      // large-v3 brought 128 mel bins; turbo is large-v3 with 4 decoder layers.
      if (n_mels == 128) name += n_text_layer == 4 ? "-v3-turbo" : "-v3";
    } else if (n_text_layer != s.layers) {
      break;
    }
    if (!multilingual()) name += ".en";
    return name;
  }
  return multilingual() ? "custom" : "custom.en";
}

std::string HParams::describe() const {
  std::ostringstream s;
  for (int i = 0; i < kCount; ++i) s << (i ? " " : "") << kFieldNames[i] << "=" << field(i);
  return s.str();
}

void validate_hparams(const HParams& hp, const std::string& label) {
  // Whisper's vocabularies: 51864 English-only, 51865 multilingual (99 languages), 51866 large-v3
  // (100 languages). The special-token ids are derived from this, so other values are refused.
  check_range(hp, label, 0, 51864, 51866, "51864 English-only, 51865 multilingual, 51866 large-v3");
  // A 30 s window is 3000 mel frames, halved by conv2's stride: no Whisper uses more than 1500
  // audio positions or 448 text positions.
  check_range(hp, label, 1, 1, 1500, "audio positions");
  check_range(hp, label, 2, 1, 4096, "encoder width");
  check_range(hp, label, 3, 1, 256, "encoder heads");
  check_range(hp, label, 4, 1, 128, "encoder layers");
  check_range(hp, label, 5, 1, 448, "text positions");
  check_range(hp, label, 6, 1, 4096, "decoder width");
  check_range(hp, label, 7, 1, 256, "decoder heads");
  check_range(hp, label, 8, 1, 128, "decoder layers");
  if (hp.n_audio_state % hp.n_audio_head != 0) {
    throw Error(
        field_error(label, 3, hp.n_audio_head, "a divisor of n_audio_state " + std::to_string(hp.n_audio_state)));
  }
  if (hp.n_text_state % hp.n_text_head != 0) {
    throw Error(field_error(label, 7, hp.n_text_head, "a divisor of n_text_state " + std::to_string(hp.n_text_state)));
  }
  if (hp.n_mels != 80 && hp.n_mels != 128) throw Error(field_error(label, 9, hp.n_mels, "80 or 128"));

  const int32_t ft = hp.ftype;
  if (ft < 0) throw Error(field_error(label, 10, ft, "a non-negative file type"));
  DType w;
  if (!weight_type_for_ftype(ft % 1000, &w)) {
    throw Error(field_error(label, 10, ft,
                            "file type 0 (f32), 1 (f16), 2 (q4_0), 3 (q4_1), 7 (q8_0), 8 (q5_0) or "
                            "9 (q5_1)"));
  }
  const int32_t version = hp.quant_version();
  if (dtype_quantized(w) && version < kQuantVersion) {
    throw Error(field_error(label, 10, ft,
                            std::string(dtype_name(w)) + " quantization version 2 (ftype " +
                                std::to_string(ft % 1000 + 1000 * kQuantVersion) + "); this file uses version " +
                                std::to_string(version) +
                                ", whose block layout differs: re-quantize the model with a current tool"));
  }
  if (version > kQuantVersion) {
    throw Error(field_error(
        label, 10, ft,
        "quantization version <= 2; version " + std::to_string(version) + " is newer than this build understands"));
  }
}

int32_t ftype_for_weight_type(DType weight_type) {
  for (const FileType& f : kFileTypes) {
    if (f.weight == weight_type) return f.id + (dtype_quantized(weight_type) ? 1000 * kQuantVersion : 0);
  }
  throw Error(std::string("no model file type stores weights as ") + dtype_name(weight_type));
}

bool weight_type_for_ftype(int32_t ftype, DType* out) {
  if (ftype < 0) return false;
  for (const FileType& f : kFileTypes) {
    if (f.id == ftype % 1000) {
      *out = f.weight;
      return true;
    }
  }
  return false;
}

SpecialTokens special_tokens(const HParams& hp) {
  // Layout: ordinary tokens, eot, sot, one slot per language, then translate, transcribe, solm,
  // prev, no_speech, no_timestamps and the 1501 timestamps. Multilingual vocabularies have one
  // more ordinary token than GPT-2's 50256 (so eot is 50257); English-only ones keep 99 unused
  // language slots, which is why their task tokens sit where a 99-language model's would, less one.
  SpecialTokens s{};
  s.n_vocab = hp.n_vocab;
  s.eot = hp.multilingual() ? 50257 : 50256;
  s.sot = s.eot + 1;
  s.lang_first = s.sot + 1;
  s.n_languages = hp.num_languages();
  const int32_t lang_slots = hp.multilingual() ? s.n_languages : 99;
  s.translate = s.lang_first + lang_slots;
  s.transcribe = s.translate + 1;
  s.solm = s.translate + 2;
  s.prev = s.translate + 3;
  s.no_speech = s.translate + 4;
  s.no_timestamps = s.translate + 5;
  s.timestamp_begin = s.translate + 6;
  return s;
}

const char* language_code(int lang) {
  return lang >= 0 && lang < kMaxLanguages ? kLanguages[static_cast<size_t>(lang)] : nullptr;
}

const char* language_name(int lang) {
  return lang >= 0 && lang < kMaxLanguages ? kLanguageNames[static_cast<size_t>(lang)] : nullptr;
}

int language_index(const std::string& code) {
  for (int i = 0; i < kMaxLanguages; ++i)
    if (code == kLanguages[static_cast<size_t>(i)]) return i;
  return -1;
}

}  // namespace hark
