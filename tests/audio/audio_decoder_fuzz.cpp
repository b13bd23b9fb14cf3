// libFuzzer entry point for the audio decoders: arbitrary bytes through decode_memory(), once
// under a neutral name and once under a .mp3 name (which also routes them to libmpg123).
// Any hark::Error is a correct rejection; a crash, hang, sanitizer report or runaway allocation
// is a bug. Not part of hark_tests (the name does not end in _test.cpp); built by the HARK_FUZZ
// CMake option (clang; README: Fuzzing) as build-fuzz/audio_decoder_fuzz. Run it with
// ASAN_OPTIONS=detect_leaks=0: libvorbis leaks on some malformed Ogg headers.
#include <cstddef>
#include <cstdint>

#include "audio/audio.h"
#include "runtime/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const char* name : {"fuzz", "fuzz.mp3"}) {
    try {
      hark::audio::decode_memory(data, size, name);
    } catch (const hark::Error&) {
    }
  }
  return 0;
}
