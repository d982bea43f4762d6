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
  // The serial fraction that fits the mode, N > 1 only: Karp-Flatt for strong scaling
  // (e = (1/S - 1/n) / (1 - 1/n)), Gustafson for weak scaling (s = (n - S) / (n - 1)), with
  // n = N / the baseline's GPU count. Negative: the GPUs together did more than n times the
  // baseline (super-linear), so no serial part can be read.
  std::optional<double> karp_flatt;           // strong only
  std::optional<double> gustafson;            // weak only
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
  Params params;
  std::string metric;
  std::string unit;
  std::string mode;              // "weak" or "strong"
  std::vector<ScalingRow> rows;  // ascending gpus; rows[0] is the baseline
  std::optional<NodeSplit> node_split;  // "node_split" only when present
  // The baseline is rows[0]: normally the 1-GPU point. When that point failed, the next-smallest
  // GPU count is the baseline (baseline_gpus > 1, `no_baseline` says why) and speedups are
  // relative to it. `baseline` says in words how it was chosen when not the plain 1-GPU point
  // (with --baseline each: the median of the GPUs measured alone). Both only when set.
  int baseline_gpus = 1;
  std::string baseline;
  std::string no_baseline;
};

// Where a verdict says the lost time went (seconds per step or op at the largest GPU count):
// lost = T(N) - T_ideal, T_ideal = T(b) (weak) or T(b) b / N (strong), split into exposed
// communication growth, compute growth, the wait for one slow rank, and the rest.
struct LossSplit {
  double time_s = 0;  // T(N)
  double lost_s = 0;
  double comm_s = 0, compute_s = 0, straggler_s = 0, rest_s = 0;
};

// The slowest rank of the largest-N point when it is clearly slower than the others.
struct Straggler {
  int rank = 0;
  int device = 0;
  std::string host;                 // "" on one node
  double excess = 0;                // its time / the typical rank's time - 1
  double saved_s = 0;               // its time - the next-slowest rank's time
  std::string cause;                // from telemetry and the environment, "" when none seen
  // E(N) had it run as fast as the next-slowest rank; when it is the GPU the 1-GPU baseline ran
  // on (baseline_gpu), E(N) against a typical GPU instead.
  double efficiency_without = 0;
  bool baseline_gpu = false;
};

// A collective's bus bandwidth plateau at one GPU count (the best over message sizes).
struct LinkPlateau {
  int gpus = 2;
  int nodes = 1;
  double GBps = 0;
  std::string link;                // "NVLink", "PCIe", "the network"; "" unknown
  std::optional<double> fraction;  // of the link's limit, when known
};

// One verdict per scaling series (mgbench/analysis/verdict.hpp).
struct RunVerdict {
  std::string workload;
  Params params;
  std::string mode, metric, unit;
  std::string text;                    // the verdict in words
  std::vector<std::string> anomalies;  // codes: super_linear, collapse, non_monotonic, slow_gpu
  int gpus_max = 1;
  double speedup = 1, efficiency = 1;
  // With a node split: which part loses more efficiency, "intra_node" or "inter_node"; "" when
  // there is no split or neither part loses much ("losing_part" only when set).
  std::string losing_part;
  // "scaling" (a series against its baseline) or "link" (a collective's bandwidth against the
  // link's limit: no 1-GPU value exists). JSON: "kind" only for "link".
  std::string kind = "scaling";
  // What binds, as a code (verdict.hpp kBinding*), and what a user can do next ("" when
  // nothing is lost); the loss split, the straggler and the plateaus when known. Each only
  // when set.
  std::string binding;
  std::string next_step;
  std::optional<LossSplit> loss;
  std::optional<Straggler> straggler;
  std::vector<LinkPlateau> plateaus;
};

void to_json(Json& j, const NodeSplit& split);
void from_json(const Json& j, NodeSplit& split);
void to_json(Json& j, const ScalingRow& row);
void from_json(const Json& j, ScalingRow& row);
void to_json(Json& j, const ScalingSeries& series);
void from_json(const Json& j, ScalingSeries& series);
void to_json(Json& j, const LossSplit& loss);
void from_json(const Json& j, LossSplit& loss);
void to_json(Json& j, const Straggler& straggler);
void from_json(const Json& j, Straggler& straggler);
void to_json(Json& j, const LinkPlateau& plateau);
void from_json(const Json& j, LinkPlateau& plateau);
void to_json(Json& j, const RunVerdict& verdict);
// Tolerant: a bare string is a verdict with text only; an anomaly object reads "kind: text".
void from_json(const Json& j, RunVerdict& verdict);

}  // namespace mgbench
