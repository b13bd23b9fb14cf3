// Context: one loaded model shared by every job on it, and a pool of idle states so that
// concurrent transcribe() calls each get their own KV cache and threads without making a new
// state (and planning its memory) per call.
#include <mutex>
#include <vector>

#include "backend/device_registry.h"
#include "hark/hark.hpp"
#include "runtime/error.h"
#include "transcribe/context_bench.h"
#include "transcribe/job_strategies.h"
#include "transcribe/loaded_model.h"
#include "transcribe/state.h"

namespace hark {

namespace {

// Idle states, shared with the leases it hands out, so a lease returned after the Context is
// gone still finds its pool (and simply frees the state).
class StatePool {
 public:
  explicit StatePool(std::shared_ptr<const LoadedModel> model) : model_(std::move(model)) {}

  std::shared_ptr<StateImpl> acquire(int n_threads, const std::shared_ptr<StatePool>& self) {
    std::unique_ptr<StateImpl> s;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        s = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!s) s = std::make_unique<StateImpl>(model_, n_threads);
    std::weak_ptr<StatePool> pool = self;
    return std::shared_ptr<StateImpl>(s.release(), [pool](StateImpl* st) {
      if (auto p = pool.lock()) {
        std::lock_guard<std::mutex> lock(p->mutex_);
        p->idle_.emplace_back(st);
      } else {
        delete st;
      }
    });
  }

 private:
  std::shared_ptr<const LoadedModel> model_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<StateImpl>> idle_;
};

class ContextImpl final : public Context {
 public:
  ContextImpl(const std::string& path, const ContextParams& params)
      : model_(LoadedModel::load(path, params)), pool_(std::make_shared<StatePool>(model_)) {
    // One state up front: the first job starts at once, and a model too big for memory fails here.
    pool_->acquire(model_->n_threads, pool_);
  }

  const ModelInfo& info() const override { return model_->info; }
  const DeviceChoice& device() const override { return model_->device_choice; }

  Transcript transcribe(std::span<const float> samples, const TranscribeParams& params) override {
    const StateLender lend = [this](int n_threads) { return pool_->acquire(n_threads, pool_); };
    const std::shared_ptr<StateImpl> state = lend(model_->n_threads);
    return transcribe_job(*state, lend, samples, params);
  }

  LanguageDetection detect_language(std::span<const float> samples, const DetectLanguageParams& params) override {
    return pool_->acquire(model_->n_threads, pool_)->detect_language(samples, params);
  }

  std::unique_ptr<State> new_state(int n_threads) override {
    HARK_CHECK(n_threads >= 0, "new_state: n_threads must be >= 0, got " + std::to_string(n_threads));
    auto s = std::make_unique<StateImpl>(model_, n_threads);
    s->set_default_threads(n_threads);
    return s;
  }

  BenchResult bench(int n_threads) override {
    HARK_CHECK(n_threads >= 0, "bench: n_threads must be >= 0, got " + std::to_string(n_threads));
    const int threads = n_threads > 0 ? n_threads : model_->n_threads;
    // A state borrowed from the pool (no job can get it meanwhile) rather than a new one planned
    // for the bench: the bench overwrites its KV cache, and every job encodes its own windows
    // before it reads the cache.
    const std::shared_ptr<StateImpl> state = pool_->acquire(threads, pool_);
    return run_bench(*state, threads);
  }

 private:
  std::shared_ptr<const LoadedModel> model_;
  std::shared_ptr<StatePool> pool_;
};

}  // namespace

std::unique_ptr<Context> Context::load(const std::string& model_path, const ContextParams& params) {
  return std::make_unique<ContextImpl>(model_path, params);
}

std::vector<DeviceChoice> devices() {
  std::vector<DeviceChoice> out;
  // best() first, then the rest in registry order.
  Device* best = Registry::global().best();
  auto describe = [](Device* d) {
    DeviceChoice c;
    c.name = d->name();
    c.description = d->description();
    c.gpu = d->type() != DeviceType::CPU;
    return c;
  };
  if (best) out.push_back(describe(best));
  for (Device* d : Registry::global().devices())
    if (d != best) out.push_back(describe(d));
  return out;
}

}  // namespace hark
