#pragma once
// Scaling analysis across GPU counts, with X = throughput (the headline metric of the
// workload's presentation) and T = time (the point's median):
//   weak   (per-GPU work fixed):  S(N) = X(N) / X(1),  E(N) = S(N) / N
//   strong (global work fixed):   S(N) = T(1) / T(N),  E(N) = T(1) / (N T(N))
//   the serial fraction of the mode (N > 1):
//     strong: Karp-Flatt  e(N) = (1/S - 1/N) / (1 - 1/N)   (fixed total work, Amdahl)
//     weak:   Gustafson   s(N) = (N - S) / (N - 1)          (scaled work: S = N - s (N - 1))
//   marginal efficiency           X(N) / (2 X(N/2))                     (N/2 in the series)
// Across nodes, E(N) splits into an intra-node part (1 -> G GPUs on one node) and an inter-node
// part (1 node -> N/G nodes): E(N) = E(G) x (E(N) / E(G)).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/scaling_series.hpp"

namespace mgbench {

enum class ScalingMode { weak, strong };
const char* to_string(ScalingMode mode);
ScalingMode scaling_mode_from_string(const std::string& text);  // throws UsageError
// The mode a run was swept in (settings.scaling); weak when the setting is absent or malformed
// (a results file from another machine).
ScalingMode scaling_mode_of(const RunResult& run);
// The parameters that identify a point's series: as recorded (weak), or with the per-GPU batch
// replaced by the global batch, batch x gpus (strong, points with an integer "batch").
Params series_params(const PointResult& point, ScalingMode mode);

struct ThroughputMetric {
  std::string name;
  std::string unit;
};
// Workload name -> its throughput metric, nullopt when it has none.
using ThroughputLookup = std::function<std::optional<ThroughputMetric>(const std::string&)>;
// The headline metric of each workload's presentation in `run` (presentation_for); the lookup
// refers to `run`, which must outlive it.
ThroughputLookup presentation_throughput(const RunResult& run);

// Groups the `ok` points by workload + canonical params across GPU counts; one series per group
// that has a 1-GPU point with a positive throughput. A group whose 1-GPU point gave no result
// (failed, timeout, oom, wrong) is scaled against its next-smallest GPU count instead
// (ScalingSeries::baseline_gpus, no_baseline says why: N in every formula is then N / b); a group
// with no 1-GPU point at all gets no series. Rows whose throughput metric is missing are left
// out; when a GPU count above 1 has several ok points, the lowest plan index is used. Several
// 1-GPU points on different devices (`--baseline each`) give the median device (the upper middle
// of an even count) as the baseline (ScalingSeries::baseline says which).
// Strong mode: points with an integer "batch" parameter are matched by global batch
// (batch x gpus), e.g. batch 64 on 1 GPU, 32 on 2 and 16 on 4 form one series with
// global_batch 64. Workloads without a "batch" parameter have per-GPU work by definition
// (GEMM shapes, all-reduce sizes) and are analysed as weak scaling (their series says "weak").
// Series are sorted by workload, then by canonical params.
std::vector<ScalingSeries> compute_scaling(const std::vector<PointResult>& points,
                                           ScalingMode mode, const ThroughputLookup& lookup);

// The node split of rows measured on one node and on several (ScalingRow::nodes): G is the
// largest single-node row, and the row on the most nodes must hold G GPUs per node. nullopt
// when every row ran on one node (results written before nodes were recorded included), or
// when the multi-node rows do not fill their nodes with G GPUs.
std::optional<NodeSplit> node_split(const std::vector<ScalingRow>& rows);

// Baseline-each outlier rule: among ok 1-GPU points with the same workload + params run alone
// on different devices, flag every device whose throughput is more than `threshold` below the
// best device. A device measured more than once counts with its best throughput. Rows:
// {workload, params, metric, unit, device, throughput, best_device, best, deficit}
// with deficit = 1 - throughput / best; sorted by workload, params, device.
std::vector<Json> baseline_outliers(const std::vector<PointResult>& single_gpu_points,
                                    double threshold, const ThroughputLookup& lookup);

}  // namespace mgbench
