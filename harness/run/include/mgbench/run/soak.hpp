#pragma once
// `mgbench soak`: sustained load of one workload on every GPU of a set for a duration, measured
// in windows (one point of the workload per window, run back to back by one worker process), with
// NVML telemetry, XID events and ECC/row-remap counters, and the "runs stably" verdict
// (analysis/soak_analysis.hpp). The definitions and thresholds are in docs/SOAK.md.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "mgbench/analysis/soak_analysis.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {

struct SoakOptions {
  double duration_s = 600;
  double window_s = 10;
  std::string workload = "gemm";
  std::vector<int> devices;  // empty: every visible device
  std::map<std::string, std::vector<std::string>> param_overrides;  // one value each
  RunSettings settings;
  SoakThresholds thresholds;
  std::string out_dir, json_path, db_path;
  bool no_report = false;
  bool no_history = false;
  int verbosity = 0;
};

// The bounds of --duration and --window: a soak of at most 30 days, windows of at least 0.1 s,
// and at most 10000 windows (every window is a point of the results, which hold at most
// limits::kMaxPoints, and a line of the report's charts).
inline constexpr double kSoakMaxDurationS = 30 * 24 * 3600.0;
inline constexpr double kSoakMinWindowS = 0.1;
inline constexpr std::size_t kSoakMaxWindows = 10000;
// ceil(duration_s / window_s): the windows the duration holds (both already within the bounds).
std::size_t soak_window_count(double duration_s, double window_s);
// "10m", "9m30s", "20s", "1h", "1.5s", "600" (seconds) -> seconds; UsageError otherwise.
double parse_duration(const std::string& text, const std::string& what);
// The soak load of each workload the soak knows (a large bf16 cuBLASLt GEMM for gemm...), as
// --param overrides; the user's own --param values replace them.
std::map<std::string, std::vector<std::string>> soak_default_params(const std::string& workload);
// Parses `mgbench soak` arguments (argv[0] is the command name). Throws UsageError.
SoakOptions parse_soak_options(int argc, char** argv);
// The soak's window settings: every window samples for exactly window_s.
RunSettings soak_window_settings(RunSettings settings, double window_s);
// Health facts from the per-device counters before and after the soak (the "counters" of the
// soak's health section): {"new_uncorrected_ecc": an uncorrected ECC count grew,
// "row_remap_trouble": a remap pending or failed after, or more remapped rows than before}.
Json compare_counters(const Json& before, const Json& after);
// Runs the soak and writes results.json (+ sinks, history). Returns the exit code: 0 stable,
// 4 not stable (or a failure), 130 interrupted; what was measured is written in every case.
int run_soak(const SoakOptions& options, const std::vector<std::string>& argv,
             const RunSinks& sinks);

}  // namespace mgbench
