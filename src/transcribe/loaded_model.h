// LoadedModel: what every job on one Context shares and never changes: the mapped model file, its
// tokenizer, the token lists the rules suppress, the mel filters, and the device chosen for it.
// States hold it by shared_ptr, so the weights live as long as any state that reads them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"
#include "frontend/mel.h"
#include "hark/hark.hpp"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "transcribe/vad_cache.h"

namespace hark {

struct LoadedModel {
  std::unique_ptr<ModelFile> file;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<int32_t> suppress;  // never sampled: non-speech symbols and special tokens
  std::vector<int32_t> blank;     // not allowed as the first text token
  frontend::MelFilters filters;
  ModelInfo info;
  Device* device = nullptr;  // where the jobs compute
  DeviceChoice device_choice;
  bool flash_attn = true;
  DType cross_kv_type = DType::F16;
  int n_threads = 1;  // the default per job
  // VAD models of VAD-assisted jobs, by path: shared by the Context and its states, which never
  // change the Whisper model but may add a VAD model here (the cache locks itself).
  std::shared_ptr<VadModelCache> vad_models = std::make_shared<VadModelCache>();

  // Maps the file and resolves the device from the params. Throws hark::Error.
  static std::shared_ptr<const LoadedModel> load(const std::string& path, const ContextParams& params);

  // <|startoftranscript|> [language, task] [<|notimestamps|>]
  std::vector<int32_t> start_sequence(int lang, bool translate, bool timestamps) const;
};

// The default number of compute threads: the machine's cores, at most 8 (beyond that a Whisper
// step is limited by memory bandwidth, not arithmetic).
int default_threads();

}  // namespace hark
