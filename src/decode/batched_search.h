// The search of several independent windows in lockstep (the batched long-audio pipeline): chunks
// already encoded into windows, each window's prefix (prompt and start sequence) fed a token a
// step, then every window's search (decode/window_search.h: greedy, best-of candidates or beams)
// names its rows, and all rows of all windows run as ONE decode_rows step (each weight read once
// per step for all of them). Every window keeps its own rules, history, KV slots and position and
// stops on its own: a finished search drops out of the next step.
//
// BatchDecoder is continuous: a window whose search ended can start another (the next chunk, or
// the same chunk at the next fallback temperature) while the others go on, at its own position,
// so steps stay full when chunks end at different times. decode_windows_batched starts a set of
// windows together and runs them to the end.
//
// The decoder has lanes: lane l runs one search at a time, in slots [l * k, (l + 1) * k) (k: the
// slots per lane given, at least search_slots of every request), against the window it was
// started on. Each search's result equals decode_window's for its window alone.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "decode/greedy.h"

namespace hark::decode {

class WindowSearch;

class BatchDecoder {
 public:
  // n_lanes lanes of slots_per_lane slots each (reserved here).
  BatchDecoder(SearchModel& model, const SpecialTokens& st, int n_lanes, int slots_per_lane);
  ~BatchDecoder();

  // Starts a search of req on lane `lane` (which must be idle) against model window `window`
  // (encoded, reserved); its prefix is fed from position 0 in the next steps. seed: the sampling
  // seed (T > 0). Throws hark::Error on a bad request.
  void start(int lane, int window, const WindowRequest& req, uint64_t seed);
  bool running(int lane) const;
  bool any_running() const;
  // One decoder step of every running lane. Lanes whose search ended in it are idle afterwards,
  // their results (lane, tokens) in finished(), cleared by the next step. Not Ok: aborted.
  ComputeStatus step();
  const std::vector<std::pair<int, WindowTokens>>& finished() const { return finished_; }
  int n_steps() const { return n_steps_; }

 private:
  struct Job;
  SearchModel& model_;
  const SpecialTokens& st_;
  int k_;
  std::vector<std::unique_ptr<Job>> jobs_;  // per lane; a Job's address is stable (searches keep its request)
  std::vector<std::pair<int, WindowTokens>> finished_;
  int n_steps_ = 0;
  // A step's rows and logits (B x 51,865 floats), kept across steps so a step allocates nothing.
  std::vector<int32_t> tokens_;
  std::vector<int> slots_, windows_, positions_;
  std::vector<float> logits_, log_probs_;
  std::vector<size_t> searching_;
};

struct BatchedWindows {
  std::vector<WindowTokens> rows;  // one per window asked for, in that order
  int n_steps = 0;                 // decoder graph runs (a step of all rows once)
  bool aborted = false;
};

// windows[b]: the model window search b reads (the model needs the windows reserved; slots are
// reserved here). seeds[b]: window b's sampling seed (T > 0; may be empty at T = 0). Throws
// hark::Error on inconsistent input.
BatchedWindows decode_windows_batched(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                                      std::span<const int> windows, std::span<const uint64_t> seeds);

}  // namespace hark::decode
