// What a request is answered with, as bytes: transcripts in the formats OpenAI's audio API and
// whisper.cpp's server return, errors in each API's shape, and the server-sent events of a
// streamed transcription. Pure functions; no transport.
#pragma once
#include <string>

#include "api_error.h"
#include "hark/hark.hpp"
#include "request.h"

namespace hark::server {

struct Body {
  std::string content_type;
  std::string text;
};

// The transcript in the request's response_format. duration_s: the audio's length.
Body render_transcript(const TranscriptionRequest& r, const Transcript& t, double duration_s);

// OpenAI: {"error": {"message", "type", "param", "code"}} (param and code null when empty).
std::string openai_error_json(const ApiError& e);
// whisper.cpp's server: {"error": "message"}.
std::string whisper_cpp_error_json(const ApiError& e);

// One server-sent event: "event: TYPE\ndata: JSON\n\n".
std::string sse_delta(const std::string& delta);  // transcript.text.delta
std::string sse_done(const std::string& text);    // transcript.text.done
std::string sse_error(const ApiError& e);         // error (the SDKs raise it)
// hark's addition for response_format verbose_json: each delta also carries its segment (as in
// verbose_json; its words when asked), and the done event is the whole
// verbose_json. OpenAI's clients read delta and text as ever and pass the rest by.
std::string sse_segment_delta(const TranscriptionRequest& r, const std::string& delta, size_t id, const Segment& s);
std::string sse_done_verbose(const TranscriptionRequest& r, const Transcript& t, double duration_s);

// The whole text of a transcript as OpenAI gives it: segments joined, outer spaces trimmed.
std::string plain_text(const Transcript& t);

}  // namespace hark::server
