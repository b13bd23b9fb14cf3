// whisper.rn's TranscribeOptions (and hark's extras in the same style) as hark::TranscribeParams.
//
// Names and defaults are whisper.rn's: language 'auto', maxThreads 2 on a 4-core machine else up
// to 4, temperatureInc 0.2, ... The callbacks (onProgress, onNewSegments) are not read here: the
// job wires them to the JS thread itself.
#pragma once
#include <napi.h>

#include "hark/hark.hpp"

namespace hark_node {

// Throws Napi::TypeError naming an option of the wrong type or of a number that does not fit its
// field; the values' ranges are the library's to check (its error names the C++ field).
hark::TranscribeParams transcribe_params_from_js(const Napi::Object& options);

// The TranscribeOptions name of a TranscribeParams field an error names ("beam_size" is
// 'beamSize', "thold_pt" 'wordThold'); "" for none.
std::string js_option_name(const std::string& field);

// whisper.rn's default thread count: 2 on a 4-core machine, else the cores up to 4.
int default_max_threads();

}  // namespace hark_node
