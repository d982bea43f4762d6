// One command at a time in an output directory: flock on DIR/sweep.lock.
#include "mgbench/run/directory_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

DirectoryLock::DirectoryLock(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw EnvironmentError(
        fmt::format("cannot create the output directory '{}': {}", dir, ec.message()));
  }
  const std::string path = dir + "/sweep.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0664);
  if (fd_ < 0) {
    throw EnvironmentError(fmt::format("cannot lock the output directory '{}': {}", dir,
                                       std::strerror(errno)));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      throw UsageError(fmt::format("output directory '{}' is in use by another sweep", dir));
    }
    throw EnvironmentError(
        fmt::format("cannot lock the output directory '{}': {}", dir, std::strerror(err)));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace mgbench
