#pragma once
// The run-level analysis results stored in RunResult: scaling series across GPU counts and the
// plain-words verdicts. Computed by the analysis layer (mgbench/analysis/scaling.hpp,
// verdict.hpp); typed inside the program, JSON only in results.json.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

struct ScalingRow {
  int gpus = 1;
  double throughput = 0;  // X(N), in the series' unit
  double time_s = 0;      // T(N), the point's median
  double speedup = 1;
  double efficiency = 1;
  std::optional<double> karp_flatt;           // N > 1 only
  std::optional<double> marginal_efficiency;  // when N/2 is in the series
  std::size_t point_index = 0;                // PointResult::index of the point behind the row
  int nodes = 1;                              // nodes the point ran on ("nodes" only when > 1)
};

// Efficiency split at the node boundary, for a series measured on one node and on several:
// E(N) = intra x inter, where intra = E(G) of the largest single-node row (1 -> G GPUs) and
// inter = E(N) / E(G) for the row on the most nodes, with G GPUs on each of its nodes
// (1 node -> `nodes` nodes).
struct NodeSplit {
  int gpus_per_node = 1;  // G
  int nodes = 1;
  double intra_efficiency = 1;
  double inter_efficiency = 1;
};

struct ScalingSeries {
  std::string workload;
  // Weak: the points' parameters. Strong with a per-GPU "batch" parameter: the points'
  // parameters with "batch" replaced by "global_batch" (= batch x gpus).
  Params params = Json::object();
  std::string metric;
  std::string unit;
  std::string mode;              // "weak" or "strong"
  std::vector<ScalingRow> rows;  // ascending gpus; rows[0] is the 1-GPU baseline
  std::optional<NodeSplit> node_split;  // "node_split" only when present
};

// One verdict per scaling series (mgbench/analysis/verdict.hpp).
struct RunVerdict {
  std::string workload;
  Params params = Json::object();
  std::string mode, metric, unit;
  std::string text;                    // the verdict in words
  std::vector<std::string> anomalies;  // codes: super_linear, collapse, non_monotonic, slow_gpu
  int gpus_max = 1;
  double speedup = 1, efficiency = 1;
  // With a node split: which part loses more efficiency, "intra_node" or "inter_node"; "" when
  // there is no split or neither part loses much ("losing_part" only when set).
  std::string losing_part;
};

void to_json(Json& j, const NodeSplit& split);
void from_json(const Json& j, NodeSplit& split);
void to_json(Json& j, const ScalingRow& row);
void from_json(const Json& j, ScalingRow& row);
void to_json(Json& j, const ScalingSeries& series);
void from_json(const Json& j, ScalingSeries& series);
void to_json(Json& j, const RunVerdict& verdict);
// Tolerant: a bare string is a verdict with text only; an anomaly object reads "kind: text".
void from_json(const Json& j, RunVerdict& verdict);

}  // namespace mgbench
