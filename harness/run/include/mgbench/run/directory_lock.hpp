#pragma once
// The lock that keeps two commands (sweep, screen, soak, accept) out of one output directory.
#include <string>

namespace mgbench {

// An exclusive lock on a sweep's output directory (flock on DIR/sweep.lock), held while the
// object lives. The directory is created first. Throws UsageError when another sweep holds
// the lock, EnvironmentError when the directory or the lock file cannot be created.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace mgbench
