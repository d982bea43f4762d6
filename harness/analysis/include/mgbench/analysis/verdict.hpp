#pragma once
// Plain-words verdict per workload and parameter set: the speedup, what binds (the loss split,
// the straggler, the network), anomalies with their likely cause, and the next step, e.g.
//   "train_step bf16: 8 GPUs give 4.8x (60 %). Communication-bound: of the 1.60 ms lost per step
//    at 8 GPUs (4.00 ms against an ideal 2.40 ms), exposed communication is 100 % ... Next: ..."
// Collectives, whose bus bandwidth is undefined on one GPU, get a verdict against the link's
// limit instead (compute_link_verdicts). docs/METHODOLOGY.md says how a verdict is reached.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/analysis/scaling.hpp"

namespace mgbench {

// Anomaly codes in a verdict's "anomalies" array.
inline constexpr const char* kAnomalySuperLinear = "super_linear";    // E(N) > 105 %
inline constexpr const char* kAnomalyCollapse = "collapse";           // E(N) < 50 %
inline constexpr const char* kAnomalyNonMonotonic = "non_monotonic";  // X(N) < X(previous N)
inline constexpr const char* kAnomalySlowGpu = "slow_gpu";            // a baseline outlier

// RunVerdict::losing_part values; a part losing at most kPartLossTolerance is not named.
inline constexpr const char* kLosingIntraNode = "intra_node";
inline constexpr const char* kLosingInterNode = "inter_node";
inline constexpr double kPartLossTolerance = 0.05;

inline constexpr double kSuperLinearEfficiency = 1.05;
inline constexpr double kCollapseEfficiency = 0.5;
// A rank is a straggler when its own time is more than this above the typical (median) rank's.
inline constexpr double kStragglerExcess = 0.05;
// A link plateau at or above this fraction of the link's limit is bound by the link itself.
inline constexpr double kLinkBoundFraction = 0.7;

// RunVerdict::binding values.
inline constexpr const char* kBindingCommunication = "communication";  // exposed communication
inline constexpr const char* kBindingNetwork = "network";              // between nodes
inline constexpr const char* kBindingCompute = "compute";      // every GPU slower than alone
inline constexpr const char* kBindingSmallBatch = "small_batch";  // strong: per-GPU batch small
inline constexpr const char* kBindingStraggler = "straggler";     // waits for one slow GPU
inline constexpr const char* kBindingOther = "other";             // outside comm and compute
inline constexpr const char* kBindingLink = "link";  // a collective at its link's limit
inline constexpr const char* kBindingLinkPath = "link_path";  // well below it: the path binds

// "bf16 batch 64": the parameters that differ between the series of one workload (text values
// bare, other values as "name value", booleans as on/off), text values first. Empty when the
// workload has a single parameter set.
std::string verdict_label(const ScalingSeries& series, const std::vector<ScalingSeries>& all);

// One verdict per series, in the series' order (RunVerdict: text, anomaly codes, the largest
// GPU count's speedup and efficiency, the binding part, the loss split, the straggler, the
// next step).
// `points` supplies, matched by plan index, the step-time breakdown of the baseline and the
// largest-N point (metrics step_time_s, compute_only_s, exposed_comm_s, overlap_ratio, h2d_s,
// optimizer_s, when present), their per-rank times and telemetry; `outliers` are
// baseline_outliers() rows, matched by workload + the 1-GPU point's params; `environment` (the
// run's) gives the GPUs' power limits.
std::vector<RunVerdict> compute_verdicts(const std::vector<ScalingSeries>& series,
                                         const std::vector<PointResult>& points,
                                         const std::vector<Json>& outliers,
                                         const Json& environment = Json::object());

// Verdicts of the workloads whose headline metric is undefined on one GPU (a collective's bus
// bandwidth: every ok 1-GPU point lacks it, some multi-GPU point has it): per parameter set
// without the size axes, the plateau (best over sizes) per GPU count and node count against the
// link's limit from the run's environment (NVLink links x rate, else the PCIe link; between
// nodes the NIC's rate when environment.nics records it), and how it changes with GPU count.
std::vector<RunVerdict> compute_link_verdicts(const RunResult& run);

// A run's derived analysis from its points: RunResult::scaling, the verdicts of the series and
// of the collectives, and with `baseline_each` the "baseline_each" summary (the outliers).
void analyse_run(RunResult& run, ScalingMode mode, bool baseline_each);

}  // namespace mgbench
