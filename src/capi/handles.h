// The C API's registry of live handles. Every handle a C caller holds (context, state, result,
// sample buffer) is entered here when made and taken out when freed; every call checks its handle
// arguments here first, by address only, so a NULL, freed or made-up pointer is reported as
// HARK_ERR_BAD_HANDLE without ever being dereferenced.
#pragma once
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace hark::capi {

enum class Kind {
  Context,
  State,
  Result,          // owned by the caller, freed with hark_result_free
  BorrowedResult,  // the new segments a callback is shown; read-only, freed by the library
  Samples,         // a float buffer from hark_audio_*
  VadContext,
  VadStream,
  VadResult,
  Stream,
};

class Handles {
 public:
  // Readers (every check) share the lock; adding and removing take it alone. A getter that holds
  // the shared lock while it reads keeps a concurrent free from pulling the object away under it.
  std::shared_mutex& mutex() { return mutex_; }

  // With the lock held (shared or exclusive).
  bool is(const void* p, Kind k) const {
    const auto it = live_.find(p);
    return it != live_.end() && it->second.kind == k;
  }

  void add(const void* p, Kind k) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    live_[p] = Entry{k};
  }
  // True when p was live as a k (and now is not).
  bool remove(const void* p, Kind k) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    return remove_locked(p, k);
  }
  // With the exclusive lock held.
  bool remove_locked(const void* p, Kind k) {
    const auto it = live_.find(p);
    if (it == live_.end() || it->second.kind != k) return false;
    live_.erase(it);
    return true;
  }

 private:
  // A class, not the bare enum, as the mapped type: -fvisibility=hidden hides classes but not
  // enums, and the map's std:: code would otherwise be exported from libhark.so under our names.
  struct Entry {
    Kind kind;
  };
  std::shared_mutex mutex_;
  std::unordered_map<const void*, Entry> live_;
};

// The one registry. Never destroyed, so handles freed during static destruction still find it.
Handles& handles();

}  // namespace hark::capi
