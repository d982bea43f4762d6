// What one op of each workload is made of, for `mgbench predict` (see work_costs.hpp).
#include "mgbench/bench/work_costs.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "mgbench/bench/allreduce_math.hpp"
#include "mgbench/bench/datapath_math.hpp"
#include "mgbench/bench/train_math.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench {

namespace {

ComputeWork gemm_work(std::string label, std::int64_t m, std::int64_t n, std::int64_t k,
                      std::string dtype, double repeat = 1) {
  ComputeWork w;
  w.kind = ComputeKind::gemm;
  w.label = std::move(label);
  w.m = m;
  w.n = n;
  w.k = k;
  w.dtype = std::move(dtype);
  w.repeat = repeat;
  return w;
}

ComputeWork bytes_work(ComputeKind kind, std::string label, double bytes, double repeat = 1) {
  ComputeWork w;
  w.kind = kind;
  w.label = std::move(label);
  w.bytes = bytes;
  w.repeat = repeat;
  return w;
}

// Work that grows with the GPU count: `per_gpu` units per op on every GPU.
std::function<double(int)> per_gpu_work(double per_gpu) {
  return [per_gpu](int gpus) { return per_gpu * gpus; };
}

}  // namespace

std::optional<WorkCost> gemm_cost(const Params& params) {
  const std::int64_t m = param_int(params, "m"), n = param_int(params, "n"),
                     k = param_int(params, "k");
  if (m < 1 || n < 1 || k < 1) return std::nullopt;
  WorkCost cost;
  cost.compute.push_back(gemm_work("GEMM", m, n, k, param_str(params, "dtype")));
  cost.work = per_gpu_work(2.0 * static_cast<double>(m) * static_cast<double>(n) *
                           static_cast<double>(k) / 1e12);
  return cost;
}

std::optional<WorkCost> allreduce_cost(const Params& params) {
  if (param_str(params, "impl") != "nccl") return std::nullopt;
  const std::string dtype = param_str(params, "dtype");
  const auto bytes = static_cast<double>(
      allreduce::element_count(static_cast<std::uint64_t>(param_int(params, "bytes")), dtype) *
      allreduce::dtype_size(dtype));
  if (bytes <= 0) return std::nullopt;
  WorkCost cost;
  cost.collectives.push_back(CollectiveWork{CollectiveKind::all_reduce, bytes, std::nullopt});
  cost.work = [bytes](int gpus) { return bytes * allreduce::busbw_factor(gpus) / 1e9; };
  return cost;
}

std::optional<WorkCost> membw_cost(const Params& params) {
  const double bytes = datapath::membw_bytes_moved(
      param_str(params, "impl"),
      datapath::membw_words(static_cast<std::uint64_t>(param_int(params, "bytes"))));
  WorkCost cost;
  cost.compute.push_back(bytes_work(ComputeKind::memory, "HBM traffic", bytes));
  cost.work = per_gpu_work(bytes / 1e9);
  return cost;
}

std::optional<WorkCost> h2d_cost(const Params& params) {
  const auto bytes = static_cast<double>(param_int(params, "bytes"));
  const std::string direction = param_str(params, "direction");
  WorkCost cost;
  cost.compute.push_back(bytes_work(ComputeKind::host_copy, "host copy", bytes));
  if (direction == "bidir") {  // both directions at once: two copies, not one reference copy
    cost.compute.push_back(bytes_work(ComputeKind::host_copy, "host copy back", bytes));
  }
  cost.work =
      per_gpu_work(datapath::h2d_bytes_moved(direction, static_cast<std::uint64_t>(bytes)) / 1e9);
  return cost;
}

namespace {

struct StepShape {
  std::int64_t layers = 0, hidden = 0, batch = 0, accum = 0;
  std::string dtype;
  double elem = 0;  // bytes per stored activation element
  double rows = 0;  // R = batch x hidden
};

// One micro-step's forward pass and loss gradient.
void add_forward(std::vector<ComputeWork>& out, const StepShape& s, double repeat) {
  out.push_back(gemm_work("forward GEMM", s.batch, s.hidden, s.hidden, s.dtype,
                          repeat * static_cast<double>(s.layers)));
  const double act_bytes = (3.0 * static_cast<double>(s.layers - 1) + 2.0) * s.rows * s.elem;
  out.push_back(bytes_work(ComputeKind::memory, "bias and activation", act_bytes, repeat));
  out.push_back(bytes_work(ComputeKind::memory, "loss gradient", 3.0 * s.rows * s.elem, repeat));
}

// One micro-step's backward pass as a block (the micro-steps before the last one).
void add_backward_block(std::vector<ComputeWork>& out, const StepShape& s, double repeat) {
  const auto layers = static_cast<double>(s.layers);
  out.push_back(
      gemm_work("weight-gradient GEMM", s.hidden, s.hidden, s.batch, s.dtype, repeat * layers));
  if (s.layers > 1) {
    out.push_back(gemm_work("input-gradient GEMM", s.batch, s.hidden, s.hidden, s.dtype,
                            repeat * (layers - 1)));
  }
  const double bytes = (layers + 3.0 * (layers - 1)) * s.rows * s.elem;
  out.push_back(
      bytes_work(ComputeKind::memory, "bias gradient, activation backward", bytes, repeat));
}

// The last micro-step's backward pass layer by layer; returns, per layer, the index of the
// item after which its gradients are complete.
std::vector<std::size_t> add_backward_layers(std::vector<ComputeWork>& out, const StepShape& s) {
  std::vector<std::size_t> done(static_cast<std::size_t>(s.layers));
  for (std::int64_t l = s.layers - 1; l >= 0; --l) {
    out.push_back(gemm_work("weight-gradient GEMM", s.hidden, s.hidden, s.batch, s.dtype));
    out.push_back(bytes_work(ComputeKind::memory, "bias gradient", s.rows * s.elem));
    done[static_cast<std::size_t>(l)] = out.size() - 1;
    if (l == 0) break;
    out.push_back(gemm_work("input-gradient GEMM", s.batch, s.hidden, s.hidden, s.dtype));
    out.push_back(bytes_work(ComputeKind::memory, "activation backward", 3.0 * s.rows * s.elem));
  }
  return done;
}

}  // namespace

std::optional<WorkCost> train_step_cost(const Params& params) {
  if (param_str(params, "impl") != "nccl") return std::nullopt;
  StepShape s;
  s.layers = param_int(params, "layers");
  s.hidden = param_int(params, "hidden");
  s.batch = param_int(params, "batch");
  s.accum = param_int(params, "accum");
  const std::int64_t bucket_mb = param_int(params, "bucket_mb");
  if (s.layers < 1 || s.hidden < 1 || s.batch < 1 || s.accum < 1 || bucket_mb < 0) {
    return std::nullopt;
  }
  s.dtype = param_str(params, "dtype");
  const train::DType precision = train::precision_from_string(s.dtype);
  s.elem = static_cast<double>(train::element_bytes(precision));
  s.rows = static_cast<double>(s.batch) * static_cast<double>(s.hidden);
  const bool h2d = param_bool(params, "h2d");
  const bool overlap = param_bool(params, "overlap");

  WorkCost cost;
  auto& c = cost.compute;
  const auto earlier = static_cast<double>(s.accum - 1);
  if (earlier > 0) {
    if (h2d)
      c.push_back(bytes_work(ComputeKind::host_copy, "batch copy", 2 * s.rows * s.elem, earlier));
    add_forward(c, s, earlier);
    add_backward_block(c, s, earlier);
  }
  if (h2d) c.push_back(bytes_work(ComputeKind::host_copy, "batch copy", 2 * s.rows * s.elem));
  add_forward(c, s, 1);
  const std::vector<std::size_t> done = add_backward_layers(c, s);

  const train::ParamLayout layout =
      train::ParamLayout::make(static_cast<int>(s.layers), static_cast<std::size_t>(s.hidden));
  for (const auto& bucket :
       train::partition_buckets(layout, static_cast<std::size_t>(bucket_mb) << 20)) {
    CollectiveWork w{CollectiveKind::all_reduce, static_cast<double>(bucket.count) * 4.0,
                     std::nullopt};
    if (overlap) w.ready_after = done[static_cast<std::size_t>(bucket.low_layer)];
    cost.collectives.push_back(w);
  }
  ComputeWork optimizer = bytes_work(ComputeKind::memory, "optimizer",
                                     static_cast<double>(layout.total) *
                                         (20.0 + (train::has_weight_copy(precision) ? s.elem : 0)));
  optimizer.after_communication = true;
  c.push_back(optimizer);
  cost.work = per_gpu_work(static_cast<double>(s.batch * s.accum));
  return cost;
}

}  // namespace mgbench::bench
