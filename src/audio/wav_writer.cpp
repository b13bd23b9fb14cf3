// WavWriter: libsndfile writing 16-bit or f32 WAV.
#include <sndfile.h>

#include <cmath>

#include "audio/audio.h"
#include "runtime/error.h"

namespace hark::audio {

WavWriter::WavWriter(const std::string& path, int sample_rate, int channels, Format format)
    : path_(path), channels_(channels) {
  HARK_CHECK(sample_rate >= kMinSourceRate && sample_rate <= kMaxSourceRate,
             path + ": cannot write a WAV at " + std::to_string(sample_rate) + " Hz (expected " +
                 std::to_string(kMinSourceRate) + " to " + std::to_string(kMaxSourceRate) + " Hz)");
  HARK_CHECK(channels >= 1 && channels <= kMaxChannels, path + ": cannot write a WAV with " + std::to_string(channels) +
                                                            " channels (expected 1 to " + std::to_string(kMaxChannels) +
                                                            ")");
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | (format == Format::kPcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT);
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  HARK_CHECK(f != nullptr, path + ": cannot create WAV file: " + sf_strerror(nullptr));
  file_ = f;
  // Rewrite the header's sizes on every write: a recording cut short by a crash stays readable.
  sf_command(f, SFC_SET_UPDATE_HEADER_AUTO, nullptr, SF_TRUE);
  // Clip floats beyond full scale instead of letting them wrap around to the opposite sign.
  sf_command(f, SFC_SET_CLIPPING, nullptr, SF_TRUE);
}

WavWriter::~WavWriter() {
  if (file_ != nullptr) sf_close(static_cast<SNDFILE*>(file_));
}

void WavWriter::check_open() const { HARK_CHECK(file_ != nullptr, path_ + ": write after close"); }

void WavWriter::write(const float* interleaved, size_t n_frames) {
  check_open();
  const size_t n = n_frames * size_t(channels_);
  for (size_t i = 0; i < n; ++i) {
    // A NaN would be written as-is to a float WAV, and hark's own loader would then refuse it.
    HARK_CHECK(std::isfinite(interleaved[i]),
               path_ + ": refusing to write a " + (std::isnan(interleaved[i]) ? "NaN" : "infinite") +
                   " sample at frame " + std::to_string(frames_ + int64_t(i / size_t(channels_))));
  }
  const sf_count_t wrote = sf_writef_float(static_cast<SNDFILE*>(file_), interleaved, sf_count_t(n_frames));
  HARK_CHECK(wrote == sf_count_t(n_frames), path_ + ": write failed after " + std::to_string(frames_ + wrote) +
                                                " frames: " + sf_strerror(static_cast<SNDFILE*>(file_)));
  frames_ += wrote;
}

void WavWriter::write(const int16_t* interleaved, size_t n_frames) {
  check_open();
  const sf_count_t wrote = sf_writef_short(static_cast<SNDFILE*>(file_), interleaved, sf_count_t(n_frames));
  HARK_CHECK(wrote == sf_count_t(n_frames), path_ + ": write failed after " + std::to_string(frames_ + wrote) +
                                                " frames: " + sf_strerror(static_cast<SNDFILE*>(file_)));
  frames_ += wrote;
}

void WavWriter::close() {
  if (file_ == nullptr) return;
  SNDFILE* f = static_cast<SNDFILE*>(file_);
  file_ = nullptr;
  HARK_CHECK(sf_close(f) == 0, path_ + ": closing the WAV file failed");
}

}  // namespace hark::audio
