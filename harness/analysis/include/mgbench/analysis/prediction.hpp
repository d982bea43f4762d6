#pragma once
// `mgbench predict`: the time, throughput and scaling efficiency the points of a results file
// would have on N GPUs and M nodes, from what was measured and the declared links
// (docs/METHODOLOGY.md, "Prediction"). Per point with a cost model (model/work_cost.hpp):
//   T(N) = T(1) + exposed communication(N),
// T(1) the point's measured 1-GPU time (else its compute composed from the run's GEMM, membw
// and h2d points), the communication its collectives on the modelled topology
// (collective_model.hpp) plus the per-call overhead measured on 1 GPU, hidden behind the
// compute that precedes the step's join as far as the timeline allows. Each row carries a band
// (compute and communication each off by their uncertainty, every combination), the term that
// dominates, and the measured point of that GPU count when the results have one.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/analysis/collective_model.hpp"
#include "mgbench/analysis/links.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/work_cost.hpp"

namespace mgbench {

// Relative uncertainty of each part of a prediction (the band).
inline constexpr double kBandMeasuredCompute = 0.03;  // T(1) measured
inline constexpr double kBandComposedCompute = 0.10;  // T(1) composed from GEMM/membw points
inline constexpr double kBandCalibratedComm = 0.10;   // link calibrated on measured points
inline constexpr double kBandDeclaredComm = 0.25;     // link from its declaration only

struct PredictOptions {
  std::vector<int> gpu_counts{1, 2, 4, 8, 16, 64};
  int gpus_per_node = 8;
  std::optional<Link> intra;           // nullopt: from the results (environment, measured points)
  std::optional<Link> inter;           // nullopt: ib-ndr, calibrated on multi-node points when any
  // NVLink SHARP allowed where the intra-node link has it; nullopt: as the results were measured
  // (environment.nccl_nvls: NCCL's default or "on" allow it, "off" or a file without the record,
  // from builds that always turned it off, do not).
  std::optional<bool> nvls;
  std::vector<std::string> workloads;  // empty: every workload with a cost model
};

// Whether the run was measured with NVLink SHARP allowed (its environment.nccl_nvls record).
bool run_allows_nvls(const RunResult& run);

// Counts and nodes that make sense; UsageError (one line) otherwise.
void validate(const PredictOptions& options);

// The cost model of a point's workload and parameters (nullopt: not modelled).
using CostLookup = std::function<std::optional<WorkCost>(const PointResult& point)>;

struct LinkChoice {
  Link link;
  std::string origin;  // "declared", "from the results' environment", "calibrated on ..."
  bool calibrated = false;
};

struct Band {
  double low = 0, high = 0;
};

struct MeasuredAt {
  std::size_t point_index = 0;
  double time_s = 0;
  std::optional<double> throughput;
  std::optional<double> efficiency;
  double ratio = 0;  // measured / predicted throughput (= predicted / measured time)
};

struct PredictedRow {
  int gpus = 1, nodes = 1;
  double time_s = 0;
  Band time;
  std::optional<double> throughput;
  Band throughput_band;
  std::optional<double> efficiency;  // weak scaling: X(N) / (N X(1))
  Band efficiency_band;
  double compute_s = 0;  // the op's compute (T(1) on this row's timeline)
  double comm_s = 0;     // every collective of the op, overheads included
  double exposed_s = 0, hidden_s = 0;
  double exposed_intra_s = 0, exposed_inter_s = 0;
  std::string dominant;   // "compute", "intra-node communication", "inter-node communication"
  std::string algorithm;  // of the op's largest collective; "" without one
  std::optional<MeasuredAt> measured;
};

struct PredictedSeries {
  std::string workload;
  Params params;
  std::string metric, unit;  // the workload's throughput metric
  std::string basis;         // where T(1) comes from
  std::vector<PredictedRow> rows;
};

// On one GPU: the point's compute composed from the run's GEMM, membw and h2d points against
// its measured 1-GPU time.
struct ComputeCheck {
  std::string workload;
  Params params;
  double measured_s = 0, composed_s = 0;
  double error = 0;  // composed / measured - 1
  double gemm_s = 0, memory_s = 0, host_copy_s = 0;
  std::vector<std::string> references;  // the points used, in words
};

struct Prediction {
  LinkChoice intra, inter;
  int gpus_per_node = 8;
  bool nvls = false;
  double call_overhead_s = 0;
  std::string call_overhead_origin;
  std::vector<PredictedSeries> series;
  std::vector<ComputeCheck> compute_checks;
  std::vector<std::string> notes;
};

// The GPUs one node of the run's machine held: the most GPUs a point ran on one node, or the
// GPUs its environment lists when more; at least 1. The default node size when a prediction
// stands for the run's own machine (`report --predict`, `compare --predict-gpus`).
int gpus_per_node_of(const RunResult& run);

// The GPU counts of the run's scaling series and the next power of two above the largest, each
// only where it fills whole nodes of `gpus_per_node`; ascending (`report --predict`).
std::vector<int> series_gpu_counts(const RunResult& run, int gpus_per_node);

// UsageError when a workload asked for has no ok point in `run`, or when the intra-node link
// is needed but neither given nor known from the results.
Prediction predict(const RunResult& run, const PredictOptions& options, const CostLookup& costs);

void to_json(Json& j, const Prediction& prediction);

}  // namespace mgbench
