#include "backend/host_memory.h"

#include <fstream>
#include <string>

namespace hark {

void read_host_memory(size_t* free, size_t* total) {
  *free = 0;
  *total = 0;
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kb;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") *total = kb * 1024;
    if (key == "MemAvailable:") *free = kb * 1024;
  }
}

}  // namespace hark
