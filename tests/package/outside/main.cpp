// An outside program, built against an installed hark the way a user builds one (pkg-config or
// find_package), so the test sees what an installed tree really offers: the headers, the exported
// symbols, and hark::Error crossing the library boundary.
//   outside MODEL   prints hark's version and how many segments a short tone gave
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <hark/version.h>
#include <hark/hark.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  std::printf("hark %s (headers %s)\n", hark::version(), HARK_VERSION_STRING);
  if (std::strcmp(hark::version(), HARK_VERSION_STRING) != 0) {
    std::fprintf(stderr, "library and headers disagree on the version\n");
    return 1;
  }

  // The exception's type must be the same on both sides of the boundary, or this catch misses.
  try {
    hark::Context::load("/nonexistent/model.bin");
    std::fprintf(stderr, "loading a missing model did not throw\n");
    return 1;
  } catch (const hark::Error& e) {
    std::printf("caught hark::Error\n");
  }

  try {
    auto ctx = hark::Context::load(argv[1]);
    // Two seconds of a 440 Hz tone: any model transcribes it to something (a random one too).
    std::vector<float> tone(2 * hark::kSampleRate);
    for (size_t i = 0; i < tone.size(); ++i)
      tone[i] = 0.3f * std::sin(2.0f * 3.14159265f * 440.0f * static_cast<float>(i) / hark::kSampleRate);
    hark::TranscribeParams params;
    params.max_tokens_per_window = 8;  // a random model may never say "end": keep it short
    hark::Transcript t = ctx->transcribe(tone, params);
    std::printf("model %s, segments: %zu\n", ctx->info().size_name.c_str(), t.segments.size());
  } catch (const hark::Error& e) {
    std::fprintf(stderr, "hark::Error: %s\n", e.what());
    return 1;
  }
  return 0;
}
