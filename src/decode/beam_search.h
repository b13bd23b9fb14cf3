// Beam search over one window, with the meaning of OpenAI's BeamSearchDecoder (decoding.py), used
// at temperature 0 when beam_size > 1:
//   - every step, each live beam proposes its beam_size + 1 most likely next tokens (log-probs of
//     the rule-filtered logits, rules applied to each beam's own tokens); all proposals are ranked
//     by summed log-prob; walking down that ranking, end-of-text proposals are finished
//     candidates and the others become the next beams until beam_size are kept;
//   - finished candidates are gathered, best first, until round(beam_size * patience) (at least
//     one) are held; then the search stops. At the token cap or a full text context it stops too,
//     and the best live beams fill the candidates up to beam_size;
//   - the kept candidate has the best summed log-prob over the length penalty (candidate_score).
// All beams step as ONE batch (decode_batch, a row per beam, the rows in slot order so the runner
// attends to them in one node). Each beam owns a KV-cache slot; a beam's first child keeps its
// parent's slot, further children take the slots of beams that had none and get their parent's
// positions copied there (copy on fork): a step copies (beams - distinct parents) histories.
//
// The search is a decode::WindowSearch (decode/window_search.h), so the batched pipeline steps
// the beams of many windows in one graph; run_window_search runs it on one window.
#pragma once
#include <memory>
#include <vector>

#include "decode/window_search.h"

namespace hark::decode {

// The beams in slots [base_slot, base_slot + beam_size) (reserved by the caller).
std::unique_ptr<WindowSearch> make_beam_search(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                                               int base_slot);

// round(beam_size * patience) as Python rounds (half to even), at least 1.
int beam_max_candidates(int beam_size, float patience);

}  // namespace hark::decode
