#include "model_store/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "hark/error.hpp"

namespace hark {

FileLock::FileLock(const std::string& path, const std::function<void()>& on_wait,
                   const std::function<bool()>& should_abort)
    : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open the download lock " + path + ": " + std::strerror(errno));
  bool told = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const int e = errno;
      ::close(fd_);
      throw Error("cannot lock " + path + ": " + std::strerror(e));
    }
    if (!told && on_wait) on_wait();
    told = true;
    if (should_abort && should_abort()) {
      ::close(fd_);
      throw Error("stopped while waiting for another download of the same file (lock " + path + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the lock
}

void FileLock::remove_file() { ::unlink(path_.c_str()); }

}  // namespace hark
