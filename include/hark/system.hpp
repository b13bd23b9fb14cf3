// hark: the library and the machine, the C++ API: its version, what the build and processor
// offer, the devices a Context can compute on, and Whisper's languages.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "hark/export.h"

namespace hark {

// "0.1.0": the library's version (the same as HARK_VERSION_STRING of the headers it was built with).
HARK_API const char* version();
// The machine and build as hark sees them: "AVX512 = 1 | AVX2 = 1 | ... | BLAS = 1".
HARK_API std::string system_info();

// Whisper's languages, by the index of their token: 0 "en", 1 "zh", ... language_count() - 1.
HARK_API int language_count();
HARK_API int language_id(std::string_view code);  // -1 when unknown
HARK_API const char* language_code_at(int id);    // nullptr when out of range
HARK_API const char* language_name_at(int id);  // "english", "chinese", ... (OpenAI's names); nullptr when out of range

// The device a Context computes on, and why it is not a GPU when one was asked for.
struct DeviceChoice {
  std::string name;         // registry name: "cpu", "cpu-ref", ...
  std::string description;  // e.g. the CPU's SIMD level
  bool gpu = false;
  std::string reason_no_gpu;  // empty when gpu, or when no GPU was asked for
};

// Devices this build can compute on, best first.
HARK_API std::vector<DeviceChoice> devices();

}  // namespace hark
