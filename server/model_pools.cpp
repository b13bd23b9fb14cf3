#include "model_pools.h"

#include <algorithm>
#include <filesystem>

namespace hark::server {

ModelPool::ModelPool(std::string name, std::string path, int n_states, int n_threads, const ContextParams& cp)
    : name_(std::move(name)), path_(std::move(path)), n_states_(std::max(1, n_states)) {
  ContextParams p = cp;
  p.n_threads = n_threads;
  ctx_ = Context::load(path_, p);
  for (int i = 0; i < n_states_; ++i) idle_.push_back(ctx_->new_state(n_threads));
}

std::unique_ptr<State> ModelPool::try_take() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return nullptr;
  std::unique_ptr<State> s = std::move(idle_.back());
  idle_.pop_back();
  return s;
}

void ModelPool::give_back(std::unique_ptr<State> s) {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(s));
}

void ModelPools::add(std::shared_ptr<ModelPool> m) {
  std::unique_lock lock(mu_);
  models_.push_back(std::move(m));
}

std::shared_ptr<ModelPool> ModelPools::find(const std::string& name) const {
  std::shared_lock lock(mu_);
  for (const auto& m : models_)
    if (m->name() == name) return m;
  // OpenAI clients send their own model ids unchanged; they mean "the speech model you have".
  static const char* const kOpenAiIds[] = {"whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe"};
  const bool openai_id =
      std::any_of(std::begin(kOpenAiIds), std::end(kOpenAiIds), [&](const char* id) { return name == id; });
  if ((name.empty() || openai_id) && !models_.empty()) return models_.front();
  return nullptr;
}

std::shared_ptr<ModelPool> ModelPools::default_model() const {
  std::shared_lock lock(mu_);
  return models_.empty() ? nullptr : models_.front();
}

std::vector<std::shared_ptr<ModelPool>> ModelPools::all() const {
  std::shared_lock lock(mu_);
  return models_;
}

void ModelPools::replace_default(std::shared_ptr<ModelPool> m) {
  std::unique_lock lock(mu_);
  if (models_.empty()) {
    models_.push_back(std::move(m));
    return;
  }
  // Another model of the new one's name would be shadowed by it: it goes.
  models_.erase(
      std::remove_if(models_.begin() + 1, models_.end(), [&](const auto& x) { return x->name() == m->name(); }),
      models_.end());
  models_.front() = std::move(m);
}

bool ModelPools::make_default(const std::string& name) {
  std::unique_lock lock(mu_);
  auto it = std::find_if(models_.begin(), models_.end(), [&](const auto& m) { return m->name() == name; });
  if (it == models_.end()) return false;
  std::rotate(models_.begin(), it, it + 1);
  return true;
}

std::string model_name_from_path(const std::string& path) {
  std::string stem = std::filesystem::path(path).filename().string();
  if (stem.size() > 4 && stem.ends_with(".bin")) stem.resize(stem.size() - 4);
  if (stem.starts_with("ggml-") && stem.size() > 5) stem.erase(0, 5);
  return stem;
}

}  // namespace hark::server
