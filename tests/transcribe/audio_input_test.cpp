// The public audio inputs a front end hands to transcribe(): 16-bit and float PCM at any rate and
// channel count, encoded files in memory, and whisper.rn's "data:audio/wav;base64,..." URIs; and
// the clear errors for malformed ones.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "audio/audio.h"
#include "audio/base64.h"
#include "hark/hark.hpp"
#include "model/model_test_util.h"

namespace hark {
namespace {

std::string base64(const std::string& bytes) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += a[(v >> (6 * k)) & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string wav_bytes(const std::vector<float>& mono, int rate) {
  testing::TempFile f("input.wav");
  {
    audio::WavWriter w(f.path(), rate, 1);
    w.write(mono.data(), mono.size());
    w.close();
  }
  std::ifstream in(f.path(), std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<float> tone(size_t n, int rate) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.4f * static_cast<float>(std::sin(2 * M_PI * 440.0 * double(i) / rate));
  return v;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AudioInput, Pcm16AtAnyRateAndChannelCountBecomes16kMono) {
  const int rate = 44100;
  std::vector<int16_t> stereo(2 * rate);  // 1 s
  for (int i = 0; i < rate; ++i) {
    const auto v = static_cast<int16_t>(12000 * std::sin(2 * M_PI * 440.0 * i / rate));
    stereo[2 * i] = v;
    stereo[2 * i + 1] = v;
  }
  const std::vector<float> y = pcm16_to_mono16k(stereo.data(), stereo.size(), rate, 2);
  EXPECT_EQ(y.size(), 16000u);
  double peak = 0;
  for (float v : y) peak = std::max(peak, std::abs(double(v)));
  EXPECT_NEAR(peak, 12000.0 / 32768.0, 0.02);
  const std::vector<float> f = pcm_f32_to_mono16k(y.data(), y.size(), 16000, 1);
  EXPECT_EQ(f, y);
  EXPECT_NE(
      error_of([&] { pcm16_to_mono16k(stereo.data(), 3, rate, 2); }).find("not a whole number of 2-channel frames"),
      std::string::npos)
      << error_of([&] { pcm16_to_mono16k(stereo.data(), 3, rate, 2); });
  EXPECT_NE(error_of([&] { pcm16_to_mono16k(nullptr, 10, rate, 1); }).find("null"), std::string::npos);
  EXPECT_THROW(pcm_f32_to_mono16k(y.data(), y.size(), 0, 1), Error);
}

TEST(AudioInput, WavBytesAndDataUrisDecodeLikeTheFile) {
  const std::vector<float> mono = tone(8000, 8000);  // 1 s at 8 kHz
  const std::string wav = wav_bytes(mono, 8000);
  const std::vector<float> from_bytes = decode_audio(wav.data(), wav.size());
  EXPECT_EQ(from_bytes.size(), 16000u);
  EXPECT_EQ(decode_audio_data_uri("data:audio/wav;base64," + base64(wav)), from_bytes);
  // Line breaks inside pasted base64 are skipped.
  const std::string plain = base64(wav);
  std::string wrapped;
  for (size_t i = 0; i < plain.size(); i += 76) wrapped += plain.substr(i, 76) + "\n";
  EXPECT_EQ(decode_audio_data_uri("data:audio/wav;base64," + wrapped), from_bytes);
}

TEST(AudioInput, MalformedDataUrisNameWhatIsWrong) {
  auto err = [](const std::string& uri) { return error_of([&] { decode_audio_data_uri(uri); }); };
  EXPECT_NE(err("audio/wav;base64,AAAA").find("does not start with 'data:'"), std::string::npos);
  EXPECT_NE(err("data:audio/wav;base64").find("no ','"), std::string::npos);
  EXPECT_NE(err("data:audio/wav,RIFF").find("only base64"), std::string::npos);
  EXPECT_NE(err("data:audio/wav;base64,").find("no data"), std::string::npos);
  EXPECT_NE(err("data:audio/wav;base64,UklG*kYA").find("'*' at offset 4"), std::string::npos)
      << err("data:audio/wav;base64,UklG*kYA");
  EXPECT_NE(err("data:audio/wav;base64,UklGR").find("cut short"), std::string::npos)
      << err("data:audio/wav;base64,UklGR");
  EXPECT_NE(err("data:audio/wav;base64,AA==AA").find("after '=' padding"), std::string::npos);
  // Valid base64 of something that is not audio: the audio decoder's error, naming the URI.
  const std::string e = err("data:audio/wav;base64," + base64("this is not a wav file at all"));
  EXPECT_NE(e.find("<data URI>"), std::string::npos) << e;
}

TEST(AudioInput, Base64RoundTripsEveryLength) {
  std::string bytes;
  for (int n = 0; n < 40; ++n) {
    const std::vector<uint8_t> back = audio::base64_decode(base64(bytes));
    EXPECT_EQ(std::string(back.begin(), back.end()), bytes) << n;
    bytes += static_cast<char>(n * 37 + 11);
  }
}

}  // namespace
}  // namespace hark
