// The C API: model conversion (hark_quantize_model).
#include "capi/capi_internal.h"

using namespace hark::capi;  // NOLINT(google-build-using-namespace): this layer's own helpers

namespace {
// The type names as static strings, for hark_quantize_result.
const char* static_type_name(const std::string& name) {
  for (const char* t : {"f32", "f16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
    if (name == t) return t;
  return "unknown";
}
}  // namespace

hark_status hark_quantize_model(const char* input_path, const char* output_path, const char* type,
                                hark_quantize_progress_callback progress, void* user_data, hark_quantize_result* out,
                                size_t out_size) {
  return guarded("hark_quantize_model", HARK_ERR_MODEL, [&] {
    require(input_path != nullptr && *input_path != '\0', "input_path is NULL or empty");
    require(output_path != nullptr && *output_path != '\0', "output_path is NULL or empty");
    require(type != nullptr, "type is NULL");
    const std::string t = type;
    require(std::string(static_type_name(t)) == t,
            "type \"" + t + "\" is not one of f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0");
    if (out)
      require(out_size >= kQuantizeResultV1, "out_size " + std::to_string(out_size) + " is smaller than the struct (" +
                                                 std::to_string(kQuantizeResultV1) + "); pass sizeof *out");
    hark::QuantizeProgress cb;
    if (progress) cb = [&](uint64_t done, uint64_t total) { progress(done, total, user_data); };
    const hark::QuantizeResult r = hark::quantize_model(input_path, output_path, t, cb);
    if (!out) return;
    hark_quantize_result c;
    std::memset(static_cast<void*>(&c), 0, sizeof c);
    c.from_type = static_type_name(r.from_type);
    c.to_type = static_type_name(r.to_type);
    c.input_bytes = r.input_bytes;
    c.output_bytes = r.output_bytes;
    c.n_tensors = r.n_tensors;
    c.n_converted = r.n_converted;
    c.n_kept_f16 = r.n_kept_f16;
    write_out(out, out_size, kQuantizeResultV1, c);
  });
}
