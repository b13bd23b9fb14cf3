// hark: getting a model. The official whisper.cpp ggml files by name (tiny, base.en, large-v3, ...),
// the folder they are kept in, finding one by name, and downloading one with its digest checked.
//
//   hark::download_model("tiny.en");                       // into models_dir(), verified
//   auto ctx = hark::Context::load("tiny.en");             // Context::load finds names there too
//
// A download is written to "<file>.part" and renamed to its final name only once the whole file's
// SHA-1 matches the published one (or, for files with none published, the SHA-256 the server
// announces), so an interrupted download never leaves a file that looks complete; the next call
// resumes the .part where it stopped. Two downloads of one file wait for each other.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hark/error.hpp"
#include "hark/export.h"

namespace hark {

// One official model file: "ggml-<name>.bin" as whisper.cpp publishes it.
struct ModelEntry {
  std::string name;       // "tiny.en", "large-v3-turbo-q5_0", ...
  std::string file_name;  // "ggml-tiny.en.bin"
  std::string url;        // where it is downloaded from by default
  uint64_t size = 0;      // bytes; 0 when not published
  std::string disk;       // the published size as people read it: "75 MiB", "1.5 GiB"
  std::string sha1;       // 40 hex digits; "" when none is published (a download is then checked against
                          // the SHA-256 the server announces, when it announces one)
  bool vad = false;       // a Silero VAD model (TranscribeParams::vad_model_path), not a Whisper model
};

// Every official model, in whisper.cpp's order (tiny ... large-v3-turbo-q8_0), then the Silero VAD
// models whisper.cpp publishes (silero-v6.2.0, silero-v5.1.2: ggml-silero-*.bin).
HARK_API const std::vector<ModelEntry>& model_registry();
// The entry of a name ("tiny.en"; also its file name "ggml-tiny.en.bin"); nullptr when unknown.
HARK_API const ModelEntry* find_model_entry(std::string_view name);

// Where models are kept: $HARK_MODELS when set, else $XDG_CACHE_HOME/hark/models, else
// ~/.cache/hark/models. Not created here.
HARK_API std::string models_dir();

// A model path from what a user typed: an existing file as it is; else a name ("tiny.en", or a
// file name "ggml-tiny.en.bin") found in `dir` ("" = models_dir()). Throws hark::Error when it is
// neither: for an official name the message says how to get it ("hark download tiny.en").
HARK_API std::string find_model(const std::string& name_or_path, const std::string& dir = "");

struct DownloadProgress {
  uint64_t bytes_done = 0;      // of the whole file, a resumed part included
  uint64_t bytes_total = 0;     // 0 while unknown
  uint64_t bytes_resumed = 0;   // what an earlier attempt had already downloaded
  double bytes_per_second = 0;  // of this attempt, averaged over the last seconds
  double seconds_left = -1;     // -1 while unknown
  bool verifying = false;       // the transfer is done, the digest is being checked
  bool waiting = false;         // another process or thread downloads this file: this call waits for it
};

struct DownloadOptions {
  std::string dir;       // "" = models_dir() (created when missing)
  std::string base_url;  // "" = the entry's url; else base_url + "/" + file_name (a mirror, a local server)
  // Override the registry's expectations (tests, mirrors of other files). Empty / 0: the entry's
  // (an expected_sha1 alone drops the entry's size too: it is another file).
  std::string expected_sha1;
  uint64_t expected_size = 0;
  bool force = false;  // download again even when the file is there
  long connect_timeout_s = 30;
  // A transfer slower than low_speed_bytes per second for low_speed_time_s seconds is a stall:
  // an error (the .part is kept, so the next call resumes). 0: no stall limit.
  long low_speed_time_s = 60;
  long low_speed_bytes = 1;
  // Called a few times a second while bytes arrive and once when the digest is being checked.
  std::function<void(const DownloadProgress&)> on_progress;
  std::function<bool()> should_abort;  // true stops the download (an Error; the .part is kept)
};

struct DownloadResult {
  std::string path;            // the final file
  bool downloaded = false;     // false: it was already there (nothing fetched)
  bool verified = false;       // its digest matched: see verified_with
  std::string verified_with;   // "published SHA-1", "given SHA-1", "server's SHA-256" (Hugging Face's
                               // X-Linked-Etag, checked where no SHA-1 is published); "" when unverified
  uint64_t bytes = 0;          // its size
  uint64_t bytes_resumed = 0;  // bytes an earlier attempt had left in the .part and that were kept
  std::string sha1;            // of the file, when computed
  std::string sha256;          // of the file, when a server's SHA-256 was checked
};

// Downloads an official model by name into options.dir. A file already there is kept (not
// fetched, not re-hashed) unless options.force. Throws hark::Error naming what went wrong: an
// unknown name, no network or a refused connection, an HTTP error (404 ...), a stall, a full disk,
// a digest or size mismatch (the bad .part is removed: resuming it would only repeat the mismatch).
HARK_API DownloadResult download_model(const std::string& name, const DownloadOptions& options = {});

// The SHA-1 of a file as 40 lower-case hex digits. Throws hark::Error when it cannot be read.
HARK_API std::string sha1_file(const std::string& path);

}  // namespace hark
