#include "transcribe/loaded_model.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "backend/device_registry.h"
#include "decode/suppress.h"
#include "decode/timestamp_rules.h"
#include "hark/models.hpp"
#include "runtime/dtype.h"
#include "runtime/error.h"
#include "runtime/log.h"

namespace hark {

namespace {

ModelInfo make_info(const ModelFile& m) {
  const HParams& hp = m.hparams();
  ModelInfo i;
  i.path = m.path();
  i.size_name = hp.size_name();
  i.weight_type = dtype_name(hp.weight_type());
  i.multilingual = hp.multilingual();
  i.n_vocab = hp.n_vocab;
  i.n_audio_ctx = hp.n_audio_ctx;
  i.n_audio_state = hp.n_audio_state;
  i.n_audio_head = hp.n_audio_head;
  i.n_audio_layer = hp.n_audio_layer;
  i.n_text_ctx = hp.n_text_ctx;
  i.n_text_state = hp.n_text_state;
  i.n_text_head = hp.n_text_head;
  i.n_text_layer = hp.n_text_layer;
  i.n_mels = hp.n_mels;
  i.ftype = hp.ftype;
  i.file_bytes = m.file_bytes();
  i.tensor_bytes = m.tensor_bytes();
  i.mapped = m.mapped();
  i.load_ms = m.load_ms();
  return i;
}

bool is_gpu(const Device* d) { return d->type() != DeviceType::CPU; }

std::string device_names() {
  std::string names;
  for (Device* d : Registry::global().devices()) names += std::string(names.empty() ? "" : ", ") + d->name();
  return names;
}

// whisper.rn's useGpu + reasonNoGPU: a named device wins; otherwise the registry's best device
// when a GPU is wanted, and the optimised CPU with the reason when none can be used.
Device* choose_device(const ContextParams& p, DeviceChoice* choice) {
  Registry& reg = Registry::global();
  Device* dev = nullptr;
  if (!p.device.empty()) {
    dev = reg.find(p.device);
    if (!dev)
      throw Error(ErrorCode::InvalidArgument, "unknown device '" + p.device + "' (available: " + device_names() + ")",
                  "device");
    if (p.use_gpu && !is_gpu(dev)) choice->reason_no_gpu = "device '" + p.device + "' was asked for by name";
  } else if (p.use_gpu) {
    dev = reg.best();
    if (!is_gpu(dev))
      choice->reason_no_gpu =
          "no GPU device in this build (hark was compiled with CPU backends only: " + device_names() + ")";
  } else {
    dev = reg.find(kCpuDeviceName);
  }
  HARK_CHECK_AS(Internal, "", dev != nullptr, "no compute device is registered");
  choice->name = dev->name();
  choice->description = dev->description();
  choice->gpu = is_gpu(dev);
  return dev;
}

}  // namespace

const char* kv_cache_type_name(KvCacheType t) { return t == KvCacheType::Q8_0 ? "q8_0" : "f16"; }

KvCacheType parse_kv_cache_type(std::string_view name) {
  for (KvCacheType t : {KvCacheType::F16, KvCacheType::Q8_0})
    if (name == kv_cache_type_name(t)) return t;
  throw Error(ErrorCode::InvalidArgument, "unknown KV cache type '" + std::string(name) + "' (expected f16 or q8_0)",
              "cross_kv_type");
}

int default_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw == 0 ? 4u : hw, 1u, 8u));
}

std::shared_ptr<const LoadedModel> LoadedModel::load(const std::string& path, const ContextParams& params) {
  HARK_CHECK_AS(InvalidArgument, "n_threads", params.n_threads >= 0,
                "n_threads must be >= 0 (0 = automatic), got " + std::to_string(params.n_threads));
  auto m = std::make_shared<LoadedModel>();
  m->device = choose_device(params, &m->device_choice);
  m->flash_attn = params.flash_attn;
  HARK_CHECK_AS(Unsupported, "cross_kv_type", params.cross_kv_type == KvCacheType::F16 || params.flash_attn,
                "cross_kv_type q8_0 needs flash_attn (the plain attention path reads an f16 cache)");
  m->cross_kv_type = params.cross_kv_type == KvCacheType::Q8_0 ? DType::Q8_0 : DType::F16;
  m->n_threads = params.n_threads > 0 ? params.n_threads : default_threads();
  LoadOptions lo;
  lo.populate = true;
  lo.on_progress = params.on_load_progress;
  // A bare name ("tiny.en") that is not a file here is a model in the models folder; paths with a
  // folder go to the loader as they are, so its errors stay about the file.
  std::error_code ec;
  const bool by_name = path.find('/') == std::string::npos && !std::filesystem::exists(path, ec);
  m->file = ModelFile::open(by_name ? find_model(path) : path, lo);
  m->tokenizer =
      classified(ErrorCode::CorruptData, path, [&] { return std::make_unique<Tokenizer>(m->file->vocab()); });
  m->suppress = decode::non_speech_tokens(*m->tokenizer);
  for (int32_t id : decode::default_suppressed(m->file->vocab().special())) m->suppress.push_back(id);
  m->blank = decode::blank_tokens(*m->tokenizer);
  m->filters = m->file->mel_filters();
  m->info = make_info(*m->file);
  HARK_LOG(LogLevel::Info,
           "loaded " + path + " (" + m->info.size_name + ", " + m->info.weight_type + ") in " +
               std::to_string(static_cast<int>(m->info.load_ms)) + " ms on " + m->device_choice.name +
               (m->device_choice.reason_no_gpu.empty() ? "" : " (" + m->device_choice.reason_no_gpu + ")"));
  return m;
}

std::vector<int32_t> LoadedModel::start_sequence(int lang, bool translate, bool timestamps) const {
  const SpecialTokens& st = file->vocab().special();
  std::vector<int32_t> s = {st.sot};
  if (st.n_languages > 0) {  // English-only models take no language or task token
    s.push_back(st.language_token(lang));
    s.push_back(translate ? st.translate : st.transcribe);
  }
  if (!timestamps) s.push_back(st.no_timestamps);
  return s;
}

}  // namespace hark
