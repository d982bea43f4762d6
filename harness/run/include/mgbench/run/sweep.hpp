#pragma once
// A sweep once its options are parsed: probe, plan, run every group, finish.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"
#include "mgbench/run/plan.hpp"

namespace mgbench {

// What happens to a finished run besides results.json (console tables, CSV, reports). The
// caller builds the list and hands it in; the run layer never knows what a sink renders.
struct RunSink {
  std::string name;
  std::function<void(const RunResult& run, const std::string& out_dir)> write;
};
using RunSinks = std::vector<RunSink>;

// Parses `mgbench sweep` arguments (argv[0] is the command name). Throws UsageError.
SweepOptions parse_sweep_options(int argc, char** argv);
// --nvls on|off|auto: sets (or, for auto, unsets) NCCL_NVLS_ENABLE in this process, so that the
// probe and every worker it starts have it (mpirun forwards NCCL_*, srun the environment) and
// record it; nothing without --nvls. parse_sweep_options refused a contradicting variable.
void apply_nvls(const SweepOptions& options);
// Probes, plans, runs and finishes; returns the exit code.
int run_sweep(const SweepOptions& options, const std::vector<std::string>& argv,
              std::map<std::size_t, PointResult> finished, const RunSinks& sinks);
// A loaded run's derived data follows this build: the presentation and the summary of every
// workload this build knows, the scaling series and the verdicts (in the run's settings.scaling
// mode, with settings.baseline_each) are recomputed from the points (`mgbench report`); the
// measurements themselves never change.
void refresh_derived(RunResult& run);

// After the points: summaries, scaling, verdicts, telemetry series; writes results.json
// (+ --json), then runs every sink and records the history entry. A failure after
// results.json is written costs exit 4 (one line each), never the file.
int finish_sweep(const SweepOptions& options, RunResult& run, const std::string& out_dir,
                 const RunSinks& sinks);
// 0 ok, 3 any wrong point, 4 any failed/timeout point, 130 interrupted.
int sweep_exit_code(const RunResult& run);

}  // namespace mgbench
