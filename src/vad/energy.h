// The energy VAD of whisper.rn's realtime transcription (whisper.cpp's stream example's
// vad_simple): over the last vad_ms of audio, high-passed by a one-pole RC filter at freq_thold,
// the mean |x| of the last last_ms is compared with the mean over the whole window; a quiet end
// (energy_last <= vad_thold * energy_all) means the speaker paused. No model, no state.
//
// One difference: the reference filters in place and reads its own output back as the previous
// input, so its "high-pass" reduces to scaling every sample by the same factor (no filtering);
// hark's is the RC high-pass the option describes, so a low rumble does not count as speech.
#pragma once
#include <cstddef>

#include "hark/vad.hpp"

namespace hark::vad {

inline constexpr int kEnergyVadMinWindowMs = 2000;  // whisper.rn raises smaller windows to this

EnergyVadResult energy_vad(const float* samples, size_t n, int sample_rate, const EnergyVadOptions& o);

}  // namespace hark::vad
