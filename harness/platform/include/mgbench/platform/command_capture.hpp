#pragma once
// Runs another program (mpirun, srun) and captures what it prints on stdout, for commands whose
// answer is their output, and on stderr (for the caller to pass on, or to sum up in one line when
// the program failed); stdin is /dev/null. It leads its own process
// group, which is killed when the time is up, and it dies with us (PR_SET_PDEATHSIG).
#include <cstddef>
#include <string>
#include <vector>

#include "mgbench/platform/subprocess.hpp"

namespace mgbench {

struct CapturedOutput {
  ExitInfo exit;
  std::string out;         // stdout, cut at max_bytes
  std::string err;         // stderr, cut at max_bytes
  bool timed_out = false;  // killed at the deadline
};

// The full path of `program` found on PATH (or `program` itself when it holds a '/' and is
// executable); "" when there is none.
std::string find_program(const std::string& program);

// Runs argv (argv[0] looked up with find_program, which the caller checked). Throws
// EnvironmentError when the process cannot be started, with the exec's own reason ("Argument list
// too long").
CapturedOutput run_and_capture(const std::vector<std::string>& argv, double timeout_s,
                               std::size_t max_bytes);

}  // namespace mgbench
