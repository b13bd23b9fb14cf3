// make-test-audio: writes a short test recording in the format its file name asks for (.wav, .flac,
// .ogg, .mp3), for tests that need a user's kind of file. Debian's sox writes no MP3 (that needs
// libsox-fmt-mp3, which pulls in LAME); libsndfile, which hark already links, encodes it through
// LAME. The sound is `--from` a file (any format libsndfile reads, e.g. espeak-ng's speech), or
// tones that glide in pitch, 2.2 s on and 0.8 s off, at 16 kHz mono.
#include <sndfile.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: make-test-audio OUT.{wav,flac,ogg,mp3} [--from IN] [--seconds S]\n"
               "  --from     the sound to write (any format libsndfile reads); default: tones\n"
               "  --seconds  length of the tones (default 3)\n");
  return 2;
}

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::strlen(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// libsndfile's format for a file name, 0 for one it cannot write here.
int format_for(const std::string& path) {
  if (ends_with(path, ".wav")) return SF_FORMAT_WAV | SF_FORMAT_PCM_16;
  if (ends_with(path, ".flac")) return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
  if (ends_with(path, ".ogg")) return SF_FORMAT_OGG | SF_FORMAT_VORBIS;
  if (ends_with(path, ".mp3")) return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
  return 0;
}

std::vector<float> tones(double seconds, int rate) {
  std::vector<float> a(static_cast<size_t>(seconds * rate));
  double phase = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    phase += 2 * M_PI * (220.0 + 60.0 * std::sin(1.3 * t)) / rate;
    a[i] = std::fmod(t, 3.0) < 2.2 ? static_cast<float>(0.3 * std::sin(phase)) : 0.0f;
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return usage();
  const std::string out = argv[1];
  std::string from;
  double seconds = 3.0;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--from" && i + 1 < argc) {
      from = argv[++i];
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
      if (!(seconds > 0 && seconds <= 3600)) return usage();
    } else {
      return usage();
    }
  }
  const int format = format_for(out);
  if (!format) {
    std::fprintf(stderr, "make-test-audio: %s: the name must end in .wav, .flac, .ogg or .mp3\n", out.c_str());
    return 2;
  }

  SF_INFO info{};
  std::vector<float> samples;
  if (from.empty()) {
    info.samplerate = 16000;
    info.channels = 1;
    samples = tones(seconds, info.samplerate);
  } else {
    SNDFILE* in = sf_open(from.c_str(), SFM_READ, &info);
    if (!in) {
      std::fprintf(stderr, "make-test-audio: %s: %s\n", from.c_str(), sf_strerror(nullptr));
      return 1;
    }
    samples.resize(static_cast<size_t>(info.frames) * static_cast<size_t>(info.channels));
    samples.resize(static_cast<size_t>(sf_readf_float(in, samples.data(), info.frames)) *
                   static_cast<size_t>(info.channels));
    sf_close(in);
  }

  SF_INFO oi{};
  oi.samplerate = info.samplerate;
  oi.channels = info.channels;
  oi.format = format;
  SNDFILE* o = sf_open(out.c_str(), SFM_WRITE, &oi);
  if (!o) {
    std::fprintf(stderr, "make-test-audio: cannot write %s: %s\n", out.c_str(), sf_strerror(nullptr));
    return 1;
  }
  const sf_count_t frames = static_cast<sf_count_t>(samples.size()) / info.channels;
  const bool ok = sf_writef_float(o, samples.data(), frames) == frames;
  if (sf_close(o) != 0 || !ok) {
    std::fprintf(stderr, "make-test-audio: writing %s failed\n", out.c_str());
    std::remove(out.c_str());
    return 1;
  }
  return 0;
}
