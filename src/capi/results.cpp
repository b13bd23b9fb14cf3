// The C API: reading a result (hark_result_*) and writing it out in a format.
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

namespace {

// Result getters: the value, or `sentinel` (and hark_last_error) on a bad handle or index.
template <typename T, typename F>
T get(const char* fn, const hark_result* r, T sentinel, F&& f) noexcept {
  T v = sentinel;
  guarded(fn, HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(r);
    v = f(*r);
  });
  return v;
}

const hark::Segment& segment(const hark_result& r, int i) {
  require(i >= 0 && static_cast<size_t>(i) < r.t.segments.size(), "segment index " + std::to_string(i) +
                                                                      " is out of range (n_segments " +
                                                                      std::to_string(r.t.segments.size()) + ")");
  return r.t.segments[static_cast<size_t>(i)];
}

// Element j of segment i's list (tokens, words), named `what` in the message when out of range.
template <typename T>
const T& segment_item(const std::vector<T>& list, int i, int j, const char* what) {
  require(j >= 0 && static_cast<size_t>(j) < list.size(),
          std::string(what) + " index " + std::to_string(j) + " is out of range (segment " + std::to_string(i) +
              " has " + std::to_string(list.size()) + " " + what + "s)");
  return list[static_cast<size_t>(j)];
}

}  // namespace

extern "C" {

// ---- results ----

hark_status hark_result_free(hark_result* result) {
  return guarded("hark_result_free", HARK_ERR_INTERNAL, [&] {
    {
      std::unique_lock<std::shared_mutex> lock(handles().mutex());
      if (handles().is(result, Kind::BorrowedResult))
        raise(HARK_ERR_INVALID_ARGUMENT, "result is the one a new-segments callback was given; the library frees it");
      if (!handles().remove_locked(result, Kind::Result)) bad_handle(result, Kind::Result, "result");
    }
    delete result;
  });
}

int hark_result_job_id(const hark_result* result) {
  return get("hark_result_job_id", result, -1, [](const hark_result& r) { return r.t.job_id; });
}

int hark_result_aborted(const hark_result* result) {
  return get("hark_result_aborted", result, -1, [](const hark_result& r) { return r.t.aborted ? 1 : 0; });
}

const char* hark_result_language(const hark_result* result) {
  return get("hark_result_language", result, static_cast<const char*>(nullptr),
             [](const hark_result& r) { return r.t.language.c_str(); });
}

const char* hark_result_text(const hark_result* result) {
  return get("hark_result_text", result, static_cast<const char*>(nullptr),
             [](const hark_result& r) { return r.text.c_str(); });
}

int hark_result_n_segments(const hark_result* result) {
  return get("hark_result_n_segments", result, -1,
             [](const hark_result& r) { return static_cast<int>(r.t.segments.size()); });
}

int64_t hark_result_segment_t0(const hark_result* result, int i) {
  return get("hark_result_segment_t0", result, int64_t{-1}, [i](const hark_result& r) { return segment(r, i).t0; });
}

int64_t hark_result_segment_t1(const hark_result* result, int i) {
  return get("hark_result_segment_t1", result, int64_t{-1}, [i](const hark_result& r) { return segment(r, i).t1; });
}

const char* hark_result_segment_text(const hark_result* result, int i) {
  return get("hark_result_segment_text", result, static_cast<const char*>(nullptr),
             [i](const hark_result& r) { return segment(r, i).text.c_str(); });
}

int hark_result_segment_n_tokens(const hark_result* result, int i) {
  return get("hark_result_segment_n_tokens", result, -1,
             [i](const hark_result& r) { return static_cast<int>(segment(r, i).tokens.size()); });
}

hark_status hark_result_token(const hark_result* result, int i, int j, hark_token_data* out, size_t out_size) {
  return guarded("hark_result_token", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::TokenData& t = segment_item(segment(*result, i).tokens, i, j, "token");
    hark_token_data d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.id = t.id;
    d.text = t.text.c_str();
    d.p = t.p;
    d.t0 = t.t0;
    d.t1 = t.t1;
    d.logp = t.logp;
    write_out(out, out_size, kTokenDataV1, d);
  });
}

int hark_result_segment_n_words(const hark_result* result, int i) {
  return get("hark_result_segment_n_words", result, -1,
             [i](const hark_result& r) { return static_cast<int>(segment(r, i).words.size()); });
}

hark_status hark_result_word(const hark_result* result, int i, int j, hark_word* out, size_t out_size) {
  return guarded("hark_result_word", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::Word& w = segment_item(segment(*result, i).words, i, j, "word");
    hark_word d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.text = w.text.c_str();
    d.t0 = w.t0;
    d.t1 = w.t1;
    d.p = w.p;
    write_out(out, out_size, kWordV1, d);
  });
}

hark_status hark_result_segment_decoding(const hark_result* result, int i, hark_segment_decoding* out,
                                         size_t out_size) {
  return guarded("hark_result_segment_decoding", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::Segment& s = segment(*result, i);
    hark_segment_decoding d;
    std::memset(static_cast<void*>(&d), 0, sizeof d);
    d.temperature = s.temperature;
    d.avg_logprob = s.avg_logprob;
    d.compression_ratio = s.compression_ratio;
    d.no_speech_prob = s.no_speech_prob;
    d.seek = s.seek;
    write_out(out, out_size, kSegmentDecodingV1, d);
  });
}

int hark_result_segment_speaker_turn_next(const hark_result* result, int i) {
  return get("hark_result_segment_speaker_turn_next", result, -1,
             [i](const hark_result& r) { return segment(r, i).speaker_turn_next ? 1 : 0; });
}

float hark_result_language_prob(const hark_result* result) {
  return get("hark_result_language_prob", result, -1.0f, [](const hark_result& r) { return r.t.language_prob; });
}

int hark_result_n_fallback_windows(const hark_result* result) {
  return get("hark_result_n_fallback_windows", result, -1, [](const hark_result& r) { return r.t.n_fallback_windows; });
}

int hark_result_n_windows(const hark_result* result) {
  return get("hark_result_n_windows", result, -1,
             [](const hark_result& r) { return static_cast<int>(r.t.windows.size()); });
}

hark_status hark_result_window(const hark_result* result, int i, hark_window* out, size_t out_size) {
  return guarded("hark_result_window", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const auto& w = result->t.windows;
    require(i >= 0 && static_cast<size_t>(i) < w.size(),
            "window index " + std::to_string(i) + " is out of range (n_windows " + std::to_string(w.size()) + ")");
    hark_window v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    v.t0 = w[static_cast<size_t>(i)].t0;
    v.t1 = w[static_cast<size_t>(i)].t1;
    v.skipped_as_silence = w[static_cast<size_t>(i)].skipped_as_silence;
    v.language = hark::language_code_at(hark::language_id(w[static_cast<size_t>(i)].language));
    write_out(out, out_size, kWindowV1, v);
  });
}

hark_status hark_result_timings(const hark_result* result, hark_timings* out, size_t out_size) {
  return guarded("hark_result_timings", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const hark::Timings& t = result->t.timings;
    hark_timings v;
    std::memset(static_cast<void*>(&v), 0, sizeof v);
    v.load_ms = t.load_ms;
    v.mel_ms = t.mel_ms;
    v.encode_ms = t.encode_ms;
    v.decode_ms = t.decode_ms;
    v.total_ms = t.total_ms;
    v.n_windows = t.n_windows;
    v.n_decode_tokens = t.n_decode_tokens;
    v.audio_seconds = t.audio_seconds;
    v.real_time_factor = t.real_time_factor();
    v.vad_ms = t.vad_ms;
    v.n_threads = t.n_threads;
    write_out(out, out_size, kTimingsV1, v);
  });
}

const char* hark_result_format(const hark_result* result, hark_format format) {
  const char* s = nullptr;
  guarded("hark_result_format", HARK_ERR_INTERNAL, [&] {
    const auto lock = read_result(result);
    const int f = enum_value(format);
    require(f >= HARK_FORMAT_TXT && f <= HARK_FORMAT_LRC,
            "format " + std::to_string(f) + " is not a hark_format (0..5)");
    hark_result& r = const_cast<hark_result&>(*result);  // only the lazily made strings change
    std::lock_guard<std::mutex> fl(r.format_mu);
    if (!r.formatted[f]) {
      switch (f) {
        case HARK_FORMAT_TXT: r.formats[f] = hark::to_txt(r.t); break;
        case HARK_FORMAT_SRT: r.formats[f] = hark::to_srt(r.t); break;
        case HARK_FORMAT_VTT: r.formats[f] = hark::to_vtt(r.t); break;
        case HARK_FORMAT_JSON: r.formats[f] = hark::to_json(r.t); break;
        case HARK_FORMAT_CSV: r.formats[f] = hark::to_csv(r.t); break;
        case HARK_FORMAT_LRC: r.formats[f] = hark::to_lrc(r.t); break;
      }
      r.formatted[f] = true;
    }
    s = r.formats[f].c_str();
  });
  return s;
}

hark_status hark_format_timestamp(int64_t t, bool comma, char* buf, size_t buf_size) {
  return guarded("hark_format_timestamp", HARK_ERR_INTERNAL, [&] {
    require(buf != nullptr, "buf is NULL");
    require(t >= 0, "t must be >= 0, got " + std::to_string(t));
    const std::string s = hark::format_timestamp(t, comma);
    require(buf_size > s.size(), "buf_size " + std::to_string(buf_size) + " is too small: '" + s + "' needs " +
                                     std::to_string(s.size() + 1));
    std::memcpy(buf, s.c_str(), s.size() + 1);
  });
}

}  // extern "C"
