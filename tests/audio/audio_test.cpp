// Tests for src/audio/: files written here with libsndfile in every format, rate and channel
// layout we claim to read, decoded back and compared with the sine they hold; plus the broken
// inputs a user will eventually feed us.
#include <gtest/gtest.h>
#include <sndfile.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "audio/audio.h"
#include "model/model_test_util.h"
#include "runtime/error.h"

namespace hark::audio {
namespace {

namespace fs = std::filesystem;

class AudioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hark_audio_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes interleaved frames with libsndfile; false when this libsndfile cannot write `format`.
  bool write_file(const std::string& p, int format, int rate, int channels,
                  const std::vector<float>& interleaved) const {
    SF_INFO info{};
    info.samplerate = rate;
    info.channels = channels;
    info.format = format;
    SNDFILE* f = sf_open(p.c_str(), SFM_WRITE, &info);
    if (f == nullptr) return false;
    const sf_count_t frames = sf_count_t(interleaved.size() / size_t(channels));
    EXPECT_EQ(sf_writef_float(f, interleaved.data(), frames), frames) << sf_strerror(f);
    sf_close(f);
    return true;
  }

  void write_bytes(const std::string& p, const std::string& bytes) const {
    std::ofstream(p, std::ios::binary) << bytes;
  }

  fs::path dir_;
};

// A sine of `seconds` at `rate`; channel c gets amplitude amp[c].
std::vector<float> sine(int rate, int channels, double seconds, double hz, const std::vector<float>& amp) {
  const size_t frames = size_t(std::llround(seconds * rate));
  std::vector<float> x(frames * size_t(channels));
  for (size_t i = 0; i < frames; ++i) {
    const double s = std::sin(2 * M_PI * hz * double(i) / rate);
    for (int c = 0; c < channels; ++c) x[i * channels + c] = float(amp[c] * s);
  }
  return x;
}

// Fits a*sin + b*cos at `hz` over the middle of `y` (16 kHz): returns the fitted amplitude and
// the RMS of what the fit leaves unexplained. Phase-agnostic, so codec delay does not matter.
struct Fit {
  double amplitude, residual_rms;
};
Fit fit_sine(const std::vector<float>& y, double hz) {
  const size_t lo = y.size() / 5, hi = y.size() - y.size() / 5;
  double ss = 0, sc = 0, cc = 0, ys = 0, yc = 0;
  for (size_t i = lo; i < hi; ++i) {
    const double s = std::sin(2 * M_PI * hz * double(i) / kSampleRate);
    const double c = std::cos(2 * M_PI * hz * double(i) / kSampleRate);
    ss += s * s, sc += s * c, cc += c * c, ys += y[i] * s, yc += y[i] * c;
  }
  const double det = ss * cc - sc * sc;
  const double a = (ys * cc - yc * sc) / det, b = (yc * ss - ys * sc) / det;
  double r = 0;
  for (size_t i = lo; i < hi; ++i) {
    const double s = std::sin(2 * M_PI * hz * double(i) / kSampleRate);
    const double c = std::cos(2 * M_PI * hz * double(i) / kSampleRate);
    r += std::pow(y[i] - a * s - b * c, 2);
  }
  return {std::hypot(a, b), std::sqrt(r / double(hi - lo))};
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const hark::Error& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_ERROR_HAS(stmt, text)                                        \
  do {                                                                      \
    const std::string what_ = error_of([&] { stmt; });                      \
    EXPECT_NE(what_.find(text), std::string::npos) << "message: " << what_; \
  } while (0)

// An empty ID3v2.3 tag with `body` padding bytes; its size field is "syncsafe" (7 bits a byte).
std::string id3v2_tag(uint32_t body) {
  std::string t = "ID3";
  t += char(3), t += char(0), t += char(0);
  for (int shift : {21, 14, 7, 0}) t += char((body >> shift) & 0x7F);
  return t + std::string(body, '\0');
}

struct FormatCase {
  const char* ext;
  int format;
  std::vector<int> rates;
  bool lossy;
};

TEST_F(AudioTest, DecodesEveryFormatRateAndLayout) {
  const FormatCase cases[] = {
      {"wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, {8000, 16000, 44100, 48000}, false},
      {"wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, {8000, 16000, 44100, 48000}, false},
      {"flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, {8000, 16000, 44100, 48000}, false},
      {"ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS, {8000, 16000, 44100, 48000}, true},
      // Opus itself only runs at 8/12/16/24/48 kHz.
      {"opus", SF_FORMAT_OGG | SF_FORMAT_OPUS, {8000, 16000, 48000}, true},
  };
  const double seconds = 1.5, hz = 440;
  for (const FormatCase& fc : cases) {
    for (int rate : fc.rates) {
      for (int channels : {1, 2}) {
        // Stereo: 0.6 and 0.2 on the two channels, which an average turns into 0.4.
        const std::vector<float> amp = channels == 1 ? std::vector<float>{0.4f} : std::vector<float>{0.6f, 0.2f};
        const std::string p = path("tone_" + std::to_string(rate) + "_" + std::to_string(channels) + "." + fc.ext);
        SCOPED_TRACE(p + " format " + std::to_string(fc.format));
        ASSERT_TRUE(write_file(p, fc.format, rate, channels, sine(rate, channels, seconds, hz, amp)))
            << "libsndfile could not write " << p << ": " << sf_strerror(nullptr);
        const std::vector<float> y = load_file(p);
        const double want_len = seconds * kSampleRate;
        if (fc.lossy) {
          // libsndfile applies Vorbis/Opus pre-skip and end trimming: the length survives.
          EXPECT_NEAR(double(y.size()), want_len, 16);
        } else {
          EXPECT_EQ(y.size(), size_t(want_len));
        }
        const Fit fit = fit_sine(y, hz);
        EXPECT_NEAR(fit.amplitude, 0.4, fc.lossy ? 0.04 : 0.002);
        EXPECT_LT(fit.residual_rms, fc.lossy ? 0.03 : 0.001);
        if (!fc.lossy && rate == kSampleRate && channels == 1) {
          // No resampling: the decoded samples are the stored ones.
          const std::vector<float> x = sine(rate, 1, seconds, hz, amp);
          for (size_t i = 0; i < y.size(); i += 97) ASSERT_NEAR(y[i], x[i], 1.0 / 32768 + 1e-7);
        }
      }
    }
  }
}

TEST_F(AudioTest, DecodesMp3) {
  // Debian's libsndfile 1.2 encodes MP3 through LAME; hark decodes it through libmpg123.
  for (int rate : {16000, 44100, 48000}) {
    for (int channels : {1, 2}) {
      const std::vector<float> amp = channels == 1 ? std::vector<float>{0.4f} : std::vector<float>{0.6f, 0.2f};
      const std::string p = path("tone_" + std::to_string(rate) + "_" + std::to_string(channels) + ".mp3");
      SCOPED_TRACE(p);
      if (!write_file(p, SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, rate, channels,
                      sine(rate, channels, 2.0, 440, amp))) {
        GTEST_SKIP() << "this libsndfile cannot encode MP3 (" << sf_strerror(nullptr)
                     << "); no MP3 encoder to make test input";
      }
      const std::vector<float> y = load_file(p);
      // Gapless decoding removes encoder delay and padding when the LAME header says how much.
      EXPECT_NEAR(double(y.size()), 2.0 * kSampleRate, 16);
      const Fit fit = fit_sine(y, 440);
      EXPECT_NEAR(fit.amplitude, 0.4, 0.04);
      EXPECT_LT(fit.residual_rms, 0.03);

      // The same bytes from memory, and under a name that says nothing, decode identically.
      std::ifstream in(p, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_EQ(decode_memory(bytes.data(), bytes.size()), y);
      const std::string renamed = path("no_extension");
      write_bytes(renamed, bytes);
      EXPECT_EQ(load_file(renamed), y);
      // An ID3v2 tag in front (as most real MP3s have) is skipped by the content sniffing.
      write_bytes(renamed, id3v2_tag(500) + bytes);
      EXPECT_EQ(load_file(renamed), y);
      // Junk in front that no sniffing sees through: the .mp3 name sends it to libmpg123,
      // which resynchronises on the first real frame.
      write_bytes(path("junk.mp3"), std::string(100, 'j') + bytes);
      EXPECT_EQ(load_file(path("junk.mp3")).size(), y.size());
    }
  }
}

TEST_F(AudioTest, MemoryDecodingMatchesFiles) {
  for (const char* ext : {"wav", "flac", "ogg"}) {
    const int format = std::string(ext) == "wav"    ? (SF_FORMAT_WAV | SF_FORMAT_PCM_16)
                       : std::string(ext) == "flac" ? (SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
                                                    : (SF_FORMAT_OGG | SF_FORMAT_VORBIS);
    const std::string p = path(std::string("m.") + ext);
    ASSERT_TRUE(write_file(p, format, 44100, 2, sine(44100, 2, 0.5, 300, {0.5f, 0.5f})));
    std::ifstream in(p, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(decode_memory(bytes.data(), bytes.size(), p), load_file(p)) << ext;
  }
}

TEST_F(AudioTest, FlacWithId3TagIsNotMistakenForMp3) {
  // Some taggers put ID3v2 in front of FLAC; an ID3 tag alone must not mean "MP3".
  const std::string p = path("t.flac");
  ASSERT_TRUE(write_file(p, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16000, 1, sine(16000, 1, 0.2, 440, {0.5f})));
  std::ifstream in(p, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string tagged = id3v2_tag(300) + bytes;
  EXPECT_EQ(decode_memory(tagged.data(), tagged.size()), load_file(p));
}

TEST_F(AudioTest, RealSpeechClips) {
  const std::string shared = hark::testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "no ../shared folder beside the repository (set HARK_SHARED_DIR)";
  const fs::path dir = fs::path(shared) / "audio";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " not present";
  int n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".wav") continue;
    ++n;
    SF_INFO info{};
    SNDFILE* f = sf_open(entry.path().c_str(), SFM_READ, &info);
    ASSERT_NE(f, nullptr) << entry.path();
    std::vector<float> raw(size_t(info.frames) * size_t(info.channels));
    sf_readf_float(f, raw.data(), info.frames);
    sf_close(f);
    const std::vector<float> y = load_file(entry.path().string());
    EXPECT_EQ(double(y.size()), std::round(double(info.frames) * kSampleRate / info.samplerate)) << entry.path();
    if (info.samplerate == kSampleRate && info.channels == 1) {
      EXPECT_EQ(y, raw) << entry.path();
    }
    double energy = 0;
    for (float v : y) energy += double(v) * v;
    EXPECT_GT(energy / double(y.size()), 1e-6) << entry.path() << " decoded to near silence";
  }
  if (n == 0) GTEST_SKIP() << "no .wav clips in " << dir;
}

TEST_F(AudioTest, RawPcm) {
  // 16-bit stereo at 48 kHz: one channel at full scale, the other silent, averages to 0.5.
  std::vector<int16_t> pcm(48000 * 2);
  for (size_t i = 0; i < pcm.size(); i += 2) {
    pcm[i] = int16_t(std::lround(32767 * std::sin(2 * M_PI * 500 * double(i / 2) / 48000)));
  }
  std::vector<float> y = from_pcm16(pcm.data(), pcm.size(), 48000, 2);
  EXPECT_EQ(y.size(), 16000u);
  EXPECT_NEAR(fit_sine(y, 500).amplitude, 0.5, 0.002);

  const std::vector<float> f32 = sine(16000, 1, 0.25, 1000, {0.3f});
  EXPECT_EQ(from_f32(f32.data(), f32.size(), 16000, 1), f32);  // 16 kHz mono passes through

  EXPECT_ERROR_HAS(from_pcm16(pcm.data(), pcm.size(), 0, 2), "unsupported sample rate 0 Hz");
  EXPECT_ERROR_HAS(from_f32(f32.data(), f32.size(), -8000, 1), "unsupported sample rate");
  EXPECT_ERROR_HAS(from_f32(f32.data(), f32.size(), 16000, 0), "unsupported channel count 0");
  EXPECT_ERROR_HAS(from_f32(f32.data(), 0, 16000, 1), "contains no audio samples");
  EXPECT_ERROR_HAS(from_pcm16(pcm.data(), 3, 16000, 2), "not a whole number of 2-channel frames");
  // A length that would be 9 hours is refused before a single sample is read.
  EXPECT_ERROR_HAS(from_pcm16(pcm.data(), size_t(9) * 3600 * 16000, 16000, 1), "8 hour limit");
  std::vector<float> bad = f32;
  bad[1000] = INFINITY;
  EXPECT_ERROR_HAS(from_f32(bad.data(), bad.size(), 16000, 1), "sample 1000 at 0.062 s is infinite");
}

TEST_F(AudioTest, ResampleKeepsLengthAndContent) {
  for (int in_rate : {8000, 11025, 22050, 44100, 48000, 96000}) {
    const std::vector<float> x = sine(in_rate, 1, 1.3, 440, {0.5f});
    const std::vector<float> y = resample(x.data(), x.size(), in_rate, kSampleRate);
    EXPECT_EQ(y.size(), size_t(std::llround(double(x.size()) * kSampleRate / in_rate))) << in_rate;
    const Fit fit = fit_sine(y, 440);
    EXPECT_NEAR(fit.amplitude, 0.5, 0.001) << in_rate;
    EXPECT_LT(fit.residual_rms, 0.001) << in_rate;
  }
  const std::vector<float> x = sine(16000, 1, 0.1, 440, {0.5f});
  EXPECT_EQ(resample(x.data(), x.size(), 16000, 16000), x);
  EXPECT_ERROR_HAS(resample(x.data(), x.size(), 0, 16000), "unsupported sample rate 0 Hz");
}

TEST_F(AudioTest, ConverterStreamsLikeOneShot) {
  const std::vector<float> x = sine(44100, 2, 2.0, 440, {0.3f, 0.5f});
  std::vector<float> whole, pieces;
  {
    Converter c(44100, 2, "whole");
    c.push(x.data(), x.size() / 2, &whole);
    c.finish(&whole);
  }
  {
    Converter c(44100, 2, "pieces");
    size_t done = 0;
    for (size_t step = 1; done < x.size() / 2; step = step * 3 + 7) {
      const size_t k = std::min(step, x.size() / 2 - done);
      c.push(x.data() + 2 * done, k, &pieces);
      done += k;
    }
    c.finish(&pieces);
  }
  ASSERT_EQ(whole.size(), pieces.size());
  ASSERT_EQ(whole.size(), 32000u);
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_NEAR(whole[i], pieces[i], 1e-5) << i;
}

TEST_F(AudioTest, FileErrors) {
  EXPECT_ERROR_HAS(load_file(path("missing.wav")), "missing.wav: cannot open audio file");
  EXPECT_ERROR_HAS(load_file(dir_.string()), "is a directory");

  write_bytes(path("empty.wav"), "");
  EXPECT_ERROR_HAS(load_file(path("empty.wav")), "empty.wav: file is empty");

  write_bytes(path("text.wav"), "This is not audio, just a text file with a .wav name.\n");
  EXPECT_ERROR_HAS(load_file(path("text.wav")), "text.wav: not a recognised audio format");
  write_bytes(path("text.mp3"), "Nor is this an MP3, whatever its name says.\n");
  EXPECT_ERROR_HAS(load_file(path("text.mp3")), "text.mp3: not a recognised audio format");
  const std::string junk = "\x01\x02garbage";
  EXPECT_ERROR_HAS(decode_memory(junk.data(), junk.size()), "<memory>: not a recognised audio format");
  EXPECT_ERROR_HAS(decode_memory(nullptr, 0), "<memory>: file is empty");

  // A real WAV cut inside its header.
  ASSERT_TRUE(write_file(path("ok.wav"), SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, sine(16000, 1, 0.5, 440, {0.5f})));
  std::ifstream in(path("ok.wav"), std::ios::binary);
  const std::string wav((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_bytes(path("cut.wav"), wav.substr(0, 30));
  EXPECT_ERROR_HAS(load_file(path("cut.wav")), "cut.wav: broken or unsupported audio file header (Error in WAV file");
  // Cut inside the data: what is there decodes (a partial recording is still a recording).
  write_bytes(path("short.wav"), wav.substr(0, 44 + 2 * 1000));
  EXPECT_EQ(load_file(path("short.wav")).size(), 1000u);
  // A header with no samples after it.
  ASSERT_TRUE(write_file(path("zero.wav"), SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, {}));
  EXPECT_ERROR_HAS(load_file(path("zero.wav")), "zero.wav: contains no audio samples");
}

TEST_F(AudioTest, NanSamplesAreRejectedWithTheirIndex) {
  std::vector<float> x = sine(16000, 2, 0.5, 440, {0.5f, 0.5f});
  x[2 * 1234 + 1] = std::nanf("");
  ASSERT_TRUE(write_file(path("nan.wav"), SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 2, x));
  EXPECT_ERROR_HAS(load_file(path("nan.wav")), "nan.wav: sample 1234 (channel 1) at 0.077 s is NaN");
}

// A canonical 44-byte PCM WAV header with the given fields, then `data_bytes` zero bytes.
std::string wav_header(uint16_t format, uint16_t channels, uint32_t rate, uint16_t bits, uint32_t data_bytes) {
  std::string h;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) h += char((v >> (8 * i)) & 0xFF);
  };
  auto u16 = [&](uint16_t v) {
    h += char(v & 0xFF);
    h += char(v >> 8);
  };
  const uint16_t block = uint16_t(channels * (bits / 8));
  h += "RIFF";
  u32(36 + data_bytes);
  h += "WAVE";
  h += "fmt ";
  u32(16);
  u16(format);
  u16(channels);
  u32(rate);
  u32(rate * block);
  u16(block);
  u16(bits);
  h += "data";
  u32(data_bytes);
  return h + std::string(data_bytes, '\0');
}

TEST_F(AudioTest, AbsurdHeaderValues) {
  // Sanity check of the hand-made header: a sound one decodes.
  write_bytes(path("good.wav"), wav_header(1, 1, 16000, 16, 3200));
  EXPECT_EQ(load_file(path("good.wav")).size(), 1600u);

  struct Case {
    const char* name;
    std::string bytes;
    const char* expect;  // libsndfile's complaint, or ours where libsndfile accepts the value
  } cases[] = {
      {"zero_channels.wav", wav_header(1, 0, 16000, 16, 3200), "Channel count is zero"},
      {"many_channels.wav", wav_header(1, 60000, 16000, 16, 3200), "Too many channels"},
      {"300_channels.wav", wav_header(1, 300, 16000, 16, 6000), "unsupported channel count 300"},
      {"zero_rate.wav", wav_header(1, 1, 0, 16, 3200), "broken or unsupported audio file header"},
      {"huge_rate.wav", wav_header(1, 1, 4000000000u, 16, 3200), "broken or unsupported"},
      {"tiny_rate.wav", wav_header(1, 1, 1, 16, 3200), "unsupported sample rate 1 Hz"},
      {"fast_rate.wav", wav_header(1, 1, 800000, 16, 3200), "unsupported sample rate 800000 Hz"},
      {"zero_bits.wav", wav_header(1, 1, 16000, 0, 3200), "broken or unsupported"},
  };
  for (const Case& c : cases) {
    write_bytes(path(c.name), c.bytes);
    // Either libsndfile refuses the header or our range checks do; never a crash or a decode.
    const std::string what = error_of([&] { load_file(path(c.name)); });
    EXPECT_NE(what.find(c.name), std::string::npos) << what;
    EXPECT_NE(what.find(c.expect), std::string::npos) << what;
  }
  // A data size far beyond the file: libsndfile trusts the file, not the header; so do we.
  std::string lying = wav_header(1, 1, 16000, 16, 3200);
  lying[40] = lying[41] = lying[42] = char(0xFF), lying[43] = char(0x7F);
  write_bytes(path("lying.wav"), lying);
  EXPECT_EQ(load_file(path("lying.wav")).size(), 1600u);
}

TEST_F(AudioTest, WavWriterRoundTrips) {
  const std::vector<float> x = sine(16000, 1, 0.5, 440, {0.5f});
  {
    WavWriter w(path("f32.wav"), 16000, 1, WavWriter::Format::kFloat32);
    w.write(x.data(), 3000);
    w.write(x.data() + 3000, x.size() - 3000);
    EXPECT_EQ(w.frames_written(), int64_t(x.size()));
  }
  EXPECT_EQ(load_file(path("f32.wav")), x);  // f32 WAV at 16 kHz mono is lossless

  WavWriter w16(path("s16.wav"), 16000, 1);
  std::vector<float> loud = x;
  loud[10] = 1.7f, loud[11] = -3.0f;  // must clip, not wrap around
  w16.write(loud.data(), loud.size());
  const std::vector<int16_t> pcm = {100, -100, 32767};
  w16.write(pcm.data(), pcm.size());
  // Before close: the header is kept current, so a reader (or a crash) sees every frame.
  std::vector<float> y = load_file(path("s16.wav"));
  ASSERT_EQ(y.size(), x.size() + 3);
  EXPECT_NEAR(y[10], 32767.0 / 32768, 1e-6);
  EXPECT_NEAR(y[11], -1.0, 1e-6);
  EXPECT_NEAR(y[100], x[100], 1.0 / 32768);
  EXPECT_NEAR(y[x.size()], 100.0 / 32768, 1e-7);
  w16.close();
  EXPECT_ERROR_HAS(w16.write(x.data(), 1), "write after close");

  WavWriter stereo(path("st.wav"), 44100, 2);
  std::vector<float> bad(20, 0.0f);
  bad[13] = std::nanf("");
  EXPECT_ERROR_HAS(stereo.write(bad.data(), 10), "NaN sample at frame 6");

  EXPECT_ERROR_HAS(WavWriter(path("r.wav"), 0, 1), "cannot write a WAV at 0 Hz");
  EXPECT_ERROR_HAS(WavWriter(path("c.wav"), 16000, 0), "cannot write a WAV with 0 channels");
  EXPECT_ERROR_HAS(WavWriter(path("no/such/dir/x.wav"), 16000, 1), "cannot create WAV file");
}

// One channel alone (faster-whisper's split_stereo): each side as it was, the default the average.
TEST_F(AudioTest, OneChannelAlone) {
  const std::vector<float> left = sine(16000, 1, 0.5, 440, {0.5f});
  const std::vector<float> right = sine(16000, 1, 0.5, 660, {0.25f});
  std::vector<float> both;
  for (size_t i = 0; i < left.size(); ++i) both.insert(both.end(), {left[i], right[i]});
  {
    WavWriter w(path("lr.wav"), 16000, 2, WavWriter::Format::kFloat32);
    w.write(both.data(), left.size());
  }
  EXPECT_EQ(load_file(path("lr.wav"), 0), left);
  EXPECT_EQ(load_file(path("lr.wav"), 1), right);
  const std::vector<float> mixed = load_file(path("lr.wav"));
  ASSERT_EQ(mixed.size(), left.size());
  EXPECT_NEAR(mixed[100], (left[100] + right[100]) / 2, 1e-7);
  std::ifstream in(path("lr.wav"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(decode_memory(bytes.data(), bytes.size(), "<memory>", 1), right);
  try {
    load_file(path("lr.wav"), 2);
    ADD_FAILURE() << "channel 2 of a stereo file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(e.field(), "channel");
    EXPECT_NE(std::string(e.what()).find("has 2 channels, no channel 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hark::audio
