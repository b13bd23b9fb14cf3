// libFuzzer entry point for the model file parser (not part of hark_tests: the test glob takes
// *_test.cpp only). Any input must either parse or throw hark::Error; anything else -- a crash,
// an out-of-bounds read under ASan, another exception type -- is a bug.
//
// Built by the HARK_FUZZ CMake option (clang; README: Fuzzing) as build-fuzz/model_loader_fuzz.
// Seed corpus: a micro q4_0 model from make-test-model (3 MB) and ../shared/model-headers/*.bin;
// run with -max_len=4000000. 150 s (22k inputs) found nothing.
#include <cstddef>
#include <cstdint>

#include "model/model_file.h"
#include "runtime/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const hark::ModelHeader h = hark::parse_model_header(data, size, "fuzz");
    hark::parse_model_tensors(data, size, h, "fuzz");
  } catch (const hark::Error&) {
  }
  return 0;
}
