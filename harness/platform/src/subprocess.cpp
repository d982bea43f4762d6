#include "mgbench/platform/subprocess.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"

namespace mgbench {

namespace {
double monotonic_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

std::string ExitInfo::describe() const {
  if (exited) return fmt::format("exit code {}", code);
  const char* name = ::strsignal(signal);
  return fmt::format("killed by signal {} ({})", signal, name ? name : "?");
}

ExitInfo ExitInfo::from_wait_status(int status) {
  ExitInfo info;
  if (WIFEXITED(status)) {
    info.exited = true;
    info.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    info.signal = WTERMSIG(status);
  }
  return info;
}

ExecReport::ExecReport() {
  if (::pipe2(fds_, O_CLOEXEC) != 0) {
    throw EnvironmentError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
}

ExecReport::~ExecReport() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

void ExecReport::child_failed() const {
  const int error = errno;
  (void)!::write(fds_[1], &error, sizeof error);
  ::_exit(127);
}

int ExecReport::exec_errno() {
  if (fds_[1] >= 0) ::close(fds_[1]);
  fds_[1] = -1;
  int error = 0;
  ssize_t n = 0;
  do {
    n = ::read(fds_[0], &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof error) ? error : 0;
}

std::string exec_failure_message(const std::vector<std::string>& argv, int error) {
  std::size_t bytes = 0;
  for (const auto& a : argv) bytes += a.size() + 1;
  return fmt::format("cannot start {}: {} (the command line is {} bytes in {} words)",
                     argv.empty() ? std::string("a program") : argv[0], std::strerror(error),
                     bytes, argv.size());
}

std::string self_executable() {
  char buf[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw EnvironmentError("cannot resolve /proc/self/exe to start a worker");
  return std::string(buf, static_cast<std::size_t>(n));
}

WorkerProcess::WorkerProcess(const std::vector<std::string>& args, const std::string& input,
                             const std::vector<std::string>& launcher)
    : launcher_(!launcher.empty()) {
  int result_pipe[2];
  int input_pipe[2];
  int stderr_pipe[2] = {-1, -1};
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(input_pipe, O_CLOEXEC) != 0 ||
      (launcher_ && ::pipe2(stderr_pipe, O_CLOEXEC) != 0)) {
    throw EnvironmentError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  ExecReport report;
  const std::string exe = self_executable();
  std::vector<std::string> argv_store = launcher;
  argv_store.push_back(exe);
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  const int death_signal = launcher_ ? SIGTERM : SIGKILL;
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    throw EnvironmentError(fmt::format("cannot fork a worker: {}", std::strerror(errno)));
  }
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec. It dies with the orchestrator (even a
    // SIGKILLed one): the death signal survives exec, and the getppid() check closes the
    // window where the parent died before the prctl.
    ::prctl(PR_SET_PDEATHSIG, death_signal);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(input_pipe[0], 0);
    if (launcher.empty()) {
      ::dup2(2, 1);
      ::dup2(result_pipe[1], 3);
      ::execv(exe.c_str(), argv.data());
    } else {
      ::dup2(result_pipe[1], 1);
      ::dup2(stderr_pipe[1], 2);
      ::execvp(argv[0], argv.data());
    }
    report.child_failed();
  }
  ::setpgid(pid_, pid_);
  ::close(result_pipe[1]);
  ::close(input_pipe[0]);
  if (launcher_) ::close(stderr_pipe[1]);
  result_fd_ = result_pipe[0];
  stderr_fd_ = stderr_pipe[0];
  if (const int error = report.exec_errno(); error != 0) {
    ::close(input_pipe[1]);
    wait();
    ::close(result_fd_);
    if (stderr_fd_ >= 0) ::close(stderr_fd_);
    throw EnvironmentError(exec_failure_message(argv_store, error));
  }
  send_input(input_pipe[1], input);
}

// Writes the input and closes the pipe. A child that ends before reading it (a launcher that
// refuses to start) must not end this process by SIGPIPE: the signal is blocked in this thread
// for the write and a pending one is taken back.
void WorkerProcess::send_input(int fd, const std::string& input) {
  sigset_t pipe_signal, old;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
  (void)write_fully(fd, input);  // a failure: the child died early, its exit status tells why
  ::close(fd);
  const timespec now{0, 0};
  while (sigtimedwait(&pipe_signal, nullptr, &now) == SIGPIPE) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_ && pid_ > 0) {
    kill_group();
    wait();
  }
  if (result_fd_ >= 0) ::close(result_fd_);
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
}

void WorkerProcess::release_stderr() {
  hold_stderr_ = false;
  (void)write_fully(2, held_);
  held_.clear();
}

// Takes what the launcher's stderr holds (within timeout_ms): held, or passed on to ours.
void WorkerProcess::read_stderr(int timeout_ms) {
  while (stderr_fd_ >= 0) {
    pollfd pfd{stderr_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) <= 0) return;
    char buf[65536];
    const ssize_t n = ::read(stderr_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(stderr_fd_);
      stderr_fd_ = -1;
      return;
    }
    held_.append(buf, static_cast<std::size_t>(n));
    // Held up to a bound: a launch that prints more than that is not quiet about its failure.
    if (!hold_stderr_ || held_.size() > kHeldOutputBytes) release_stderr();
    timeout_ms = 0;
  }
}

bool WorkerProcess::read_some(std::string& out, int timeout_ms) {
  if (result_fd_ < 0) return false;
  pollfd pfds[2] = {{result_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
  const int r = ::poll(pfds, stderr_fd_ >= 0 ? 2 : 1, timeout_ms);
  if (r < 0) return true;   // EINTR: let the caller look at its flags
  if (r == 0) return true;  // timeout
  if (stderr_fd_ >= 0 && pfds[1].revents != 0) read_stderr(0);
  if (pfds[0].revents == 0) return true;
  char buf[65536];
  const ssize_t n = ::read(result_fd_, buf, sizeof(buf));
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) {
    ::close(result_fd_);
    result_fd_ = -1;
    return false;
  }
  out.append(buf, static_cast<std::size_t>(n));
  return true;
}

void WorkerProcess::kill_group() {
  if (pid_ <= 0 || reaped_) return;
  if (launcher_ && kill_deadline_s_ < 0) {
    ::kill(pid_, SIGTERM);
    kill_deadline_s_ = monotonic_now_s() + kLauncherGraceSeconds;
    return;
  }
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
}

ExitInfo WorkerProcess::wait() {
  if (reaped_) return exit_;
  int status = 0;
  bool reaped = false;
  // A launcher told to end gets its grace period, then SIGKILL.
  while (kill_deadline_s_ >= 0 && !reaped) {
    reaped = ::waitpid(pid_, &status, WNOHANG) == pid_;
    if (!reaped && monotonic_now_s() > kill_deadline_s_) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      break;
    }
    if (!reaped) ::usleep(20000);
  }
  while (!reaped && ::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) break;
  }
  reaped_ = true;
  exit_ = ExitInfo::from_wait_status(status);
  read_stderr(200);  // the launcher has ended: what it printed last
  return exit_;
}

}  // namespace mgbench
