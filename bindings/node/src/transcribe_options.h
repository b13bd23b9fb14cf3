// whisper.rn's TranscribeOptions (and hark's extras in the same style) as hark::TranscribeParams.
//
// Names and defaults are whisper.rn's: language 'auto', maxThreads 2 on a 4-core machine else up
// to 4, temperatureInc 0.2, ... The callbacks (onProgress, onNewSegments) are not read here: the
// job wires them to the JS thread itself.
#pragma once
#include <napi.h>

#include "hark/hark.hpp"

namespace hark_node {

// Throws Napi::TypeError naming an option of the wrong type or out of range.
hark::TranscribeParams transcribe_params_from_js(const Napi::Object& options);

// whisper.rn's default thread count: 2 on a 4-core machine, else the cores up to 4.
int default_max_threads();

}  // namespace hark_node
