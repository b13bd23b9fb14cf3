// hark: a Transcript written out, the C++ API: txt, srt, vtt, json, csv, lrc and the CLI's
// console line.
#pragma once
#include <cstdint>
#include <string>

#include "hark/export.h"
#include "hark/results.hpp"

namespace hark {

// ---- output formats (each ends with a newline when not empty) ----
// "hh:mm:ss.mmm" (or with a comma for SRT), from 10 ms units.
HARK_API std::string format_timestamp(int64_t t_10ms, bool comma = false);
HARK_API std::string to_txt(const Transcript& t);  // segment texts, one per line
HARK_API std::string to_srt(const Transcript& t);
HARK_API std::string to_vtt(const Transcript& t);
// {"language", "language_prob", "n_fallback_windows", "text", "segments":[{start, end, t0, t1, text,
// temperature, avg_logprob, compression_ratio, no_speech_prob, speaker_turn_next,
// tokens:[{id, text, p, logp[, t0, t1]}], words}], "timings"} (token t0/t1 when token timestamps are on)
HARK_API std::string to_json(const Transcript& t);
// full = false: the same without each segment's tokens (whisper.cpp's -oj against -ojf). Segments
// with words carry them either way: "words":[{word, start, end, probability, t0, t1}].
HARK_API std::string to_json(const Transcript& t, bool full);
// whisper.cpp's -ocsv: "start,end,text" then one row per segment: start and end in milliseconds,
// the text in double quotes (a quote in it doubled, RFC 4180).
HARK_API std::string to_csv(const Transcript& t);
// whisper.cpp's -olrc (lyrics): "[by:hark]" then "[mm:ss.xx]text" per segment, at its start.
HARK_API std::string to_lrc(const Transcript& t);
// The CLI's console line: "[00:00:00.000 --> 00:00:02.500]  text".
HARK_API std::string format_segment_line(const Segment& s);

}  // namespace hark
