#include "mgbench/core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "mgbench/core/error.hpp"

namespace mgbench {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw EnvironmentError("cannot write " + path + ": " + why);
}

void write_all(int fd, const std::string& content, const std::string& path) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(path, std::strerror(n < 0 ? errno : EIO));
    done += static_cast<std::size_t>(n);
  }
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // nothing to make durable we could open
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

namespace {

// The mode a plain open(path, O_CREAT, 0666) would give: the user's umask applies, and nothing
// is world-writable whatever the umask says.
mode_t created_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask & ~S_IWOTH);
}

// A fresh temporary file next to `target` (mkstemp: unpredictable name, O_EXCL, so an existing
// file or symbolic link is never opened). Returns its descriptor and sets `tmp`.
int create_temp_next_to(const std::filesystem::path& target, std::string& tmp) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string pattern = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) fail(target.string(), std::strerror(errno));
  tmp = pattern;
  if (::fchmod(fd, created_file_mode()) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(target.string(), std::strerror(err));
  }
  return fd;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) fail(path, "cannot create " + target.parent_path().string() + ": " + ec.message());
  }
  if (fs::is_directory(fs::symlink_status(target, ec))) fail(path, "is a directory");
  std::string tmp;
  const int fd = create_temp_next_to(target, tmp);
  try {
    write_all(fd, content, path);
    if (::fsync(fd) != 0) fail(path, std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // rename() replaces a symbolic link at `path` itself; it never writes through it.
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, std::strerror(err));
  }
  fsync_directory(target.parent_path());
}

}  // namespace mgbench
