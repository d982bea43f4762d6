#include "mgbench/core/file_io.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <streambuf>

#include "mgbench/core/error.hpp"

namespace mgbench {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw EnvironmentError("cannot write " + (path == "-" ? "standard output" : path) + ": " + why);
}

// ---- temporary files removed when a signal ends the process ---------------------------------

constexpr std::array<int, 3> kCleanupSignals = {SIGINT, SIGTERM, SIGHUP};
constexpr std::size_t kTempSlots = 16;

// A temporary file being written: state 0 free, 1 taken (path being set), 2 live.
struct TempSlot {
  std::atomic<int> state{0};
  char path[PATH_MAX] = {};
};
std::array<TempSlot, kTempSlots> g_temps;
std::array<struct sigaction, kCleanupSignals.size()> g_previous{};
std::mutex g_handlers_mutex;
int g_live_temps = 0;  // under g_handlers_mutex

// Async-signal-safe: unlink and sigaction only. The disposition the process had before the
// write decides: a handler of its own runs (the process goes on and finishes the write), an
// ignored signal stays ignored, and the default action (the end of the process) comes after the
// temporary files are removed.
extern "C" void on_cleanup_signal(int sig, siginfo_t* info, void* context) {
  std::size_t i = 0;
  while (i + 1 < kCleanupSignals.size() && kCleanupSignals[i] != sig) ++i;
  const struct sigaction& previous = g_previous[i];
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler != SIG_DFL) {
    previous.sa_handler(sig);
    return;
  }
  for (TempSlot& slot : g_temps) {
    if (slot.state.load() == 2) ::unlink(slot.path);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // blocked while this handler runs: delivered, with the default action, on return
}

// The disposition in place is kept before ours replaces it, so that our handler, whichever
// thread it runs on, always finds it.
void install_cleanup_handlers() {
  for (std::size_t i = 0; i < kCleanupSignals.size(); ++i) {
    ::sigaction(kCleanupSignals[i], nullptr, &g_previous[i]);
    struct sigaction ours {};
    ours.sa_sigaction = on_cleanup_signal;
    ours.sa_mask = g_previous[i].sa_mask;
    ours.sa_flags = SA_SIGINFO | (g_previous[i].sa_flags & SA_RESTART);
    ::sigaction(kCleanupSignals[i], &ours, nullptr);
  }
}

// Puts back what was there before, unless someone installed another handler meanwhile.
void restore_cleanup_handlers() {
  for (std::size_t i = 0; i < kCleanupSignals.size(); ++i) {
    struct sigaction current {};
    ::sigaction(kCleanupSignals[i], nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == on_cleanup_signal) {
      ::sigaction(kCleanupSignals[i], &g_previous[i], nullptr);
    }
  }
}

// The cleanup signals blocked in this thread for the guard's life.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kCleanupSignals) sigaddset(&set, sig);
    ::pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

// A temporary file that a cleanup signal removes. Without a free slot (more than kTempSlots
// writes at once) or for a path longer than PATH_MAX, the file is still removed on every error.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
    forget();
  }

  // mkstemp next to `target`, registered before any signal can see it unregistered.
  void create_next_to(const std::filesystem::path& target);
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // The file is renamed to its place: nothing is left to remove.
  void committed() {
    forget();
    path_.clear();
  }
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  void remember();
  void forget();

  int fd_ = -1;
  std::string path_;
  TempSlot* slot_ = nullptr;
};

void TempFile::remember() {
  if (path_.size() >= PATH_MAX) return;
  for (TempSlot& slot : g_temps) {
    int free_state = 0;
    if (!slot.state.compare_exchange_strong(free_state, 1)) continue;
    std::memcpy(slot.path, path_.c_str(), path_.size() + 1);
    slot_ = &slot;
    break;
  }
  if (slot_ == nullptr) return;
  const std::lock_guard<std::mutex> lock(g_handlers_mutex);
  if (g_live_temps++ == 0) install_cleanup_handlers();
  slot_->state.store(2);
}

void TempFile::forget() {
  if (slot_ == nullptr) return;
  const SignalsBlocked blocked;
  slot_->state.store(0);
  slot_ = nullptr;
  const std::lock_guard<std::mutex> lock(g_handlers_mutex);
  if (--g_live_temps == 0) restore_cleanup_handlers();
}

// The mode a plain open(path, O_CREAT, 0666) would give: the user's umask applies, and nothing
// is world-writable whatever the umask says.
mode_t created_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask & ~S_IWOTH);
}

// A fresh temporary file next to `target` (mkstemp: unpredictable name, O_EXCL, so an existing
// file or symbolic link is never opened).
void TempFile::create_next_to(const std::filesystem::path& target) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string pattern = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  {
    const SignalsBlocked blocked;  // no signal between the file's creation and its slot
    fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd_ < 0) fail(target.string(), std::strerror(errno));
    path_ = pattern;
    remember();
  }
  if (::fchmod(fd_, created_file_mode()) != 0) fail(target.string(), std::strerror(errno));
}

// ---- writing --------------------------------------------------------------------------------

// An output stream buffer over a file descriptor; a failed write is kept (errno) and ends the
// writing, the caller reports it.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd) : fd_(fd) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    while (error_ == 0 && p < pptr()) {
      const ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error_ = n < 0 ? errno : EIO;
      if (n > 0) p += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

  int fd_;
  int error_ = 0;
  std::array<char, 1 << 16> buffer_{};
};

// Streams `fill` into `fd`; throws naming `path` when a write failed.
void write_stream(int fd, const std::string& path, const std::function<void(std::ostream&)>& fill) {
  FdStreamBuf buf(fd);
  std::ostream out(&buf);
  fill(out);
  out.flush();
  if (buf.error() != 0) fail(path, std::strerror(buf.error()));
  if (!out) fail(path, "the output stream failed");
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // nothing to make durable we could open
  ::fsync(fd);
  ::close(fd);
}

enum class Target { replace, in_place };

// What `path` is and therefore how it is written (see file_io.hpp); throws for what is refused.
Target classify(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Target::replace;
    fail(path, std::strerror(errno));
  }
  if (S_ISREG(st.st_mode)) return Target::replace;
  if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0) {
      fail(path, "a symbolic link to nothing (mgbench does not create a file through a link)");
    }
    if (S_ISREG(st.st_mode)) {
      fail(path, "a symbolic link to a file (mgbench replaces a file only at its own path: give "
                 "that path, or - for standard output)");
    }
  }
  if (S_ISDIR(st.st_mode)) fail(path, "is a directory");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return Target::in_place;
  fail(path, S_ISSOCK(st.st_mode) ? "is a socket" : "is a block device");
}

// A device or a pipe: opened without O_CREAT or O_TRUNC, written, never replaced.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    fail(path, "changed while it was opened (no longer a device or a pipe)");
  }
  try {
    write_stream(fd, path, fill);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0 && errno != EINTR) fail(path, std::strerror(errno));
}

void replace_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const std::filesystem::path target(path);
  TempFile tmp;
  tmp.create_next_to(target);
  write_stream(tmp.fd(), path, fill);
  if (::fsync(tmp.fd()) != 0) fail(path, std::strerror(errno));
  // rename() replaces what is at `path` itself (classify() let only a file or nothing through).
  if (tmp.close() != 0 || ::rename(tmp.path().c_str(), path.c_str()) != 0) {
    fail(path, std::strerror(errno));
  }
  tmp.committed();
  fsync_directory(target.parent_path());
}

}  // namespace

bool is_stdout_path(const std::string& path) { return path == "-"; }

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  if (is_stdout_path(path)) {
    std::cout.flush();  // what the command printed before comes first
    write_stream(STDOUT_FILENO, path, fill);
    return;
  }
  const std::filesystem::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) fail(path, "cannot create " + target.parent_path().string() + ": " + ec.message());
  }
  if (classify(path) == Target::in_place) {
    write_in_place(path, fill);
  } else {
    replace_atomically(path, fill);
  }
}

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic(path, [&content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

int write_fully(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace mgbench
