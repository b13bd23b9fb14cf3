// The host's RAM as the CPU devices report it (Device::memory): both the optimised and the
// reference CPU device compute in host memory, so they read it the same way.
#pragma once
#include <cstddef>

namespace hark {

// Host RAM available and total, from /proc/meminfo (0 when unknown).
void read_host_memory(size_t* free, size_t* total);

}  // namespace hark
