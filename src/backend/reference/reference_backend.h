// The reference CPU device: every op written as plainly as possible (scalar loops, double
// accumulators, one thread, weights dequantized through runtime/quant.h). It is slow on purpose:
// tests hold the optimised backend to it, op by op and layer by layer.
#pragma once
#include "backend/device.h"

namespace hark::ref {

class ReferenceDevice : public Device {
 public:
  ReferenceDevice();
  const char* name() const override;
  std::string description() const override { return "scalar reference CPU backend (tests)"; }
  DeviceType type() const override { return DeviceType::CPU; }
  void memory(size_t* free, size_t* total) const override;
  bool supports_op(const Tensor& node) const override;
  bool supports_buffer_type(const BufferType* bt) const override { return bt == &buffer_type_; }
  BufferType* buffer_type() override { return &buffer_type_; }
  std::unique_ptr<Backend> init_backend(const BackendParams& params = {}) override;

 private:
  HostBufferType buffer_type_;
};

// One node, computed in full on the calling thread (reference_ops.cpp).
void compute_node(Tensor& node);
bool supports(const Tensor& node);

}  // namespace hark::ref
