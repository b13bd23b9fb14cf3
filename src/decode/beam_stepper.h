// Beam search over one window in steps (a WindowSearch), for the lockstep driver of many windows
// (decode/batched_search). Same meaning as decode/beam_search.h: the beams of slot range
// [base_slot, base_slot + beam_size), a parent's first child keeping its slot, further children
// forking by copy_sequence.
#pragma once
#include <memory>

#include "decode/window_search.h"

namespace hark::decode {

std::unique_ptr<WindowSearch> make_beam_stepper(Model& model, const SpecialTokens& st, const WindowRequest& req,
                                                int base_slot);

}  // namespace hark::decode
