#pragma once
// A worker child process: the same binary, re-executed, with its input on stdin and its
// results on a dedicated pipe (fd 3). Its stdout is redirected to stderr, so that library
// chatter (NCCL_DEBUG prints to stdout) never corrupts the protocol. The child leads its
// own process group so that a kill reaches everything it started, and it is killed when the
// process that started it dies (PR_SET_PDEATHSIG), so no orphan keeps a GPU busy.
#include <sys/types.h>

#include <cstddef>

#include <string>
#include <vector>

namespace mgbench {

struct ExitInfo {
  bool exited = false;   // normal exit
  int code = 0;          // exit code when exited
  int signal = 0;        // terminating signal otherwise
  std::string describe() const;  // "exit code 4", "killed by SIGSEGV"
  static ExitInfo from_wait_status(int status);  // a status waitpid() gave
};

// With a launcher (mpirun, srun ...: `launcher` is its command line, found on PATH), the
// child is `launcher... self_exe args...`, and its stdout is the result pipe: the launcher
// forwards its ranks' stdout there, and the worker keeps stray output off it. Such a child
// dies by SIGTERM with the orchestrator, and kill_group() sends it SIGTERM first (mpirun and
// srun then end their ranks, on every node; they live outside the launcher's process group)
// and SIGKILL when it has not ended within kLauncherGraceSeconds.
//
// A launcher's stderr is held back (up to kHeldOutputBytes) until release_stderr(): what mpirun
// or srun print when a launch fails before any rank starts becomes one line of ours instead of a
// page of theirs; once the launch is up, it passes through as it comes.
inline constexpr double kLauncherGraceSeconds = 5.0;
inline constexpr std::size_t kHeldOutputBytes = 256 * 1024;

// Reports an exec that failed as what it was: the child writes its errno on a close-on-exec
// pipe, which the parent reads once (end of file: the exec succeeded).
class ExecReport {
 public:
  ExecReport();  // throws EnvironmentError when no pipe can be made
  ~ExecReport();
  ExecReport(const ExecReport&) = delete;
  ExecReport& operator=(const ExecReport&) = delete;
  // In the child, after a failed exec (async-signal-safe): writes errno, then _exit(127).
  [[noreturn]] void child_failed() const;
  // In the parent, after fork: 0 when the exec succeeded, else the child's errno.
  int exec_errno();

 private:
  int fds_[2] = {-1, -1};
};
// One line for a program that could not be started: "cannot start mpirun: Argument list too long
// (the command line is 180000 bytes)".
std::string exec_failure_message(const std::vector<std::string>& argv, int error);

class WorkerProcess {
 public:
  // Starts `[launcher...] self_exe args...`, writes `input` to its stdin and closes it.
  WorkerProcess(const std::vector<std::string>& args, const std::string& input,
                const std::vector<std::string>& launcher = {});
  ~WorkerProcess();  // kills and reaps if still running
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Reads what is available on the result pipe within timeout_ms; returns false at EOF.
  // Interrupted waits (signals) return true with nothing appended. A launcher's stderr is read
  // on the way (held, or passed through once released).
  bool read_some(std::string& out, int timeout_ms);
  // A launcher's stderr from now on goes to ours, starting with what was held.
  void release_stderr();
  // What a launcher printed on stderr and is still held (after wait(): everything it printed,
  // unless released).
  const std::string& held_stderr() const { return held_; }
  void kill_group();
  ExitInfo wait();
  pid_t pid() const { return pid_; }

 private:
  void read_stderr(int timeout_ms);
  static void send_input(int fd, const std::string& input);
  pid_t pid_ = -1;
  int result_fd_ = -1;
  int stderr_fd_ = -1;  // a launcher's stderr
  bool hold_stderr_ = true;
  std::string held_;
  bool launcher_ = false;
  double kill_deadline_s_ = -1;  // a launcher sent SIGTERM: SIGKILL after this
  bool reaped_ = false;
  ExitInfo exit_;
};

std::string self_executable();

}  // namespace mgbench
