#pragma once
// `mgbench accept`: the acceptance run of a new server, in four stages (docs/ACCEPT.md):
//   1. configuration: the device probe and the doctor's checks (`mgbench doctor --json`);
//   2. communication: the p2p matrix and the collectives at every GPU (run_sweep);
//   3. scaling: compute, memory, host-link and training workloads at 1 and N GPUs (run_sweep);
//   4. soak: sustained load with the "runs stably" verdict (run_soak).
// A stage whose failure makes the rest meaningless stops the run; each stage keeps its own
// results and report in a subdirectory, and the checklist (analysis/accept_judge.hpp) is written
// as results.json's "accept" section.
#include <string>
#include <vector>

#include "mgbench/analysis/accept.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {

struct AcceptOptions {
  std::vector<int> devices;   // empty: every visible device (--gpus all)
  double soak_s = 600;        // 0: no soak
  std::string criteria_path;  // empty: the defaults
  AcceptCriteria criteria;
  std::string lang = "en";  // the report's language (checked by the caller)
  std::string out_dir;      // empty: results/<UTC>-<host>/
  std::string from;         // --from: render this saved accept results.json again, run nothing
  bool force = false;       // start over in an --out directory that holds an earlier run
  bool no_history = false;
  std::string db_path;
  int verbosity = 0;
};

// The shortest --soak other than 0 (the longest is the soak's own bound, kSoakMaxDurationS).
inline constexpr double kAcceptMinSoakS = 1.0;

// Parses `mgbench accept` arguments (argv[0] is the command name) and reads --criteria. Throws
// UsageError: a bad option, or a bad criteria file with its line.
AcceptOptions parse_accept_options(int argc, char** argv);

// Runs the stages; writes results.json (kind "accept": settings.mode, the "accept" section) and
// then every sink of `accept_sinks`. `stage_sinks` are what each stage's own run writes (its
// report). Returns accept_exit_code(verdict): 0 ready, 1 not ready, 4 could not run, 130
// interrupted.
int run_accept(const AcceptOptions& options, const std::vector<std::string>& argv,
               const RunSinks& stage_sinks, const RunSinks& accept_sinks);

}  // namespace mgbench
