// Decoding: files and memory through libsndfile, MPEG audio through libmpg123, raw PCM directly.
//
// Why MP3 goes to libmpg123 even though Debian's libsndfile 1.2 can read it: libsndfile's MPEG
// support is an optional build feature (a libsndfile built without it would silently lose MP3
// while hark still links libmpg123), and talking to libmpg123 directly gives us its gapless
// decoding and junk-skipping resync under our own control. Everything else goes to libsndfile.
#include <mpg123.h>
#include <sndfile.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "audio/audio.h"
#include "runtime/error.h"

namespace hark::audio {
namespace {

constexpr size_t kChunkFrames = 8192;  // decode granularity: small enough to stream hours

// A byte stream both decoders read from: a file on disk or a block of memory. libsndfile seeks
// (it parses headers and trailers), so the interface is seekable.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual int64_t size() const = 0;
  virtual size_t read(void* dst, size_t n) = 0;
  virtual int64_t seek(int64_t offset, int whence) = 0;  // returns the new position or -1
  virtual int64_t tell() const = 0;
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      throw Error(err == ENOENT || err == ENOTDIR ? ErrorCode::NotFound : ErrorCode::Io,
                  path + ": cannot open audio file: " + std::strerror(err), path);
    }
    HARK_CHECK_AS(InvalidArgument, path, !S_ISDIR(st.st_mode), path + ": is a directory, not an audio file");
    file_ = std::fopen(path.c_str(), "rb");
    HARK_CHECK_AS(Io, path, file_ != nullptr, path + ": cannot open audio file: " + std::strerror(errno));
    size_ = st.st_size;
    // Pipes and devices report no size; libsndfile needs one, so measure by seeking.
    if (!S_ISREG(st.st_mode)) {
      HARK_CHECK(::fseeko(file_, 0, SEEK_END) == 0, path + ": cannot seek; hark needs a regular file");
      size_ = ::ftello(file_);
      ::fseeko(file_, 0, SEEK_SET);
    }
  }
  ~FileSource() override { std::fclose(file_); }
  int64_t size() const override { return size_; }
  size_t read(void* dst, size_t n) override { return std::fread(dst, 1, n, file_); }
  int64_t seek(int64_t offset, int whence) override {
    if (::fseeko(file_, off_t(offset), whence) != 0) return -1;
    return ::ftello(file_);
  }
  int64_t tell() const override { return ::ftello(file_); }

 private:
  std::FILE* file_ = nullptr;
  int64_t size_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(const void* data, size_t size) : data_(static_cast<const unsigned char*>(data)), size_(int64_t(size)) {}
  int64_t size() const override { return size_; }
  size_t read(void* dst, size_t n) override {
    const size_t k = size_t(std::min<int64_t>(int64_t(n), size_ - pos_));
    if (k > 0) std::memcpy(dst, data_ + pos_, k);
    pos_ += int64_t(k);
    return k;
  }
  int64_t seek(int64_t offset, int whence) override {
    const int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? pos_ : size_;
    const int64_t to = base + offset;
    if (to < 0 || to > size_) return -1;
    pos_ = to;
    return pos_;
  }
  int64_t tell() const override { return pos_; }

 private:
  const unsigned char* data_;
  int64_t size_;
  int64_t pos_ = 0;
};

std::string lower_extension(const std::string& name) {
  const size_t dot = name.find_last_of('.');
  const size_t slash = name.find_last_of('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// An MPEG-1/2/2.5 audio frame header: 11 sync bits, then no reserved value in version, layer,
// bitrate or sample-rate fields. The layer check also keeps AAC/ADTS (layer 00) out.
bool is_mpeg_frame_header(const unsigned char* h) {
  if (h[0] != 0xFF || (h[1] & 0xE0) != 0xE0) return false;
  const int version = (h[1] >> 3) & 3, layer = (h[1] >> 1) & 3;
  const int bitrate = h[2] >> 4, rate = (h[2] >> 2) & 3;
  return version != 1 && layer != 0 && bitrate != 15 && rate != 3;
}

// True when the stream starts (after any ID3v2 tag) with an MPEG audio frame. An ID3v2 tag alone
// does not decide it: some FLAC files carry one too.
bool looks_like_mpeg(ByteSource& src) {
  unsigned char h[10] = {};
  int64_t at = 0;
  src.seek(0, SEEK_SET);
  if (src.read(h, 10) == 10 && std::memcmp(h, "ID3", 3) == 0) {
    // Tag size: four 7-bit "syncsafe" bytes, excluding the 10-byte header (and footer, flag 0x10).
    const int64_t body = (int64_t(h[6] & 0x7F) << 21) | (int64_t(h[7] & 0x7F) << 14) | (int64_t(h[8] & 0x7F) << 7) |
                         int64_t(h[9] & 0x7F);
    at = 10 + body + ((h[5] & 0x10) ? 10 : 0);
  }
  bool mpeg = false;
  if (src.seek(at, SEEK_SET) == at && src.read(h, 4) == 4) mpeg = is_mpeg_frame_header(h);
  src.seek(0, SEEK_SET);
  return mpeg;
}

// ---- libsndfile ---------------------------------------------------------------------------

sf_count_t vio_size(void* user) { return static_cast<ByteSource*>(user)->size(); }
sf_count_t vio_seek(sf_count_t offset, int whence, void* user) {
  return static_cast<ByteSource*>(user)->seek(offset, whence);
}
sf_count_t vio_read(void* dst, sf_count_t n, void* user) {
  return sf_count_t(static_cast<ByteSource*>(user)->read(dst, size_t(n)));
}
sf_count_t vio_write(const void*, sf_count_t, void*) { return 0; }
sf_count_t vio_tell(void* user) { return static_cast<ByteSource*>(user)->tell(); }

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

// Opens `src` with libsndfile. On failure returns null with *why set and *unknown telling
// whether libsndfile did not recognise the format at all (as opposed to recognising it and
// finding the header broken or unsupported).
SndfilePtr open_sndfile(ByteSource& src, SF_INFO* info, std::string* why, bool* unknown) {
  static SF_VIRTUAL_IO vio = {vio_size, vio_seek, vio_read, vio_write, vio_tell};
  src.seek(0, SEEK_SET);
  *info = SF_INFO{};
  SNDFILE* f = sf_open_virtual(&vio, SFM_READ, info, &src);
  if (f == nullptr) {
    // libsndfile keeps the last open failure in one process-wide variable, so two threads
    // failing at once may swap messages; the failure itself is still reported correctly.
    *why = sf_strerror(nullptr);
    *unknown = sf_error(nullptr) == SF_ERR_UNRECOGNISED_FORMAT;
  }
  return SndfilePtr(f);
}

std::vector<float> decode_sndfile(SNDFILE* f, const SF_INFO& info, const std::string& name, int channel,
                                  double max_seconds) {
  Converter conv(info.samplerate, info.channels, name, channel);
  conv.set_max_seconds(max_seconds);
  // A header's frame count is a claim, not a fact, but refusing early spares hours of decoding.
  if (info.frames > 0 && info.frames != SF_COUNT_MAX) {
    HARK_CHECK_AS(ResourceExhausted, name, info.frames / info.samplerate <= kMaxSeconds,
                  name + ": header says " + std::to_string(info.frames / info.samplerate) +
                      " s of audio, more than the " + std::to_string(kMaxSeconds / 3600) +
                      " hour limit hark accepts; split the audio first");
  }
  std::vector<float> out;
  if (info.frames > 0 && info.frames != SF_COUNT_MAX) {
    // (A claim: never more room than the limit allows.)
    double seconds = double(info.frames) / info.samplerate;
    if (max_seconds > 0) seconds = std::min(seconds, max_seconds);
    out.reserve(size_t(seconds * kSampleRate) + 64);
  }
  std::vector<float> buf(kChunkFrames * size_t(info.channels));
  for (;;) {
    const sf_count_t n = sf_readf_float(f, buf.data(), sf_count_t(kChunkFrames));
    if (n <= 0) break;
    conv.push(buf.data(), size_t(n), &out);
  }
  // libsndfile reports decode errors (e.g. a corrupt FLAC frame) here rather than from the read.
  const int err = sf_error(f);
  HARK_CHECK(err == SF_ERR_NO_ERROR,
             name + ": decoding failed after " + std::to_string(conv.frames_in()) + " frames: " + sf_strerror(f));
  conv.finish(&out);
  return out;
}

// ---- libmpg123 ----------------------------------------------------------------------------

void init_mpg123() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A no-op since mpg123 1.27, required before; the result only matters for old versions.
    HARK_CHECK(mpg123_init() == MPG123_OK, "libmpg123 failed to initialise");
  });
}

struct Mpg123Closer {
  void operator()(mpg123_handle* h) const {
    mpg123_close(h);
    mpg123_delete(h);
  }
};

// Decodes MPEG audio (layer I/II/III). Feed mode: we hand it bytes, so files and memory share
// one path. Returns false (nothing thrown) when not a single frame could be found, so the caller
// can say "not a recognised audio format" rather than an mpg123 internal message.
bool decode_mpg123(ByteSource& src, const std::string& name, int channel, double max_seconds, std::vector<float>* out) {
  init_mpg123();
  int err = MPG123_OK;
  std::unique_ptr<mpg123_handle, Mpg123Closer> mh(mpg123_new(nullptr, &err));
  HARK_CHECK(mh != nullptr, name + ": libmpg123 could not start: " + mpg123_plain_strerror(err));
  mpg123_handle* h = mh.get();
  // Quiet: a library must not write to stderr. Gapless: drop the encoder delay and padding the
  // LAME header describes, so the duration matches the original.
  mpg123_param(h, MPG123_ADD_FLAGS, MPG123_QUIET | MPG123_GAPLESS, 0.0);
  // Ask for f32 (no 16-bit rounding) at the stream's own rate and channels; s16 is accepted
  // as a fallback for builds without float output.
  mpg123_format_none(h);
  const long* rates = nullptr;
  size_t n_rates = 0;
  mpg123_rates(&rates, &n_rates);
  for (size_t i = 0; i < n_rates; ++i) {
    mpg123_format(h, rates[i], MPG123_MONO | MPG123_STEREO, MPG123_ENC_FLOAT_32 | MPG123_ENC_SIGNED_16);
  }
  HARK_CHECK(mpg123_open_feed(h) == MPG123_OK, name + ": libmpg123 could not open a stream: " + mpg123_strerror(h));

  src.seek(0, SEEK_SET);
  std::unique_ptr<Converter> conv;
  int encoding = 0, channels = 0;
  long rate = 0;
  std::vector<unsigned char> in(1 << 16);
  std::vector<unsigned char> pcm(kChunkFrames * 2 * sizeof(float));
  std::vector<float> f32;
  bool eof = false;
  for (;;) {
    size_t done = 0;
    const int r = mpg123_read(h, pcm.data(), pcm.size(), &done);
    if (done > 0 && conv) {
      const size_t n_values = encoding == MPG123_ENC_FLOAT_32 ? done / 4 : done / 2;
      f32.resize(n_values);
      if (encoding == MPG123_ENC_FLOAT_32) {
        std::memcpy(f32.data(), pcm.data(), n_values * 4);
      } else {
        const auto* s16 = reinterpret_cast<const int16_t*>(pcm.data());
        for (size_t i = 0; i < n_values; ++i) f32[i] = float(s16[i]) * (1.0f / 32768.0f);
      }
      conv->push(f32.data(), n_values / size_t(channels), out);
    }
    if (r == MPG123_OK) continue;
    if (r == MPG123_NEW_FORMAT) {
      long new_rate = 0;
      int new_channels = 0, new_encoding = 0;
      mpg123_getformat(h, &new_rate, &new_channels, &new_encoding);
      if (conv) {
        // Concatenated MP3s can switch format; rather than splice two rates, say so.
        HARK_CHECK(new_rate == rate && new_channels == channels,
                   name + ": the MPEG stream changes format mid-way (" + std::to_string(rate) + " Hz " +
                       std::to_string(channels) + " ch to " + std::to_string(new_rate) + " Hz " +
                       std::to_string(new_channels) + " ch); convert it first");
      } else {
        conv = std::make_unique<Converter>(int(new_rate), new_channels, name, channel);
        conv->set_max_seconds(max_seconds);
      }
      rate = new_rate;
      channels = new_channels;
      encoding = new_encoding;
      HARK_CHECK(encoding == MPG123_ENC_FLOAT_32 || encoding == MPG123_ENC_SIGNED_16,
                 name + ": libmpg123 offered an unexpected sample encoding " + std::to_string(encoding));
      continue;
    }
    if (r == MPG123_NEED_MORE) {
      if (eof) break;
      const size_t got = src.read(in.data(), in.size());
      if (got == 0) {
        eof = true;
        continue;  // one more read lets mpg123 release a final buffered frame
      }
      HARK_CHECK(mpg123_feed(h, in.data(), got) == MPG123_OK,
                 name + ": libmpg123 rejected input: " + mpg123_strerror(h));
      continue;
    }
    if (r == MPG123_DONE) break;
    if (!conv) return false;  // an error before the first frame: not MPEG audio at all
    HARK_CHECK(false, name + ": MPEG decoding failed after " + std::to_string(conv->frames_in()) +
                          " frames: " + mpg123_strerror(h));
  }
  if (!conv) return false;
  conv->finish(out);
  return true;
}

// ---- dispatch ------------------------------------------------------------------------------

// Every failure to decode is the data's (CorruptData), but for formats no decoder knows
// (Unsupported) and lengths past the limit (ResourceExhausted).
std::vector<float> decode_classified(ByteSource& src, const std::string& name, int channel, double max_seconds);

std::vector<float> decode(ByteSource& src, const std::string& name, int channel, double max_seconds) {
  return classified(ErrorCode::CorruptData, name, [&] { return decode_classified(src, name, channel, max_seconds); });
}

std::vector<float> decode_classified(ByteSource& src, const std::string& name, int channel, double max_seconds) {
  HARK_CHECK_AS(CorruptData, name, src.size() > 0, name + ": file is empty (0 bytes)");
  std::vector<float> out;
  const std::string ext = lower_extension(name);
  const bool mpeg_name = ext == "mp3" || ext == "mp2" || ext == "mp1" || ext == "mpga";
  bool decoded = false;
  bool unknown = true;  // false once some decoder recognised the format but failed on it
  std::string why;

  if (looks_like_mpeg(src)) {
    decoded = decode_mpg123(src, name, channel, max_seconds, &out);
    why = "no MPEG audio frames found";
  } else {
    SF_INFO info;
    SndfilePtr f = open_sndfile(src, &info, &why, &unknown);
    if (f && (info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_MPEG) {
      f.reset();  // libsndfile recognised MPEG our sniffing missed: still use libmpg123
      decoded = decode_mpg123(src, name, channel, max_seconds, &out);
    } else if (f) {
      out = decode_sndfile(f.get(), info, name, channel, max_seconds);
      decoded = true;
    } else if (unknown && mpeg_name) {
      // MP3 files may begin with junk libmpg123 can skip; the name is our only hint then.
      decoded = decode_mpg123(src, name, channel, max_seconds, &out);
    }
  }
  HARK_CHECK_AS(Unsupported, name, decoded || !unknown, name + ": not a recognised audio format (" + why + ")");
  HARK_CHECK(decoded, name + ": broken or unsupported audio file header (" + why + ")");
  HARK_CHECK(!out.empty(), name + ": contains no audio samples");
  return out;
}

// Raw PCM goes through the Converter in chunks, so 16-bit input never needs a full f32 copy.
template <typename T>
std::vector<float> from_interleaved(const T* samples, size_t n_samples, int sample_rate, int channels,
                                    const std::string& name) {
  Converter conv(sample_rate, channels, name);  // validates rate and channels first
  HARK_CHECK(n_samples > 0, name + ": contains no audio samples");
  HARK_CHECK(samples != nullptr, name + ": null data pointer");
  HARK_CHECK(n_samples % size_t(channels) == 0, name + ": " + std::to_string(n_samples) +
                                                    " samples is not a whole number of " + std::to_string(channels) +
                                                    "-channel frames");
  const size_t n_frames = n_samples / size_t(channels);
  // Checked here as well as in push() so the reserve below is bounded.
  HARK_CHECK_AS(ResourceExhausted, "", int64_t(n_frames) <= kMaxSeconds * sample_rate,
                name + ": " + std::to_string(n_frames / size_t(sample_rate)) + " s is longer than the " +
                    std::to_string(kMaxSeconds / 3600) + " hour limit hark accepts; split the audio first");
  std::vector<float> out;
  out.reserve(size_t(double(n_frames) * kSampleRate / sample_rate) + 64);
  std::vector<float> buf;
  for (size_t f = 0; f < n_frames; f += kChunkFrames) {
    const size_t k = std::min(kChunkFrames, n_frames - f);
    const T* piece = samples + f * size_t(channels);
    if constexpr (std::is_same_v<T, float>) {
      conv.push(piece, k, &out);
    } else {
      buf.resize(k * size_t(channels));
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = float(piece[i]) * (1.0f / 32768.0f);
      conv.push(buf.data(), k, &out);
    }
  }
  conv.finish(&out);
  return out;
}

}  // namespace

std::vector<float> load_file(const std::string& path, int channel, double max_seconds) {
  FileSource src(path);
  return decode(src, path, channel, max_seconds);
}

std::vector<float> decode_memory(const void* data, size_t size, const std::string& name, int channel,
                                 double max_seconds) {
  HARK_CHECK(data != nullptr || size == 0, name + ": null data pointer");
  MemorySource src(data, size);
  return decode(src, name, channel, max_seconds);
}

std::vector<float> from_f32(const float* samples, size_t n_samples, int sample_rate, int channels) {
  return from_interleaved(samples, n_samples, sample_rate, channels, "raw f32 PCM");
}

std::vector<float> from_pcm16(const int16_t* samples, size_t n_samples, int sample_rate, int channels) {
  return from_interleaved(samples, n_samples, sample_rate, channels, "raw 16-bit PCM");
}

}  // namespace hark::audio
