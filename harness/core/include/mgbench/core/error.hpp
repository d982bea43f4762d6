#pragma once
// Typed errors and the process exit codes they map to (listed in README.md).
#include <stdexcept>
#include <string>

namespace mgbench {

enum class ExitCode : int {
  ok = 0,
  regression = 1,
  usage = 2,
  wrong = 3,
  environment = 4,
  inconclusive = 5,
  interrupted = 130,
};

// Base of every error mgbench throws on purpose; carries the exit code it maps to.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// Bad command line, config or results file: exit 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(ExitCode::usage, what) {}
};

// No GPU, too few GPUs, driver/CUDA/NCCL/NVML/MPI failure: exit 4.
class EnvironmentError : public Error {
 public:
  explicit EnvironmentError(const std::string& what) : Error(ExitCode::environment, what) {}
};

// A failed call into a GPU library. `library` is "CUDA", "NCCL", "cuBLAS" or "NVML".
class ApiError : public EnvironmentError {
 public:
  ApiError(std::string library, int code, std::string code_name, std::string expression,
           std::string host, int rank, const std::string& what)
      : EnvironmentError(what), library_(std::move(library)), code_(code),
        code_name_(std::move(code_name)), expression_(std::move(expression)),
        host_(std::move(host)), rank_(rank) {}
  const std::string& library() const { return library_; }
  int api_code() const { return code_; }
  const std::string& code_name() const { return code_name_; }
  const std::string& expression() const { return expression_; }
  const std::string& host() const { return host_; }
  int rank() const { return rank_; }

 private:
  std::string library_;
  int code_;
  std::string code_name_;
  std::string expression_;
  std::string host_;
  int rank_;
};

// A device allocation failed: the point becomes `oom`, the sweep goes on.
class OutOfMemoryError : public ApiError {
 public:
  using ApiError::ApiError;
};

// The point cannot run here (unsupported dtype, no peer access...): it becomes `waived`.
class WaivedError : public Error {
 public:
  explicit WaivedError(const std::string& why) : Error(ExitCode::ok, why) {}
};

// `--help` on a subcommand: main prints the text on stdout and exits 0.
class HelpRequested : public Error {
 public:
  explicit HelpRequested(const std::string& text) : Error(ExitCode::ok, text) {}
};

// The rank of the calling host thread inside a worker (-1 outside ranks); recorded in errors.
void set_current_rank(int rank);
int current_rank();
const std::string& host_name();

[[noreturn]] void throw_api_error(const char* library, int code, const char* code_name,
                                  const char* message, const char* expression, const char* file,
                                  int line, bool out_of_memory);
// For destructors: logs instead of throwing.
void report_api_error_noexcept(const char* library, int code, const char* code_name,
                               const char* message, const char* expression, const char* file,
                               int line);

}  // namespace mgbench
