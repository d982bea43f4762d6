#include "mgbench/platform/command_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"

namespace mgbench {

namespace {

ExitInfo reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return ExitInfo::from_wait_status(status);
}

// Reads the child's stdout and stderr until both end or the deadline; true when the deadline
// passed first.
bool drain(int out_fd, int err_fd, double timeout_s, std::size_t max_bytes, CapturedOutput& into) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int fds[2] = {out_fd, err_fd};
  std::string* sinks[2] = {&into.out, &into.err};
  char buf[65536];
  while (fds[0] >= 0 || fds[1] >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return true;
    pollfd pfds[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    if (::poll(pfds, 2, static_cast<int>(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || pfds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i], buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i] = -1;  // the caller closes it
        continue;
      }
      std::string& sink = *sinks[i];
      const std::size_t room = max_bytes - std::min(max_bytes, sink.size());
      sink.append(buf, std::min(room, static_cast<std::size_t>(n)));
    }
  }
  return false;
}

}  // namespace

std::string find_program(const std::string& program) {
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) {
    return ::access(program.c_str(), X_OK) == 0 ? program : "";
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

CapturedOutput run_and_capture(const std::vector<std::string>& argv, double timeout_s,
                               std::size_t max_bytes) {
  if (argv.empty()) throw EnvironmentError("run_and_capture: no command");
  const std::string exe = find_program(argv[0]);
  int out_pipe[2];
  int err_pipe[2];
  if (exe.empty() || ::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw EnvironmentError(fmt::format("cannot start {}", argv[0]));
  }
  std::vector<std::string> store = argv;
  std::vector<char*> args;
  for (auto& a : store) args.push_back(a.data());
  args.push_back(nullptr);
  ExecReport report;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw EnvironmentError(fmt::format("cannot fork: {}", std::strerror(errno)));
  if (pid == 0) {  // async-signal-safe calls only until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::setpgid(0, 0);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::execv(exe.c_str(), args.data());
    report.child_failed();
  }
  ::setpgid(pid, pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (const int error = report.exec_errno(); error != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    (void)reap(pid);
    throw EnvironmentError(exec_failure_message(argv, error));
  }
  CapturedOutput result;
  result.timed_out = drain(out_pipe[0], err_pipe[0], timeout_s, max_bytes, result);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
  result.exit = reap(pid);
  return result;
}

}  // namespace mgbench
