// A transcription request as the service sees it, whatever the transport (HTTP multipart today, a
// WebSocket later): the fields of OpenAI's audio API or of whisper.cpp's /inference, checked and
// turned into hark's TranscribeParams. Bad values throw ApiError 400 naming the field.
#pragma once
#include <map>
#include <string>
#include <string_view>

#include "hark/hark.hpp"

namespace hark::server {

// The form fields of a request: text fields by name (repeatable, e.g. timestamp_granularities[]),
// and the uploaded file. `file` points into the transport's buffer, valid while it answers.
struct Form {
  std::multimap<std::string, std::string> fields;
  bool has_file = false;
  std::string_view file;
  std::string filename;

  const std::string* get(const std::string& name) const;  // the first value, nullptr when absent
};

enum class Api { OpenAI, WhisperCpp };
enum class Format { Json, Text, Srt, VerboseJson, Vtt };

struct TranscriptionRequest {
  Api api = Api::OpenAI;
  std::string model;  // "": the default
  std::string_view audio;
  std::string filename;
  Format format = Format::Json;
  bool stream = false;   // OpenAI: server-sent events of the text as it is decoded
  bool segments = true;  // verbose_json carries segments (timestamp_granularities)
  bool words = false;    // ... and words (word timestamps are computed)
  TranscribeParams params;
};

// POST /v1/audio/transcriptions (translate false) and /v1/audio/translations (true).
TranscriptionRequest parse_openai_form(const Form& form, bool translate, const TranscribeParams& defaults);
// POST /inference, whisper.cpp's server fields.
TranscriptionRequest parse_inference_form(const Form& form, const TranscribeParams& defaults);

}  // namespace hark::server
