#pragma once
// What one op of a workload point is made of, declared by the workload (Workload::cost) so that
// `mgbench predict` (analysis/prediction.hpp) can time it on other GPU counts and links without
// knowing any workload: the compute it runs, in stream order (GEMM shapes, bytes through HBM,
// bytes over the host link), the collectives it launches on its communication stream, and how
// much work of its throughput metric one op does on N GPUs.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

// The collectives of the cost model (analysis/collective_model.hpp), whatever a workload uses.
enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, broadcast, reduce };
const char* to_string(CollectiveKind kind);

enum class ComputeKind {
  gemm,       // 2 m n k FLOP of `dtype` inputs
  memory,     // `bytes` read and written in device memory (element-wise kernels, optimizer)
  host_copy,  // `bytes` between pinned host memory and the device
};

struct ComputeWork {
  ComputeKind kind = ComputeKind::gemm;
  std::string label;  // what it is, for notes ("forward GEMM", "optimizer")
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype;  // GEMM input type, as the gemm workload spells it
  double bytes = 0;   // memory and host_copy
  double repeat = 1;  // times it runs in a row
  // Runs after every collective has finished (the optimizer after the gradient all-reduce).
  bool after_communication = false;
};

struct CollectiveWork {
  CollectiveKind kind = CollectiveKind::all_reduce;
  // Bytes as nccl-tests counts them: the all-reduce/broadcast/reduce buffer, the all-gather
  // output, the reduce-scatter input.
  double bytes = 0;
  // It may start once compute[0..*ready_after] has run (a gradient bucket finished by the
  // backward pass); nullopt: once all compute before the communication has run.
  std::optional<std::size_t> ready_after;
};

struct WorkCost {
  std::vector<ComputeWork> compute;         // in stream order
  std::vector<CollectiveWork> collectives;  // in launch order, one communication stream
  // Units of the workload's throughput metric that one op does on N GPUs: the throughput of
  // an op that takes T seconds is work(N) / T (e.g. samples, TFLOP, GB of bus traffic).
  std::function<double(int gpus)> work;
};

// nullopt: the point is not modelled (e.g. an implementation the model does not describe).
using CostFn = std::function<std::optional<WorkCost>(const Params& params)>;

}  // namespace mgbench
