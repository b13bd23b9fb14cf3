// Milliseconds of wall-clock time since a steady-clock instant: how every layer keeps the timings
// it reports (Timings, bench figures, realtime events).
#pragma once
#include <chrono>

namespace hark {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace hark
