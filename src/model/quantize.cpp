// hark::quantize_model (hark/quantize.hpp): the input is opened and validated like any model
// (mapped), its header copied byte for byte with the new ftype, and each tensor record written
// in its new type, streamed a few megabytes of rows at a time so memory stays small even for the
// large models' token embedding.
#include "hark/quantize.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/weights.h"
#include "runtime/dtype.h"
#include "runtime/error.h"
#include "runtime/quant.h"
#include "runtime/tensor.h"

namespace hark {

namespace {

// The header's fields before ftype: the magic and ten int32 hyper-parameters.
constexpr uint64_t kFtypeOffset = 4 + 10 * 4;
// Rows are converted in pieces of about this many values (16 MB of f32).
constexpr int64_t kChunkValues = int64_t{1} << 22;

DType parse_type(const std::string& type) {
  DType t{};
  if (dtype_from_name(type, &t) && t != DType::I32) return t;
  throw Error("quantize: unknown type \"" + type + "\"; expected one of f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0");
}

// What a tensor becomes in a file whose weight type is `to`: what the loader expects there, except
// that a matrix whose rows are not whole blocks cannot be quantized and stays f16 (allowed in
// every file).
DType output_type(const TensorEntry& e, DType to) {
  if (e.kind == TensorKind::Matrix && dtype_quantized(to) && e.ne[0] % kQuantBlock != 0) return DType::F16;
  return default_tensor_type(e.kind, to);
}

std::vector<uint8_t> read_prefix(const std::string& path, uint64_t n) {
  std::vector<uint8_t> bytes(n);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(ErrorCode::Io, path + ": cannot open: " + std::strerror(errno), path);
  if (std::fread(bytes.data(), 1, n, f.get()) != n) throw Error(ErrorCode::Io, path + ": cannot read its header", path);
  return bytes;
}

// Streams one tensor's data from `from` to `to` through f32, a chunk of rows at a time.
void convert_rows(ModelWriter& w, const TensorEntry& e, const void* src, DType to) {
  const int64_t n = e.ne[0];
  int64_t rows = 1;
  for (int d = 1; d < e.n_dims; ++d) rows *= e.ne[static_cast<size_t>(d)];
  const int64_t chunk = std::max<int64_t>(1, kChunkValues / n);
  const size_t in_row = dtype_row_bytes(e.type, n), out_row = dtype_row_bytes(to, n);
  std::vector<float> f32(static_cast<size_t>(std::min(chunk, rows) * n));
  std::vector<uint8_t> out(static_cast<size_t>(std::min(chunk, rows)) * out_row);
  const auto* in = static_cast<const uint8_t*>(src);
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t nr = std::min(chunk, rows - r0);
    for (int64_t r = 0; r < nr; ++r)
      dequantize_row(e.type, in + static_cast<size_t>(r0 + r) * in_row, f32.data() + r * n, n);
    const size_t bytes = quantize_rows(to, f32.data(), out.data(), nr, n);
    w.raw(out.data(), bytes);
  }
}

}  // namespace

QuantizeResult quantize_model(const std::string& input_path, const std::string& output_path, const std::string& type,
                              const QuantizeProgress& progress) {
  const DType to = parse_type(type);
  HARK_CHECK(!output_path.empty(), "quantize: the output path is empty");
  std::error_code ec;
  if (std::filesystem::exists(output_path, ec) && std::filesystem::equivalent(input_path, output_path, ec))
    throw Error(ErrorCode::InvalidArgument,
                "quantize: the output " + output_path + " is the input file; write to another path", "output_path");

  const std::unique_ptr<ModelFile> mf = ModelFile::open(input_path);
  HARK_CHECK(mf->mapped(), "quantize: " + input_path + ": the weights are not mapped");
  // The header's bytes as the file has them (the parse above already validated them).
  std::vector<uint8_t> head = read_prefix(input_path, mf->tensors_offset());
  int32_t ftype = 0;
  std::memcpy(&ftype, head.data() + kFtypeOffset, 4);
  HARK_CHECK(ftype == mf->hparams().ftype, "quantize: " + input_path + ": ftype not found at byte " +
                                               std::to_string(kFtypeOffset) + " of the header");
  const int32_t new_ftype = ftype_for_weight_type(to);
  std::memcpy(head.data() + kFtypeOffset, &new_ftype, 4);

  QuantizeResult r;
  r.from_type = dtype_name(mf->hparams().weight_type());
  r.to_type = dtype_name(to);
  r.input_bytes = mf->file_bytes();
  r.n_tensors = static_cast<int>(mf->entries().size());
  const uint64_t total = mf->tensor_bytes();
  uint64_t done = 0;
  write_model_file(output_path, [&](ModelWriter& w) {
    w.raw(head.data(), head.size());
    for (const TensorEntry& e : mf->entries()) {
      const Tensor* t = mf->tensor(e.name);
      HARK_CHECK(t && t->data, "quantize: " + input_path + ": tensor " + e.name + " has no data");
      const DType out = output_type(e, to);
      if (e.kind == TensorKind::Matrix && out != to) ++r.n_kept_f16;
      std::vector<int32_t> ne;
      for (int d = 0; d < e.n_dims; ++d) ne.push_back(static_cast<int32_t>(e.ne[static_cast<size_t>(d)]));
      w.tensor_head(e.name, static_cast<int32_t>(out), ne);
      if (out == e.type) {
        w.raw(t->data, e.nbytes);
      } else {
        convert_rows(w, e, t->data, out);
        ++r.n_converted;
      }
      done += e.nbytes;
      if (progress) progress(done, total);
    }
  });
  r.output_bytes = std::filesystem::file_size(output_path, ec);
  return r;
}

}  // namespace hark
