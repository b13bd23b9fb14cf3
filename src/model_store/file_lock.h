// FileLock: an exclusive advisory lock (flock) on a lock file beside a download, so two processes
// or threads that download the same model do not write the same .part at once: the second waits,
// then finds the finished file. The kernel drops the lock when its holder dies, so a killed
// download never leaves the file locked.
#pragma once
#include <functional>
#include <string>

namespace hark {

class FileLock {
 public:
  // Takes the lock on `path` (created when missing). While another holder has it, calls
  // on_wait() once, then polls should_abort() a few times a second; throws hark::Error when it
  // says stop or the lock file cannot be opened.
  FileLock(const std::string& path, const std::function<void()>& on_wait, const std::function<bool()>& should_abort);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // Removes the lock file while still holding it (after a success: anyone still waiting then
  // finds the finished file). A failed download keeps it, so waiters never race a new holder.
  void remove_file();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace hark
