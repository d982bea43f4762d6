#include "mgbench/platform/subprocess.hpp"

#include <fcntl.h>
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
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(input_pipe, O_CLOEXEC) != 0) {
    throw EnvironmentError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
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
      ::execvp(argv[0], argv.data());
    }
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);
  ::close(result_pipe[1]);
  ::close(input_pipe[0]);
  result_fd_ = result_pipe[0];
  // Send the input; the child reads it all before doing anything else.
  std::size_t done = 0;
  while (done < input.size()) {
    const ssize_t n = ::write(input_pipe[1], input.data() + done, input.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // the child died early: its exit status tells why
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(input_pipe[1]);
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_ && pid_ > 0) {
    kill_group();
    wait();
  }
  if (result_fd_ >= 0) ::close(result_fd_);
}

bool WorkerProcess::read_some(std::string& out, int timeout_ms) {
  if (result_fd_ < 0) return false;
  pollfd pfd{result_fd_, POLLIN, 0};
  const int r = ::poll(&pfd, 1, timeout_ms);
  if (r < 0) return true;   // EINTR: let the caller look at its flags
  if (r == 0) return true;  // timeout
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
  return exit_;
}

}  // namespace mgbench
