#pragma once
// A sweep once its options are parsed: probe, plan, run every group, finish.
#include <functional>
#include <map>
#include <set>
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

// Parses `mgbench sweep` arguments (argv[0] is the command name). Throws UsageError. `named`,
// when given, receives the long names of the options the command line gave.
SweepOptions parse_sweep_options(int argc, char** argv, std::set<std::string>* named = nullptr);
// The options that define a sweep's plan (GPU counts, devices, workloads and their axes, the
// profile and stopping rule, warm-up, scaling, baselines, launcher and nodes, NVLS), typed, one
// key per option: the journal's header records them ("plan_options") for --resume.
Json plan_options_to_json(const SweepOptions& options);
// --resume: `current` (parsed from a command line that gave the options `named`) with the plan
// `recorded` of the journal of `source`, which is untrusted: each value must have its option's
// type and pass the command line's checks. An option of the plan that the command line names must
// agree with it; every other setting, and every path, stays the command line's. Throws UsageError
// (one line) naming the option.
SweepOptions with_recorded_plan(const SweepOptions& current, const std::set<std::string>& named,
                                const Json& recorded, const std::string& source);
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
// A run starting now: the tool (name, version, git revision), `argv`, the start time, the host.
RunResult started_run(const std::vector<std::string>& argv);
// finish_sweep's steps without its exit code: false when one after the points failed (logged).
bool finish_run(const SweepOptions& options, RunResult& run, const std::string& out_dir,
                const RunSinks& sinks);
// Active test hooks: one warning, and a "test_hooks" entry in the environment (part of the
// fingerprint), so that no report or comparison takes such a run for a real measurement.
void record_test_hooks(Json& environment);
// 0 ok, 3 any wrong point, 4 any failed/timeout point, 130 interrupted.
int sweep_exit_code(const RunResult& run);

}  // namespace mgbench
