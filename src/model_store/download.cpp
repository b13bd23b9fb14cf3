// download_model: one official model over HTTP(S) with libcurl, resumable, verified before it gets
// its final name. The steps and why:
//  - bytes go to "<file>.part"; a .part left by an earlier attempt is resumed with a Range request
//    from its size (a server that ignores Range answers 200: the .part is then started over);
//  - a cut connection, a stall, an abort or a full disk keep the .part (what it holds is a correct
//    prefix of the file), so the next call continues;
//  - the whole file's SHA-1 (and size) is checked before the rename; a mismatch removes the .part,
//    since resuming a wrong file could only repeat the mismatch. Where no SHA-1 is published, the
//    SHA-256 that Hugging Face announces for the file (X-Linked-Etag) is checked instead;
//  - one download of a file at a time: a second process (or thread) waits on a lock beside the
//    file, then finds the file there.
#include <curl/curl.h>
#include <sys/stat.h>

#include <strings.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>

#include "hark/models.hpp"
#include "model_store/digest.h"
#include "model_store/file_lock.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("download: libcurl could not initialise");
  });
}

uint64_t file_size_or_zero(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

std::string human_bytes(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", n / double(1ull << 30));
  else if (n >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", n / double(1ull << 20));
  else
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
  return buf;
}

// Bytes per second over the last few seconds, so the time left follows the current speed.
class RateMeter {
 public:
  void add(Clock::time_point t, uint64_t bytes) {
    samples_.push_back({t, bytes});
    while (samples_.size() > 2 && t - samples_.front().t > std::chrono::seconds(5)) samples_.pop_front();
  }
  double rate() const {
    if (samples_.size() < 2) return 0;
    const double s = std::chrono::duration<double>(samples_.back().t - samples_.front().t).count();
    return s > 0 ? (samples_.back().bytes - samples_.front().bytes) / s : 0;
  }

 private:
  struct Sample {
    Clock::time_point t;
    uint64_t bytes;
  };
  std::deque<Sample> samples_;
};

// One transfer's state, shared with curl's callbacks.
struct Transfer {
  const DownloadOptions* options = nullptr;
  std::string part;  // the .part path
  std::FILE* file = nullptr;
  uint64_t offset = 0;    // bytes of the .part kept (the Range start); 0 after a 200
  uint64_t written = 0;   // bytes written this attempt
  uint64_t expected = 0;  // the whole file, when known
  long status = 0;        // HTTP status of the final response
  bool body_started = false;
  bool discard = false;      // an error response: its body is not the model
  int write_errno = 0;       // the write that failed (ENOSPC ...)
  uint64_t served_size = 0;  // set when the server's file has another size than expected
  bool aborted = false;
  std::string server_sha256;  // Hugging Face's X-Linked-Etag of a large file: its SHA-256
  RateMeter meter;
  Clock::time_point last_report{};
  CURL* curl = nullptr;

  DownloadProgress progress() const {
    DownloadProgress p;
    p.bytes_resumed = offset;
    p.bytes_done = offset + written;
    p.bytes_total = expected;
    p.bytes_per_second = meter.rate();
    if (expected > p.bytes_done && p.bytes_per_second > 0)
      p.seconds_left = (expected - p.bytes_done) / p.bytes_per_second;
    return p;
  }
};

// The first body bytes decide what the response is: 206 appends to the .part, 200 starts it over
// (the server ignored Range), anything else is an error whose body is thrown away.
bool start_body(Transfer& t) {
  t.body_started = true;
  curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &t.status);
  if (t.status != 200 && t.status != 206) {
    t.discard = true;
    return true;
  }
  if (t.status == 200 && t.offset > 0) t.offset = 0;
  curl_off_t length = -1;
  curl_easy_getinfo(t.curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  if (length >= 0) {
    const uint64_t whole = t.offset + static_cast<uint64_t>(length);
    if (t.expected != 0 && whole != t.expected) {
      t.served_size = whole;  // another file than the one expected: not a byte of it is written
      return false;
    }
    t.expected = whole;
  }
  t.file = std::fopen(t.part.c_str(), t.offset > 0 ? "ab" : "wb");
  if (!t.file) {
    t.write_errno = errno;
    return false;
  }
  return true;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  Transfer& t = *static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (!t.body_started && !start_body(t)) return 0;
  if (t.discard) return bytes;
  if (std::fwrite(data, 1, bytes, t.file) != bytes) {
    t.write_errno = errno ? errno : EIO;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  t.written += bytes;
  return bytes;
}

// Hugging Face answers a large file's URL with a redirect whose X-Linked-Etag is the file's
// SHA-256 (quoted); the headers of every hop of the redirect come through here.
size_t on_header(char* data, size_t size, size_t n, void* user) {
  Transfer& t = *static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  std::string line(data, bytes);
  const std::string key = "x-linked-etag:";
  if (line.size() > key.size() && strncasecmp(line.c_str(), key.c_str(), key.size()) == 0) {
    std::string v = line.substr(key.size());
    const auto not_space = [](char c) { return c != ' ' && c != '\t' && c != '\r' && c != '\n'; };
    while (!v.empty() && !not_space(v.back())) v.pop_back();
    v.erase(0, std::find_if(v.begin(), v.end(), not_space) - v.begin());
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    std::string hex;
    for (char c : v) hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (is_hex_digest(hex, 64)) t.server_sha256 = hex;
  }
  return bytes;
}

int on_xfer(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  Transfer& t = *static_cast<Transfer*>(user);
  if (t.options->should_abort && t.options->should_abort()) {
    t.aborted = true;
    return 1;
  }
  const Clock::time_point now = Clock::now();
  t.meter.add(now, t.offset + t.written);
  if (t.options->on_progress && !t.discard && t.body_started && now - t.last_report >= std::chrono::milliseconds(200)) {
    t.last_report = now;
    t.options->on_progress(t.progress());
  }
  return 0;
}

std::string join_url(std::string base, const std::string& file) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/" + file;
}

// Runs the transfer; throws hark::Error for every way it can fail, the .part kept.
void transfer(Transfer& t, const std::string& url, const std::string& name) {
  init_curl_once();
  CURL* c = curl_easy_init();
  if (!c) throw Error("download: libcurl could not start a transfer");
  t.curl = c;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);  // Hugging Face redirects to its CDN
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "hark");
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_xfer);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for name resolution timeouts
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, t.options->connect_timeout_s);
  if (t.options->low_speed_time_s > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, t.options->low_speed_time_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, t.options->low_speed_bytes);
  }
  // CURLOPT_RANGE, not RESUME_FROM: libcurl then hands us a 200 answer too (it would refuse it as
  // an error), and start_body starts the .part over.
  const std::string range = std::to_string(t.offset) + "-";
  if (t.offset > 0) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  const CURLcode rc = curl_easy_perform(c);
  if (!t.body_started) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.status);
  curl_easy_cleanup(c);
  t.curl = nullptr;
  bool closed_ok = true;
  int close_errno = 0;
  if (t.file) {
    closed_ok = std::fclose(t.file) == 0;  // the last buffered bytes: a full disk may show only here
    close_errno = errno;
    t.file = nullptr;
  }

  const std::string what = "download of " + name + " from " + url;
  // What is left for a rerun to resume from; nothing to keep when no byte came (an empty .part
  // made for a body that never arrived is removed, not announced).
  std::string keep;
  if (t.offset + t.written > 0) {
    keep = " (" + human_bytes(t.offset + t.written) + " kept in " + t.part + "; run again to resume)";
  } else {
    std::error_code ec;
    if (std::filesystem::exists(t.part, ec) && std::filesystem::file_size(t.part, ec) == 0)
      std::filesystem::remove(t.part, ec);
  }
  if (t.aborted) throw Error(what + ": stopped" + keep);
  if (t.served_size)
    throw Error(what + ": the server's file has " + std::to_string(t.served_size) + " bytes, expected " +
                std::to_string(t.expected) + " (another file: is the name or --base-url right?)");
  if (t.write_errno != 0) throw Error("cannot write " + t.part + ": " + std::strerror(t.write_errno) + keep);
  if (!closed_ok) throw Error("cannot write " + t.part + ": " + std::strerror(close_errno) + keep);
  if (t.status >= 400 || (rc == CURLE_OK && t.discard)) {
    if (t.status == 416 && t.offset > 0) return;  // nothing after the .part's end: it may be whole; the checks decide
    throw Error(what + " failed: HTTP " + std::to_string(t.status) +
                (t.status == 404 ? " (not found: is the name or --base-url right?)" : ""));
  }
  switch (rc) {
    case CURLE_OK: return;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: throw Error(what + " failed: cannot resolve the host (no network?): " + errbuf);
    case CURLE_COULDNT_CONNECT:
      throw Error(what + " failed: cannot connect (no network, or the server refused the connection): " + errbuf);
    case CURLE_OPERATION_TIMEDOUT:
      if (t.body_started || t.written > 0)
        throw Error(what + " stalled: less than " + std::to_string(t.options->low_speed_bytes) + " bytes/s for " +
                    std::to_string(t.options->low_speed_time_s) + " s" + keep);
      throw Error(what + " timed out: " + std::string(errbuf) + keep);
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      throw Error(what + ": the connection was cut after " + human_bytes(t.offset + t.written) +
                  (t.expected ? " of " + human_bytes(t.expected) : std::string()) + keep);
    default: throw Error(what + " failed: " + std::string(errbuf[0] ? errbuf : curl_easy_strerror(rc)) + keep);
  }
}

}  // namespace

DownloadResult download_model(const std::string& name, const DownloadOptions& options) {
  const ModelEntry* e = find_model_entry(name);
  if (!e) throw Error("unknown model '" + name + "' (hark download --list names the official ones)");
  const std::string dir = options.dir.empty() ? models_dir() : options.dir;
  const std::string path = dir + "/" + e->file_name;
  const std::string part = path + ".part";
  const std::string sha1 = options.expected_sha1.empty() ? e->sha1 : options.expected_sha1;
  // A digest of one's own means another file than the published one: the published size is not its.
  const uint64_t expected_size = options.expected_size           ? options.expected_size
                                 : options.expected_sha1.empty() ? e->size
                                                                 : 0;

  DownloadResult r;
  r.path = path;
  std::error_code ec;
  if (!options.force && std::filesystem::is_regular_file(path, ec)) {
    r.bytes = file_size_or_zero(path);
    return r;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw Error("cannot create the models folder " + dir + ": " + (ec ? ec.message() : "not a folder"));

  FileLock lock(
      path + ".lock",
      [&] {
        if (!options.on_progress) return;
        DownloadProgress w;
        w.waiting = true;
        options.on_progress(w);
      },
      options.should_abort);
  // Another download of this file may have finished while this one waited.
  if (!options.force && std::filesystem::is_regular_file(path, ec)) {
    r.bytes = file_size_or_zero(path);
    return r;
  }

  Transfer t;
  t.options = &options;
  t.part = part;
  t.offset = file_size_or_zero(part);
  t.expected = expected_size;
  if (expected_size && t.offset > expected_size) {  // longer than the file can be: not ours
    std::remove(part.c_str());
    t.offset = 0;
  }
  if (!(expected_size && t.offset == expected_size))  // a whole .part (killed while checking) needs no transfer
    transfer(t, options.base_url.empty() ? e->url : join_url(options.base_url, e->file_name), e->name);
  r.bytes_resumed = t.offset;

  const uint64_t got = file_size_or_zero(part);
  const uint64_t want = expected_size ? expected_size : t.expected;
  if (want && got != want) {
    if (got > want) std::remove(part.c_str());
    throw Error("download of " + e->name + ": got " + std::to_string(got) + " bytes, expected " + std::to_string(want) +
                (got > want ? " (the partial file was removed)" : " (kept in " + part + "; run again to resume)"));
  }

  DownloadProgress vp = t.progress();
  vp.bytes_done = got;
  vp.bytes_total = got;
  vp.seconds_left = 0;
  vp.verifying = true;
  if (options.on_progress) options.on_progress(vp);
  // Without a SHA-1 to check, the SHA-256 the server announced is checked (computed in the same read).
  const bool check_server = sha1.empty() && !t.server_sha256.empty();
  const FileDigests digests = digest_file(part, check_server, nullptr);
  r.sha1 = digests.sha1;
  r.sha256 = digests.sha256;
  if (!sha1.empty()) {
    if (r.sha1 != sha1) {
      std::remove(part.c_str());
      throw Error("download of " + e->name + ": SHA-1 mismatch: the file has " + r.sha1 + ", expected " + sha1 +
                  " (corrupted in transit, or the server sends another file); the partial file was removed");
    }
    r.verified = true;
    r.verified_with = options.expected_sha1.empty() ? "published SHA-1" : "given SHA-1";
  } else if (check_server) {
    if (r.sha256 != t.server_sha256) {
      std::remove(part.c_str());
      throw Error("download of " + e->name + ": SHA-256 mismatch: the file has " + r.sha256 +
                  ", the server announced " + t.server_sha256 +
                  " (corrupted in transit); the partial file was removed");
    }
    r.verified = true;
    r.verified_with = "server's SHA-256";
  }
  if (std::rename(part.c_str(), path.c_str()) != 0)
    throw Error("cannot rename " + part + " to " + path + ": " + std::strerror(errno));
  lock.remove_file();
  r.downloaded = true;
  r.bytes = got;
  return r;
}

}  // namespace hark
