#pragma once
// The sweep command's stages, callable from tests.
#include <map>
#include <string>
#include <vector>

#include "mgbench/plan.hpp"
#include "mgbench/results.hpp"

namespace mgbench {

// Parses `mgbench sweep` arguments (argv[0] is the command name). Throws UsageError.
SweepOptions parse_sweep_options(int argc, char** argv);
// Probes, plans, runs and finishes; returns the exit code.
int run_sweep(const SweepOptions& options, const std::vector<std::string>& argv,
              std::map<std::size_t, PointResult> finished);
// After the points: summaries, scaling, verdicts, telemetry series; writes results.json
// (+ --json/--csv), the reports and the history record; prints the console tables.
int finish_sweep(const SweepOptions& options, RunResult& run, const std::string& out_dir);
// 0 ok, 3 any wrong point, 4 any failed/timeout point, 130 interrupted.
int sweep_exit_code(const RunResult& run);

}  // namespace mgbench
