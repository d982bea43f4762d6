#pragma once
// Pieces of the prediction (prediction.cpp) shared with its reference and JSON files.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/analysis/prediction.hpp"

namespace mgbench::prediction {

// A measured time a model can use: positive and finite.
bool usable(double seconds);

// Cost models of every point of the run, by position in run.points (nullopt: not modelled,
// not ok, or parameters the model refuses).
std::vector<std::optional<WorkCost>> costs_of(const RunResult& run, const CostLookup& lookup);

struct GemmRef {
  std::string dtype;
  std::int64_t m = 0, n = 0, k = 0;
  double flops_per_s = 0;
  std::size_t point_index = 0;
};

// A measured multi-GPU point that runs one collective and nothing else.
struct Calibration {
  CollectiveKind kind = CollectiveKind::all_reduce;
  int gpus = 2, nodes = 1, gpus_per_node = 2;
  double bus_GBps = 0;        // the ring-equivalent bandwidth: max over sizes of volume S / t
  double hop_latency_us = 0;  // from the smallest size: (t - overhead) / steps
};

// What the run measured that a model can be built from. A reference point does one thing: a
// GEMM reference has one GEMM and nothing else, a memory reference one memory item, and so on.
struct References {
  std::vector<GemmRef> gemms;           // the fastest ok 1-GPU point per dtype and shape
  std::optional<double> memory_Bps;     // the median of the ok 1-GPU memory points
  std::optional<double> host_copy_Bps;  // the fastest ok 1-GPU host copy (pinned memory)
  std::size_t memory_point = 0, host_copy_point = 0;
  // timing method (unset: not recorded) -> the fastest 1-GPU collective
  std::map<std::optional<TimingMethod>, double> overhead_s;
  std::vector<Calibration> calibrations;
};
References gather_references(const RunResult& run,
                             const std::vector<std::optional<WorkCost>>& costs);

// The per-call overhead of a collective timed with `timing` (else host-timed, else the least
// of any); nullopt when the run has no 1-GPU collective point.
std::optional<double> overhead_for(const References& refs,
                                   std::optional<TimingMethod> timing);

// The GEMM reference of `dtype` nearest to the shape (log distance); nullopt without one.
std::optional<GemmRef> nearest_gemm(const References& refs, const ComputeWork& gemm);

// Rates from the datasheet of the run's GPU (the first GPU of the environment, by name and
// memory): each GEMM item at the dense peak of its dtype, memory items at the HBM bandwidth,
// host copies at the PCIe link NVML reports. For splitting a measured T(1) among the items of
// an op whose run has no GEMM, memory or host-copy points: only their ratios matter then.
// nullopt when the model or a rate the cost needs is unknown; `model` names the GPU model.
std::optional<References> datasheet_references(const RunResult& run, const WorkCost& cost,
                                                std::string& model);

struct Composition {
  std::vector<double> item_s;  // per compute item of the cost, repeats included
  double gemm_s = 0, memory_s = 0, host_copy_s = 0;
  double total_s = 0;
  std::vector<std::string> references;
};
// nullopt, with the missing reference in `missing`, when a reference is missing.
std::optional<Composition> compose(const WorkCost& cost, const References& refs,
                                   std::string& missing);

struct Timeline {
  double compute_s = 0;  // every compute item
  double comm_s = 0;     // every collective
  double exposed_s = 0;  // how much later the step ends than its compute alone
  double total_s = 0;
};
// One compute stream running the items in order, one communication stream running the
// collectives in order, each starting when its data is ready; the items marked
// after_communication wait for every collective.
Timeline simulate(const std::vector<double>& item_s, const WorkCost& cost,
                  const std::vector<double>& collective_s);

}  // namespace mgbench::prediction
