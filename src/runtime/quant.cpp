// STUB
#include "runtime/quant.h"
#include "runtime/error.h"
namespace hark {
void quantize_row(DType, const float*, void*, int64_t) { throw Error("quantize_row not implemented"); }
void dequantize_row(DType, const void*, float*, int64_t) { throw Error("dequantize_row not implemented"); }
size_t quantize_rows(DType, const float*, void*, int64_t, int64_t) { throw Error("quantize_rows not implemented"); }
void quantize_row_q8a(const float*, BlockQ8A*, int64_t) { throw Error("quantize_row_q8a not implemented"); }
}  // namespace hark
