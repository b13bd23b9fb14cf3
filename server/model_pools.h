// The models a server holds, by name. Each is one hark::Context (weights mapped once) with a
// fixed pool of states made up front (--parallel N), so N requests run on it at once on shared
// weights and the memory a server needs is known when it starts. The first model is the default.
// POST /load replaces the default; a request still running on the old one keeps it alive
// (shared_ptr) until it ends.
#pragma once
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "hark/hark.hpp"

namespace hark::server {

class ModelPool {
 public:
  // Loads the model and makes `n_states` states of `n_threads` threads each. Throws hark::Error.
  ModelPool(std::string name, std::string path, int n_states, int n_threads, const ContextParams& cp);

  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  const ModelInfo& info() const { return ctx_->info(); }
  int size() const { return n_states_; }

  // A state nobody uses, or nullptr when all are busy. Thread-safe.
  std::unique_ptr<State> try_take();
  void give_back(std::unique_ptr<State> s);

 private:
  std::string name_, path_;
  std::unique_ptr<Context> ctx_;  // states keep the weights alive themselves; this keeps the info
  int n_states_;
  std::mutex mu_;
  std::vector<std::unique_ptr<State>> idle_;
};

class ModelPools {
 public:
  void add(std::shared_ptr<ModelPool> m);  // the first added is the default
  // The model a request names: its name; "" or an OpenAI model id ("whisper-1", ...) that no
  // model is named: the default. nullptr when there is no such model.
  std::shared_ptr<ModelPool> find(const std::string& name) const;
  std::shared_ptr<ModelPool> default_model() const;
  std::vector<std::shared_ptr<ModelPool>> all() const;
  // Puts `m` in the default's place (the old one is dropped once its running jobs end).
  void replace_default(std::shared_ptr<ModelPool> m);
  // Makes the model named `name` the default; false when there is none.
  bool make_default(const std::string& name);

 private:
  mutable std::shared_mutex mu_;
  std::vector<std::shared_ptr<ModelPool>> models_;  // [0] is the default
};

// A model name from its file: "ggml-base.en.bin" -> "base.en".
std::string model_name_from_path(const std::string& path);

}  // namespace hark::server
