// hark: a loaded model and the jobs on it, the C++ API. A Context is one loaded model: its weights
// memory-mapped once, read-only, shared. A State is what one running job needs (KV cache, compute
// memory, a backend with its own threads). Both transcribe; a Context serves many jobs at once, a
// State one at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hark/export.h"
#include "hark/params.hpp"
#include "hark/results.hpp"
#include "hark/system.hpp"

namespace hark {

// ---- the model ----
// The element type of the cross-attention K/V cache, which every decode step reads whole, once
// per window its rows attend to (tiny 9.2 MB, base 18.4 MB per window in f16).
enum class KvCacheType {
  F16,   // the reference's results (logits within ~2e-4 of whisper.cpp's)
  Q8_0,  // 0.53x the memory and the bytes read per window: batched decoding (batch_size > 1,
         // every row its own window) gains most; logits move by ~1e-3 relative. Needs flash_attn.
};
// "f16", "q8_0" (the names the CLI, server and bindings take); parse throws hark::Error naming
// the accepted ones for any other.
HARK_API const char* kv_cache_type_name(KvCacheType t);
HARK_API KvCacheType parse_kv_cache_type(std::string_view name);

struct ContextParams {
  int n_threads = 0;       // compute threads of each job; 0: the machine's cores (at most 8)
  bool use_gpu = true;     // the best device in the registry; the CPU (with a reason) when none is usable
  std::string device;      // a device by name ("cpu", "cpu-ref"); set, it overrides use_gpu
  bool flash_attn = true;  // fused attention; false: the plain softmax(QK^T)V graph
  KvCacheType cross_kv_type = KvCacheType::F16;  // see KvCacheType
  // Called while the model file is read in (bytes so far, file size; from (0, size) to (size,
  // size)), on the loading thread: a large model's load can show progress.
  std::function<void(uint64_t done, uint64_t total)> on_load_progress;
};

struct ModelInfo {
  std::string path;
  std::string size_name;    // "tiny", "base.en", "large-v3", ... or "custom"
  std::string weight_type;  // "f16", "q5_0", ...
  bool multilingual = false;
  int n_vocab = 0, n_audio_ctx = 0, n_audio_state = 0, n_audio_head = 0, n_audio_layer = 0;
  int n_text_ctx = 0, n_text_state = 0, n_text_head = 0, n_text_layer = 0, n_mels = 0;
  int ftype = 0;
  uint64_t file_bytes = 0;    // size of the model file
  uint64_t tensor_bytes = 0;  // bytes of weights
  bool mapped = false;        // weights are read from the file's memory mapping, not copied
  double load_ms = 0.0;
  HARK_API std::string describe() const;  // several lines, for `hark info`
};

// One job's working memory and compute stream: the KV cache, the compute buffers, and a backend
// with its own thread pool. Jobs on different states of one Context run at the same time and share
// the weights. A State may outlive its Context (it keeps the model's memory alive). One job at a
// time on a State: a second concurrent call waits for the first.
class HARK_API State {
 public:
  virtual ~State() = default;
  // Bytes this state holds beyond the shared weights (KV cache + compute buffers).
  virtual size_t bytes() const = 0;
  virtual Transcript transcribe(std::span<const float> samples, const TranscribeParams& params = {}) = 0;
  // The spoken language of the 30 s from params.offset_ms: the same probabilities transcribe()
  // with language "auto" and that offset computes. Throws hark::Error on an English-only model.
  virtual LanguageDetection detect_language(std::span<const float> samples,
                                            const DetectLanguageParams& params = {}) = 0;
};

// ---- bench (whisper.rn's bench(maxThreads), whisper.cpp's whisper-bench) ----
struct BenchResult {
  std::string config;  // system info: SIMD levels, device
  int n_threads = 0;
  double encode_ms = 0;  // one 30 s encoder window
  double decode_ms = 0;  // per token: 256 single-token steps
  double batch_ms = 0;   // per token: 64 steps of a 5-row batch, logits for every row
  double prompt_ms = 0;  // per token: 16 prompts of 256 tokens
  // whisper.rn's form: ["<config>", n_threads, encode_ms, decode_ms, batch_ms, prompt_ms]
  HARK_API std::string to_json() const;
};

class HARK_API Context {
 public:
  // Maps and validates a ggml .bin model. A bare name that is no file here ("tiny.en") is looked
  // up in the models folder (hark/models.hpp: find_model). Throws hark::Error.
  static std::unique_ptr<Context> load(const std::string& model_path, const ContextParams& params = {});
  virtual ~Context() = default;

  virtual const ModelInfo& info() const = 0;
  virtual const DeviceChoice& device() const = 0;

  // Transcribes on a state from the context's pool (made when none is idle): safe to call from
  // several threads at once; each call runs in parallel with the others on shared weights.
  // samples: 16 kHz mono float in [-1, 1]. Throws hark::Error for bad input (NaN, empty...).
  virtual Transcript transcribe(std::span<const float> samples, const TranscribeParams& params = {}) = 0;
  // A state of one's own (whisper.cpp's whisper_init_state). Its jobs compute on n_threads unless
  // their params name a count; 0: the context's.
  virtual std::unique_ptr<State> new_state(int n_threads = 0) = 0;
  // State::detect_language on a state from the pool; thread-safe like transcribe().
  virtual LanguageDetection detect_language(std::span<const float> samples,
                                            const DetectLanguageParams& params = {}) = 0;

  // Measures the loaded model as whisper-bench does (see BenchResult). n_threads 0: the context's.
  virtual BenchResult bench(int n_threads = 0) = 0;
};

}  // namespace hark
