#include "decode/batched_search.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "decode/window_search.h"
#include "runtime/error.h"

namespace hark::decode {

namespace {

// The prefix as decode_window feeds it ([<|startofprev|> prompt tail] <|startoftranscript|>
// [language, task, ...]); *sot_at: where <|startoftranscript|> is.
std::vector<int32_t> prefix_of(const SpecialTokens& st, const WindowRequest& req, int n_ctx, size_t* sot_at) {
  std::vector<int32_t> prefix;
  if (!req.prompt.empty()) {
    prefix.push_back(st.prev);
    const size_t room = prompt_room(req, n_ctx);
    const size_t skip = req.prompt.size() > room ? req.prompt.size() - room : 0;
    prefix.insert(prefix.end(), req.prompt.begin() + static_cast<std::ptrdiff_t>(skip), req.prompt.end());
  }
  *sot_at = prefix.size();
  prefix.insert(prefix.end(), req.start.begin(), req.start.end());
  prefix.insert(prefix.end(), req.forced.begin(), req.forced.end());
  HARK_CHECK(static_cast<int>(prefix.size()) < n_ctx,
             "decode batched: the prompt and start sequence fill the text context");
  return prefix;
}

void check_request(const SpecialTokens& st, const WindowRequest& req) {
  HARK_CHECK(!req.start.empty() && req.start[0] == st.sot,
             "decode batched: the start sequence must begin with <|startoftranscript|>");
  HARK_CHECK(req.temperature >= 0.0f && std::isfinite(req.temperature),
             "decode batched: temperature must be finite and >= 0, got " + std::to_string(req.temperature));
  HARK_CHECK(req.patience > 0.0f && std::isfinite(req.patience),
             "decode batched: patience must be finite and > 0, got " + std::to_string(req.patience));
  HARK_CHECK(search_slots(req) >= 1, "decode batched: best_of and beam_size must be >= 1");  // checks them too
}

}  // namespace

// One lane's search: its request (which the search keeps a reference to), its prefix while that
// is being fed, then the search at its own position.
struct BatchDecoder::Job {
  bool running = false;
  int window = 0;
  WindowRequest req;
  std::vector<int32_t> prefix;
  size_t sot_at = 0;
  size_t fed = 0;  // prefix tokens fed so far
  int pos = 0;     // the position the search's rows are fed at
  float no_speech = 0.0f;
  std::unique_ptr<WindowSearch> search;
  size_t first_row = 0, n_rows = 0;  // this step's rows
};

BatchDecoder::BatchDecoder(SearchModel& model, const SpecialTokens& st, int n_lanes, int slots_per_lane)
    : model_(model), st_(st), k_(slots_per_lane) {
  HARK_CHECK(n_lanes >= 1, "decode batched: no windows");
  HARK_CHECK(slots_per_lane >= 1, "decode batched: best_of and beam_size must be >= 1");
  model_.reserve_sequences(n_lanes * slots_per_lane);
  for (int l = 0; l < n_lanes; ++l) jobs_.push_back(std::make_unique<Job>());
}

BatchDecoder::~BatchDecoder() = default;

void BatchDecoder::start(int lane, int window, const WindowRequest& req, uint64_t seed) {
  HARK_CHECK(lane >= 0 && lane < static_cast<int>(jobs_.size()),
             "decode batched: lane " + std::to_string(lane) + " outside [0, " + std::to_string(jobs_.size()) + ")");
  Job& j = *jobs_[static_cast<size_t>(lane)];
  HARK_CHECK(!j.running, "decode batched: lane " + std::to_string(lane) + " is still running a search");
  check_request(st_, req);
  HARK_CHECK(search_slots(req) <= k_, "decode batched: the request needs " + std::to_string(search_slots(req)) +
                                          " slots, a lane has " + std::to_string(k_));
  j.search.reset();  // it refers to j.req
  j.req = req;
  j.window = window;
  j.prefix = prefix_of(st_, j.req, model_.n_text_ctx(), &j.sot_at);
  j.fed = 0;
  j.pos = 0;
  j.no_speech = 0.0f;
  j.search = make_window_search(model_, st_, j.req, lane * k_, seed);
  j.running = true;
}

bool BatchDecoder::running(int lane) const { return jobs_.at(static_cast<size_t>(lane))->running; }

bool BatchDecoder::any_running() const {
  return std::any_of(jobs_.begin(), jobs_.end(), [](const std::unique_ptr<Job>& j) { return j->running; });
}

ComputeStatus BatchDecoder::step() {
  finished_.clear();
  // Rows lane by lane (so the slots ascend): a lane still in its prefix feeds the next prefix
  // token in its base slot; a searching lane feeds the rows its search names.
  std::vector<int32_t>& tokens = tokens_;
  std::vector<int>& slots = slots_;
  std::vector<int>& windows = windows_;
  std::vector<int>& positions = positions_;
  tokens.clear();
  slots.clear();
  windows.clear();
  positions.clear();
  bool beams = false;
  for (size_t l = 0; l < jobs_.size(); ++l) {
    Job& j = *jobs_[l];
    j.first_row = tokens.size();
    if (!j.running) {
      j.n_rows = 0;
      continue;
    }
    int at = j.pos;
    if (j.fed < j.prefix.size()) {
      tokens.push_back(j.prefix[j.fed]);
      slots.push_back(static_cast<int>(l) * k_);
      at = static_cast<int>(j.fed);
    } else {
      j.search->rows(tokens, slots);
      beams = beams || is_beam_search(j.req);
    }
    j.n_rows = tokens.size() - j.first_row;
    windows.resize(tokens.size(), j.window);
    positions.resize(tokens.size(), at);
  }
  if (tokens.empty()) return ComputeStatus::Ok;
  std::vector<float>& logits = logits_;
  const ComputeStatus status = model_.decode_rows(tokens, slots, windows, positions, &logits);
  if (status != ComputeStatus::Ok) return status;
  ++n_steps_;
  const auto nv = static_cast<size_t>(st_.n_vocab);
  HARK_CHECK(logits.size() == tokens.size() * nv, "decode batched: the step returned the wrong number of logits");
  auto rows_of = [&](const Job& j) { return std::span<float>(logits).subspan(j.first_row * nv, j.n_rows * nv); };

  std::vector<size_t>& searching = searching_;
  searching.clear();
  for (size_t l = 0; l < jobs_.size(); ++l) {
    Job& j = *jobs_[l];
    if (j.n_rows == 0) continue;
    if (j.fed >= j.prefix.size()) {
      searching.push_back(l);
      continue;
    }
    if (j.fed == j.sot_at) {
      // The logits right after <|startoftranscript|>: the window's no-speech probability.
      const std::span<const float> row = rows_of(j);
      log_probs_.assign(row.begin(), row.end());
      log_softmax(log_probs_);
      j.no_speech = std::exp(log_probs_[static_cast<size_t>(st_.no_speech)]);
    }
    if (++j.fed == j.prefix.size()) {
      j.pos = static_cast<int>(j.prefix.size());
      j.search->start(rows_of(j), j.pos);
    }
  }
  auto advance = [&](size_t l) {
    Job& j = *jobs_[l];
    j.search->step(rows_of(j));
    ++j.pos;
  };
  if (beams) {
    for (size_t l : searching) advance(l);  // a beam step forks slots through the model: one at a time
  } else {
    // Greedy and best-of searches touch only their own rows and candidates: at once.
    model_.run_rows(static_cast<int64_t>(searching.size()),
                    [&](int64_t i) { advance(searching[static_cast<size_t>(i)]); });
  }
  for (size_t l = 0; l < jobs_.size(); ++l) {
    Job& j = *jobs_[l];
    if (!j.running || j.fed < j.prefix.size() || !j.search->done()) continue;
    WindowTokens w = j.search->finish();
    w.no_speech_prob = j.no_speech;
    w.temperature = j.req.temperature;
    finished_.emplace_back(static_cast<int>(l), std::move(w));
    j.running = false;
  }
  return ComputeStatus::Ok;
}

BatchedWindows decode_windows_batched(SearchModel& model, const SpecialTokens& st, const WindowRequest& req,
                                      std::span<const int> windows, std::span<const uint64_t> seeds) {
  const bool sampling = req.temperature > 0.0f;
  HARK_CHECK(!windows.empty(), "decode batched: no windows");
  check_request(st, req);
  HARK_CHECK(!sampling || seeds.size() == windows.size(), "decode batched: sampling needs one seed per window, got " +
                                                              std::to_string(seeds.size()) + " for " +
                                                              std::to_string(windows.size()));
  const size_t B = windows.size();
  BatchDecoder dec(model, st, static_cast<int>(B), search_slots(req));
  for (size_t b = 0; b < B; ++b) dec.start(static_cast<int>(b), windows[b], req, sampling ? seeds[b] : 0);
  BatchedWindows out;
  out.rows.resize(B);
  while (dec.any_running()) {
    if (dec.step() != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    for (const auto& [lane, w] : dec.finished()) out.rows[static_cast<size_t>(lane)] = w;
  }
  out.n_steps = dec.n_steps();
  for (WindowTokens& w : out.rows) {
    if (out.aborted) {
      const float ns = w.no_speech_prob;
      w = WindowTokens{};
      w.no_speech_prob = ns;
    }
    w.temperature = req.temperature;
    w.aborted = out.aborted;
  }
  return out;
}

}  // namespace hark::decode
