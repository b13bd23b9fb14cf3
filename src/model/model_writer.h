// Writing Whisper model files in the ggml .bin format (the layout model_file.h describes).
//
// ModelWriter emits the records as given, without validation, so tests can also build files that
// are wrong on purpose. write_test_model() writes a whole model with seeded random weights: the
// engine can be tested and benchmarked at any size and weight type without downloading anything.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/hparams.h"
#include "model/model_file.h"
#include "model/weights.h"

namespace hark {

class ModelWriter {
 public:
  using Sink = std::function<void(const void* data, size_t size)>;
  explicit ModelWriter(Sink sink) : sink_(std::move(sink)) {}

  // Magic, hyper-parameters, mel filters and vocabulary (tokens in id order).
  void header(const HParams& hp, const frontend::MelFilters& mel, const std::vector<std::string>& tokens);
  // One tensor record. `type` is the raw type id and `ne` the stored dims (1 to 4 of them).
  void tensor(std::string_view name, int32_t type, const std::vector<int32_t>& ne, const void* data, size_t nbytes);
  // A tensor record's head alone; its data follows through raw(), in as many pieces as suit.
  void tensor_head(std::string_view name, int32_t type, const std::vector<int32_t>& ne);

  void raw(const void* data, size_t size) { emit(data, size); }
  void i32(int32_t v) { emit(&v, 4); }
  uint64_t bytes_written() const { return written_; }

 private:
  void emit(const void* data, size_t size);
  Sink sink_;
  uint64_t written_ = 0;
};

struct TestModelOptions {
  HParams hparams;  // ftype is derived from weight_type
  DType weight_type = DType::F16;
  uint64_t seed = 1;
  // A model file (a header-only one will do) to take the real vocabulary from, and its mel
  // filters when n_mels match. Empty: synthesize both.
  std::string vocab_from;
  // A tinydiarize-style model (whisper.cpp's small.en-tdrz and kin): the same file format and
  // vocabulary, weights that produce the speaker-turn token (<|startoflm|>). Here its embedding
  // row (the output projection too: the weights are tied) is scaled up, so random weights write
  // it at a fair share of the steps where it is allowed.
  bool tdrz = false;
  // The same for any token (its id): a model that writes it now and then, e.g. a non-speech
  // token ("(") to test suppress_nst. -1: none. tdrz is this for <|startoflm|>.
  int32_t favour_token = -1;
};

// "micro" (2 layers of width 64), "tiny", "base", "small", "medium", "large" (v2), "large-v3",
// "large-v3-turbo"; ".en" after a name gives the English-only vocabulary. False when unknown.
bool test_model_preset(std::string_view name, HParams* out);
std::vector<std::string> test_model_preset_names();

// Writes a model file through `write` into path + ".tmp", renamed to `path` only when every byte
// was written: a failed run (an exception from `write`, a full disk) leaves no file that looks
// complete, and no temporary one either.
void write_model_file(const std::string& path, const std::function<void(ModelWriter&)>& write);

// Writes the model to `path` (through write_model_file). Streams tensor by tensor: memory stays
// at one tensor.
void write_test_model(const TestModelOptions& options, const std::string& path);
std::vector<uint8_t> make_test_model_bytes(const TestModelOptions& options);

// The pieces, for tests: what the writer stores for one tensor (f32 values before conversion,
// and the bytes in `type`), and the synthesized vocabulary. (The synthesized mel filterbank is
// frontend::slaney_mel_filters.)
std::vector<float> test_tensor_values(const TensorSpec& spec, uint64_t seed);
std::vector<uint8_t> test_tensor_bytes(const TensorSpec& spec, DType type, uint64_t seed);
// Any values of a tensor (f32, in the spec's order) as the bytes of `type`.
std::vector<uint8_t> tensor_bytes(const TensorSpec& spec, DType type, const std::vector<float>& values);
// A byte-level vocabulary of the size a real file of these hyper-parameters stores: the 256
// single bytes, then strings of letters and spaces; English-only files end with "<|endoftext|>".
std::vector<std::string> synthetic_vocab(const HParams& hp);

}  // namespace hark
