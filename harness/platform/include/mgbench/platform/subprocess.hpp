#pragma once
// A worker child process: the same binary, re-executed, with its input on stdin and its
// results on a dedicated pipe (fd 3). Its stdout is redirected to stderr, so that library
// chatter (NCCL_DEBUG prints to stdout) never corrupts the protocol. The child leads its
// own process group so that a kill reaches everything it started, and it is killed when the
// process that started it dies (PR_SET_PDEATHSIG), so no orphan keeps a GPU busy.
#include <sys/types.h>

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
inline constexpr double kLauncherGraceSeconds = 5.0;

class WorkerProcess {
 public:
  // Starts `[launcher...] self_exe args...`, writes `input` to its stdin and closes it.
  WorkerProcess(const std::vector<std::string>& args, const std::string& input,
                const std::vector<std::string>& launcher = {});
  ~WorkerProcess();  // kills and reaps if still running
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Reads what is available on the result pipe within timeout_ms; returns false at EOF.
  // Interrupted waits (signals) return true with nothing appended.
  bool read_some(std::string& out, int timeout_ms);
  void kill_group();
  ExitInfo wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int result_fd_ = -1;
  bool launcher_ = false;
  double kill_deadline_s_ = -1;  // a launcher sent SIGTERM: SIGKILL after this
  bool reaped_ = false;
  ExitInfo exit_;
};

std::string self_executable();

}  // namespace mgbench
