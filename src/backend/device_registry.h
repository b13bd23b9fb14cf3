// Registry: the devices this build can use. Built-in devices (the optimised CPU device and the
// scalar reference CPU device) register themselves on first use; GPU backends add theirs.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "backend/device.h"

namespace hark {

class Registry {
 public:
  static Registry& global();  // holds the built-in devices

  void add(std::unique_ptr<Device> dev);
  const std::vector<Device*>& devices() const { return view_; }
  Device* find(std::string_view name) const;  // nullptr when absent
  Device* find(DeviceType type) const;        // first of that type
  // The device to use by default: a GPU or accelerator when present, else the optimised CPU.
  Device* best() const;

 private:
  std::vector<std::unique_ptr<Device>> owned_;
  std::vector<Device*> view_;
};

// Names of the built-in devices.
inline constexpr const char* kCpuDeviceName = "cpu";
inline constexpr const char* kReferenceDeviceName = "cpu-ref";

}  // namespace hark
