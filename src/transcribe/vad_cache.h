// The Silero VAD models a Context's VAD-assisted jobs use (TranscribeParams::vad), loaded once
// per model path and kept for the Context's life, so a job does not map and plan the network
// again. Thread-safe: concurrent jobs asking for the same path get the same model (its calls
// take turns, see VadModel).
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "hark/vad.hpp"

namespace hark {

class VadModelCache {
 public:
  // The model at `path`, loaded on first use. Throws hark::Error (naming the file) when it cannot
  // be loaded; a failed load is not cached, so a fixed file loads on the next call.
  std::shared_ptr<VadModel> get(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<VadModel>& m = models_[path];
    if (!m) {
      try {
        m = VadModel::load(path);
      } catch (...) {
        models_.erase(path);
        throw;
      }
    }
    return m;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return models_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<VadModel>> models_;
};

}  // namespace hark
