// TranscribeParams for end-to-end tests on random-weight models: the library's defaults without
// temperature fallback. Such a model is never confident (its average log-probability is far below
// -1), so with the default fallback every window would be decoded at all six temperatures, five
// candidates each above 0: the same checks, about 20x the time. Tests of fallback set it back.
#pragma once
#include "hark/hark.hpp"

namespace hark::testing {

inline TranscribeParams fast_params() {
  TranscribeParams p;
  p.temperature_inc = 0.0f;
  return p;
}

}  // namespace hark::testing
