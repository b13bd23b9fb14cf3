#include "backend/reference/reference_backend.h"

#include "backend/device_registry.h"
#include "backend/host_memory.h"
#include "runtime/error.h"

namespace hark::ref {

namespace {

class ReferenceBackend : public Backend {
 public:
  explicit ReferenceBackend(Device& dev) : dev_(dev) {}
  const char* name() const override { return kReferenceDeviceName; }
  Device& device() const override { return dev_; }
  ComputeStatus compute(const Graph& g) override {
    for (Tensor* node : g.nodes()) {
      if (op_is_view(node->op)) continue;
      HARK_CHECK(supports(*node), std::string("reference backend cannot compute ") + node->describe());
      HARK_CHECK(node->data != nullptr, "reference backend: node " + node->describe() + " has no memory");
    }
    for (Tensor* node : g.nodes()) {
      if (op_is_view(node->op)) continue;
      compute_node(*node);
      if (abort_ && abort_()) return ComputeStatus::Aborted;
    }
    return ComputeStatus::Ok;
  }
  void set_tensor_async(Tensor& t, const void* data, size_t offset, size_t size) override {
    tensor_set_range(t, data, offset, size);
  }
  void get_tensor_async(const Tensor& t, void* data, size_t offset, size_t size) override {
    tensor_get_range(t, data, offset, size);
  }
  void synchronize() override {}
  std::unique_ptr<Event> new_event() override { return std::make_unique<ImmediateEvent>(); }
  void set_n_threads(int) override {}  // always one thread
  int n_threads() const override { return 1; }

 private:
  Device& dev_;
};

}  // namespace

ReferenceDevice::ReferenceDevice() : buffer_type_("cpu-ref") {}

const char* ReferenceDevice::name() const { return kReferenceDeviceName; }

void ReferenceDevice::memory(size_t* free, size_t* total) const { read_host_memory(free, total); }

bool ReferenceDevice::supports_op(const Tensor& node) const { return supports(node); }

std::unique_ptr<Backend> ReferenceDevice::init_backend(const BackendParams&) {
  return std::make_unique<ReferenceBackend>(*this);
}

}  // namespace hark::ref
