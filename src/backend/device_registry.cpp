#include "backend/device_registry.h"

#include "backend/cpu/cpu_backend.h"
#include "backend/reference/reference_backend.h"

namespace hark {

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "CPU";
    case DeviceType::GPU: return "GPU";
    case DeviceType::Accelerator: return "accelerator";
  }
  return "?";
}

Registry& Registry::global() {
  static Registry* reg = [] {
    auto* r = new Registry();  // never destroyed: devices may be used from static destructors
    r->add(std::make_unique<cpu::CpuDevice>());
    r->add(std::make_unique<ref::ReferenceDevice>());
    return r;
  }();
  return *reg;
}

void Registry::add(std::unique_ptr<Device> dev) {
  view_.push_back(dev.get());
  owned_.push_back(std::move(dev));
}

Device* Registry::find(std::string_view name) const {
  for (Device* d : view_)
    if (name == d->name()) return d;
  return nullptr;
}

Device* Registry::find(DeviceType type) const {
  for (Device* d : view_)
    if (d->type() == type) return d;
  return nullptr;
}

Device* Registry::best() const {
  for (DeviceType t : {DeviceType::GPU, DeviceType::Accelerator})
    if (Device* d = find(t)) return d;
  if (Device* d = find(kCpuDeviceName)) return d;
  return view_.empty() ? nullptr : view_.front();
}

}  // namespace hark
