#pragma once
// Plain-words verdict per workload and parameter set, e.g.
//   "train_step bf16 batch 64: 8 GPUs give 7.1x (89 %). Exposed communication is 9 % of the
//    step; overlap hides 71 % of all-reduce time. GPU 3 is 7 % slower than the best GPU (GPU 0)."
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

// "bf16 batch 64": the parameters that differ between the series of one workload (text values
// bare, other values as "name value", booleans as on/off), text values first. Empty when the
// workload has a single parameter set.
std::string verdict_label(const ScalingSeries& series, const std::vector<ScalingSeries>& all);

// One verdict per series, in the series' order (RunVerdict: text, anomaly codes, the largest
// GPU count's speedup and efficiency).
// `points` supplies the step-time breakdown of the largest-N point (metrics step_time_s,
// exposed_comm_s, overlap_ratio, h2d_s, optimizer_s, when present), matched by plan index;
// `outliers` are baseline_outliers() rows, matched by workload + the 1-GPU point's params.
std::vector<RunVerdict> compute_verdicts(const std::vector<ScalingSeries>& series,
                                         const std::vector<PointResult>& points,
                                         const std::vector<Json>& outliers);

}  // namespace mgbench
