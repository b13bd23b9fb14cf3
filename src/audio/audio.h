// audio: everything hark hears arrives through here as 16 kHz mono f32, the only form Whisper
// takes. Files (WAV, FLAC, OGG/Vorbis, OGG/Opus, MP3 and the other formats libsndfile reads),
// encoded files already in memory, and raw interleaved PCM at any rate and channel count are
// decoded, downmixed by averaging the channels, and resampled with libsoxr (high quality).
//
// Every function throws hark::Error with a message naming the source (file name or "<memory>")
// and what was wrong: missing or empty file, not a recognised audio format, no samples, a rate or
// channel count out of range, a NaN/Inf sample (rejected with its index, never patched over),
// or audio longer than kMaxSeconds (refused so a lying header cannot make us allocate gigabytes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hark::audio {

namespace detail {
class SoxrStream;
}

inline constexpr int kSampleRate = 16000;      // what Whisper was trained on
inline constexpr int kMinSourceRate = 1000;    // below this nothing intelligible survives
inline constexpr int kMaxSourceRate = 768000;  // the highest rate real hardware records at
inline constexpr int kMaxChannels = 256;
inline constexpr int64_t kMaxSeconds = 8 * 3600;  // bounds memory: 8 h at 16 kHz is 1.8 GB f32

// Decodes the file at `path`. The format is detected from the content; the name matters only
// for a .mp3/.mp2/.mp1/.mpga file whose MPEG frames hide behind leading junk.
// channel -1 (the default) averages the channels; else that channel (from 0) alone, which
// must exist (faster-whisper's split_stereo).
// max_seconds > 0: audio longer than that is refused (ResourceExhausted) as soon as the decoder
// passes it, never holding more.
std::vector<float> load_file(const std::string& path, int channel = -1, double max_seconds = 0);

// Decodes a complete encoded file held in memory. `name` prefixes error messages and serves as
// the name load_file would see (its extension is the same MPEG hint).
std::vector<float> decode_memory(const void* data, size_t size, const std::string& name = "<memory>", int channel = -1,
                                 double max_seconds = 0);

// Raw interleaved PCM: `n_samples` counts values over all channels, so it must be a multiple of
// `channels`. 16-bit values are scaled by 1/32768, as libsndfile does for files.
std::vector<float> from_pcm16(const int16_t* samples, size_t n_samples, int sample_rate, int channels);
std::vector<float> from_f32(const float* samples, size_t n_samples, int sample_rate, int channels);

// Resamples mono audio from `in_rate` to `out_rate` (libsoxr, high quality). The result has
// round(n * out_rate / in_rate) samples, so durations are preserved exactly to the sample.
std::vector<float> resample(const float* mono, size_t n, int in_rate, int out_rate);

// Converter: the streaming form of the above, for audio that arrives in pieces (decoders, live
// capture). Interleaved f32 at any supported rate/channel count in, 16 kHz mono out. It checks
// every sample for NaN/Inf and the running length against kMaxSeconds.
class Converter {
 public:
  // `name` prefixes error messages. Throws on a rate or channel count out of range. channel -1:
  // the channels averaged; else that channel (from 0) alone, which must exist.
  Converter(int sample_rate, int channels, std::string name, int channel = -1);
  ~Converter();
  Converter(const Converter&) = delete;
  Converter& operator=(const Converter&) = delete;

  // Appends the 16 kHz samples that `n_frames` more interleaved input frames yield to *out.
  void push(const float* interleaved, size_t n_frames, std::vector<float>* out);
  // Refuses (ResourceExhausted) input longer than `seconds` as soon as it passes them, so no more
  // than that much audio is ever held; seconds <= 0: only the 8 hour limit.
  void set_max_seconds(double seconds);
  // Flushes the resampler's delay line into *out. Call once after the last push.
  void finish(std::vector<float>* out);

  int64_t frames_in() const { return frames_in_; }

 private:
  std::string name_;
  int rate_;
  int channels_;
  int channel_;
  int64_t frames_in_ = 0;
  int64_t max_frames_in_;
  double max_seconds_ = 0;  // set_max_seconds: the caller's limit (0: none but kMaxSeconds)
  int64_t samples_out_ = 0;
  bool finished_ = false;
  std::vector<float> mono_;                        // scratch: the downmixed piece
  std::unique_ptr<detail::SoxrStream> resampler_;  // null when the input is already 16 kHz
};

// WavWriter: writes a WAV file as audio arrives (e.g. recording a live session). The header is
// rewritten after every write, so a crash still leaves a file every reader accepts.
class WavWriter {
 public:
  enum class Format { kPcm16, kFloat32 };

  // Creates (truncates) `path`. Throws if it cannot be created or the rate/channels are invalid.
  WavWriter(const std::string& path, int sample_rate, int channels = 1, Format format = Format::kPcm16);
  ~WavWriter();  // closes; errors at this point are swallowed, call close() to see them
  WavWriter(const WavWriter&) = delete;
  WavWriter& operator=(const WavWriter&) = delete;

  // Interleaved frames. Floats beyond [-1, 1] are clipped for kPcm16; NaN/Inf are rejected.
  void write(const float* interleaved, size_t n_frames);
  void write(const int16_t* interleaved, size_t n_frames);
  void close();

  int64_t frames_written() const { return frames_; }

 private:
  void check_open() const;
  std::string path_;
  int channels_;
  void* file_ = nullptr;  // SNDFILE*, kept out of this header
  int64_t frames_ = 0;
};

}  // namespace hark::audio
