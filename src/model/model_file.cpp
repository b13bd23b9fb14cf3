#include "model/model_file.h"

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "model/file_reader.h"
#include "runtime/error.h"
#include "runtime/stopwatch.h"

namespace hark {

// The format is little-endian and read by memcpy into host integers.
static_assert(std::endian::native == std::endian::little, "the model reader assumes a little-endian host");

namespace {

using file_io::at;
using file_io::map_file;
using file_io::Mapping;
using file_io::printable;
using file_io::Reader;
using file_io::shape_str;
using Clock = std::chrono::steady_clock;

}  // namespace

ModelHeader parse_model_header(const uint8_t* data, size_t size, const std::string& label) {
  Reader r(data, size, label);
  ModelHeader h;

  const uint32_t magic = r.u32("magic");
  if (magic != kModelMagic) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "expected 0x%08x (ggml), found 0x%08x", kModelMagic, magic);
    throw Error(at(label, "magic", 0) + buf + " — not a whisper.cpp ggml model file");
  }
  // whisper.cpp's Silero VAD files share the magic: after it, a model type string ("silero-16k")
  // where a Whisper file has n_vocab. Said as what it is, not as a bad hyper-parameter.
  if (size >= 14) {
    int32_t len = 0;
    std::memcpy(&len, data + 4, sizeof len);
    if (len >= 6 && len <= 64 && size >= 8 + static_cast<size_t>(len) && std::memcmp(data + 8, "silero", 6) == 0)
      throw Error(label + ": this is a Silero VAD model (\"" +
                  std::string(reinterpret_cast<const char*>(data + 8), static_cast<size_t>(len)) +
                  "\"), not a Whisper model: give it as the VAD model (--vad-model, -vm) and a Whisper model "
                  "(ggml-base.en.bin, ...) as the model (-m)");
  }
  for (int i = 0; i < HParams::kCount; ++i)
    h.hparams.field(i) = r.i32(std::string("hyper-parameter ") + HParams::field_name(i));
  validate_hparams(h.hparams, label);
  const HParams& hp = h.hparams;

  // Mel filters: the hyper-parameters fix both dimensions, so the size is bounded before reading.
  const size_t mel_at = r.pos();
  const int32_t n_mel = r.i32("mel filters n_mel");
  if (n_mel != hp.n_mels) {
    throw Error(at(label, "mel filters n_mel", mel_at) + "expected " + std::to_string(hp.n_mels) + " (n_mels), found " +
                std::to_string(n_mel));
  }
  const int32_t n_fft = r.i32("mel filters n_fft");
  if (n_fft != kMelFftBins) {
    throw Error(at(label, "mel filters n_fft", mel_at + 4) + "expected " + std::to_string(kMelFftBins) +
                " (bins of a 400-point FFT), found " + std::to_string(n_fft));
  }
  h.mel.n_mels = n_mel;
  const size_t n_mel_values = static_cast<size_t>(n_mel) * static_cast<size_t>(n_fft);
  const size_t values_at = r.pos();
  const uint8_t* mel = r.bytes(n_mel_values * sizeof(float), "mel filter values");
  h.mel.weights.resize(n_mel_values);
  std::memcpy(h.mel.weights.data(), mel, n_mel_values * sizeof(float));
  for (size_t i = 0; i < n_mel_values; ++i) {
    if (!std::isfinite(h.mel.weights[i])) {
      throw Error(
          at(label,
             "mel filter value [" + std::to_string(i / kMelFftBins) + "][" + std::to_string(i % kMelFftBins) + "]",
             values_at + 4 * i) +
          "expected a finite weight, found " + std::to_string(h.mel.weights[i]));
    }
  }

  // Vocabulary: the count is bounded by n_vocab, each length by kMaxTokenBytes and by the file.
  const size_t count_at = r.pos();
  const int32_t count = r.i32("vocabulary size");
  if (count < 0 || count > hp.n_vocab) {
    throw Error(at(label, "vocabulary size", count_at) + "expected 0.." + std::to_string(hp.n_vocab) +
                " (n_vocab), found " + std::to_string(count));
  }
  h.vocab = Vocab(hp);
  for (int32_t i = 0; i < count; ++i) {
    // Messages are built only on failure: this loop runs 50k times per file.
    const size_t len_at = r.pos();
    if (r.left() < 4) r.bytes(4, "vocabulary token " + std::to_string(i) + " length");
    const uint32_t len = r.u32("");
    if (len > kMaxTokenBytes) {
      throw Error(at(label, "vocabulary token " + std::to_string(i) + " length", len_at) + "expected at most " +
                  std::to_string(kMaxTokenBytes) + " bytes, found " + std::to_string(len));
    }
    if (r.left() < len) r.bytes(len, "vocabulary token " + std::to_string(i) + " bytes");
    const uint8_t* p = r.bytes(len, "");
    h.vocab.add_file_token(std::string_view(reinterpret_cast<const char*>(p), len));
  }
  h.vocab.finish();
  h.tensors_offset = r.pos();
  return h;
}

std::vector<TensorEntry> parse_model_tensors(const uint8_t* data, size_t size, const ModelHeader& header,
                                             const std::string& label) {
  const HParams& hp = header.hparams;
  const DType wtype = hp.weight_type();
  const std::vector<TensorSpec> specs = whisper_tensor_specs(hp);
  std::unordered_map<std::string_view, size_t> spec_index;
  for (size_t i = 0; i < specs.size(); ++i) spec_index.emplace(specs[i].name, i);

  Reader r(data, size, label, header.tensors_offset);
  if (r.at_end()) {
    throw Error(label + ": no tensor data: the file ends after the vocabulary at offset " + std::to_string(r.pos()) +
                ". It holds only a header (hyper-parameters, mel filters, vocabulary), as test "
                "fixtures do; a model needs its " +
                std::to_string(specs.size()) + " weight tensors");
  }

  std::vector<TensorEntry> entries;
  std::vector<uint64_t> seen_at(specs.size(), UINT64_MAX);  // record offset of each spec, once found
  while (!r.at_end()) {
    const file_io::TensorRecord t = file_io::read_tensor_record(r, label, entries.size(), 1, kMaxTensorNameBytes);
    const size_t rec = t.offset;
    const int n_dims = t.n_dims;
    const int32_t type_raw = t.type;
    const std::array<int64_t, kMaxDims>& ne = t.ne;
    const std::string& name = t.name;
    const std::string where = at(label, "tensor '" + printable(name) + "'", rec);

    auto it = spec_index.find(name);
    if (it == spec_index.end()) {
      throw Error(where + "unknown tensor name; a Whisper model with " + std::to_string(hp.n_audio_layer) +
                  " encoder and " + std::to_string(hp.n_text_layer) + " decoder layers has no such tensor");
    }
    const TensorSpec& spec = specs[it->second];
    if (seen_at[it->second] != UINT64_MAX) {
      throw Error(where + "duplicate tensor; it already appeared at offset " + std::to_string(seen_at[it->second]));
    }
    seen_at[it->second] = rec;

    if (!dtype_valid(type_raw) || static_cast<DType>(type_raw) == DType::I32) {
      throw Error(where + "unknown type id " + std::to_string(type_raw) + "; expected " +
                  allowed_types_str(spec.kind, wtype) + " (ids 0 f32, 1 f16, 2 q4_0, 3 q4_1, 6 q5_0, 7 q5_1, 8 q8_0)");
    }
    const DType type = static_cast<DType>(type_raw);
    if (!tensor_type_allowed(spec.kind, type, wtype)) {
      throw Error(where + "type " + dtype_name(type) + " not allowed here; expected " +
                  allowed_types_str(spec.kind, wtype) + " in a file of type " + dtype_name(wtype) + " (ftype " +
                  std::to_string(hp.ftype) + ")");
    }
    if (n_dims != spec.n_dims || ne != spec.ne) {
      throw Error(where + "shape " + shape_str(ne.data(), n_dims) + " does not match the hyper-parameters: expected " +
                  shape_str(spec.ne.data(), spec.n_dims));
    }
    // From here the shape is the expected one, bounded by the checked hyper-parameters, so the
    // byte count below cannot overflow.
    if (ne[0] % dtype_block_size(type) != 0) {
      throw Error(where + dtype_name(type) + " stores rows in blocks of " + std::to_string(dtype_block_size(type)) +
                  " values, but ne[0] is " + std::to_string(ne[0]));
    }
    const uint64_t nbytes = static_cast<uint64_t>(dtype_row_bytes(type, ne[0])) * static_cast<uint64_t>(ne[1]) *
                            static_cast<uint64_t>(ne[2]) * static_cast<uint64_t>(ne[3]);
    const size_t data_at = r.pos();
    r.bytes(nbytes, "tensor '" + name + "' data (" + shape_str(ne.data(), n_dims) + " " + dtype_name(type) + ")");
    entries.push_back(TensorEntry{name, type, spec.kind, n_dims, ne, rec, data_at, nbytes});
  }

  for (size_t i = 0; i < specs.size(); ++i) {
    if (seen_at[i] == UINT64_MAX) {
      throw Error(label + ": tensor '" + specs[i].name + "' is missing: the file ends at offset " +
                  std::to_string(size) + " after " + std::to_string(entries.size()) + " of the " +
                  std::to_string(specs.size()) + " tensors this model needs (truncated?)");
    }
  }
  return entries;
}

ModelHeader ModelFile::read_header(const std::string& path) {
  const Mapping m = map_file(path, /*populate=*/false);
  return classified(ErrorCode::CorruptData, path, [&] { return parse_model_header(m.data, m.size, path); });
}

std::unique_ptr<ModelFile> ModelFile::open(const std::string& path, const LoadOptions& options) {
  const auto t0 = Clock::now();
  std::unique_ptr<ModelFile> mf(new ModelFile());
  mf->path_ = path;
  const bool stepwise = options.populate && options.on_progress;
  Mapping m = map_file(path, options.populate && !stepwise);
  if (stepwise) file_io::populate(m, options.on_progress);
  mf->file_bytes_ = m.size;
  // Every check of the file's bytes is the file's fault, not the caller's.
  classified(ErrorCode::CorruptData, path, [&] {
    mf->header_ = parse_model_header(m.data, m.size, path);
    mf->entries_ = parse_model_tensors(m.data, m.size, mf->header_, path);
  });

  for (const TensorEntry& e : mf->entries_) {
    Tensor* t = mf->arena_.new_tensor(e.type, e.ne, e.name);
    t->flags |= kFlagWeight;
    mf->by_name_.emplace(e.name, t);
    mf->tensor_bytes_ += e.nbytes;
  }

  if (options.buffer_type == nullptr) {
    // The CPU device's memory, so the CPU backend computes on the weights where they are.
    HostBufferType* host = &cpu_buffer_type();
    // The buffer is handed a non-const pointer, but the pages are PROT_READ: weights are never
    // written, and an accidental write faults instead of silently changing the model.
    mf->buffer_ = host->wrap(const_cast<uint8_t*>(m.data), m.size, m.keepalive);
    mf->buffer_->set_usage(BufferUsage::Weights);
    for (const TensorEntry& e : mf->entries_) mf->buffer_->place(*mf->by_name_.at(e.name), e.data_offset);
    mf->mapped_ = true;
  } else {
    BufferType* bt = options.buffer_type;
    const size_t align = bt->alignment() ? bt->alignment() : 1;
    auto align_up = [align](size_t x) { return (x + align - 1) / align * align; };
    std::vector<size_t> offsets;
    size_t total = 0;
    for (const TensorEntry& e : mf->entries_) {
      total = align_up(total);
      offsets.push_back(total);
      total += bt->alloc_size(*mf->by_name_.at(e.name));
    }
    mf->buffer_ = bt->alloc(total);
    mf->buffer_->set_usage(BufferUsage::Weights);
    for (size_t i = 0; i < mf->entries_.size(); ++i) {
      const TensorEntry& e = mf->entries_[i];
      Tensor& t = *mf->by_name_.at(e.name);
      mf->buffer_->place(t, offsets[i]);
      mf->buffer_->set_tensor(t, m.data + e.data_offset, 0, static_cast<size_t>(e.nbytes));
    }
    // `m` goes out of scope here: the copy needs the mapping no longer.
  }

  const HParams hp = mf->header_.hparams;
  mf->weights_ = classified(ErrorCode::CorruptData, path, [&] {
    return bind_whisper_weights(hp, [&](const std::string& n) { return mf->tensor(n); });
  });
  mf->load_ms_ = ms_since(t0);
  return mf;
}

ModelFile::~ModelFile() = default;

Tensor* ModelFile::tensor(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::string ModelFile::describe() const {
  const HParams& hp = hparams();
  std::map<std::string, std::pair<int, uint64_t>> by_type;  // type -> (tensors, bytes)
  for (const TensorEntry& e : entries_) {
    auto& v = by_type[dtype_name(e.type)];
    v.first += 1;
    v.second += e.nbytes;
  }
  std::ostringstream s;
  s << "model: " << path_ << "\n";
  s << "size: " << hp.size_name() << (hp.multilingual() ? " (multilingual, " : " (English-only, ") << hp.num_languages()
    << " languages)\n";
  s << "hparams: " << hp.describe() << "\n";
  s << "weight type: " << dtype_name(hp.weight_type()) << "\n";
  s << "vocabulary: " << vocab().size() << " ids, " << vocab().n_file_tokens() << " stored in the file\n";
  s << "tensors: " << entries_.size() << ", " << tensor_bytes_ << " bytes (";
  bool first = true;
  for (const auto& [name, v] : by_type) {
    s << (first ? "" : ", ") << name << ": " << v.first << " / " << v.second << " bytes";
    first = false;
  }
  s << ")\n";
  s << "file: " << file_bytes_ << " bytes, " << (mapped_ ? "memory-mapped" : "copied") << ", loaded in " << load_ms_
    << " ms\n";
  return s.str();
}

}  // namespace hark
