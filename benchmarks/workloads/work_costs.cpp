// What one op of each workload is made of, for `mgbench predict` (see work_costs.hpp).
#include "work_costs.hpp"

#include <cstdint>
#include <string>
#include <utility>

#include "collectives/allreduce_math.hpp"
#include "collectives/collective_math.hpp"
#include "datapath/datapath_math.hpp"
#include "training/train_math.hpp"
#include "training/transformer_math.hpp"
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
  const std::int64_t m = params.integer("m"), n = params.integer("n"), k = params.integer("k");
  if (m < 1 || n < 1 || k < 1) return std::nullopt;
  WorkCost cost;
  cost.compute.push_back(gemm_work("GEMM", m, n, k, params.text("dtype")));
  cost.work = per_gpu_work(2.0 * static_cast<double>(m) * static_cast<double>(n) *
                           static_cast<double>(k) / 1e12);
  return cost;
}

std::optional<WorkCost> allreduce_cost(const Params& params) {
  if (params.text("impl") != "nccl") return std::nullopt;
  return collective_cost(collective::Kind::allreduce, params);
}

std::optional<WorkCost> collective_cost(collective::Kind kind, const Params& params) {
  std::optional<CollectiveKind> modelled;
  switch (kind) {
    case collective::Kind::allreduce: modelled = CollectiveKind::all_reduce; break;
    case collective::Kind::allgather: modelled = CollectiveKind::all_gather; break;
    case collective::Kind::reducescatter: modelled = CollectiveKind::reduce_scatter; break;
    case collective::Kind::broadcast: modelled = CollectiveKind::broadcast; break;
    case collective::Kind::reduce: modelled = CollectiveKind::reduce; break;
    case collective::Kind::alltoall:
    case collective::Kind::sendrecv: break;
  }
  // A forced NCCL algorithm or protocol is not what the model's fastest choice describes.
  for (const char* forced : {"algo", "proto"}) {
    if (params.contains(forced) && params.text(forced) != "default") return std::nullopt;
  }
  const std::string& dtype = params.text("dtype");
  const auto bytes = static_cast<double>(
      allreduce::element_count(static_cast<std::uint64_t>(params.integer("bytes")), dtype) *
      allreduce::dtype_size(dtype));
  if (!modelled || bytes <= 0) return std::nullopt;
  WorkCost cost;
  cost.collectives.push_back(CollectiveWork{*modelled, bytes, std::nullopt});
  cost.work = [kind, bytes](int gpus) {
    return bytes * collective::busbw_factor(kind, gpus) / 1e9;
  };
  return cost;
}

std::optional<WorkCost> membw_cost(const Params& params) {
  const double bytes = datapath::membw_bytes_moved(
      params.text("impl"),
      datapath::membw_words(static_cast<std::uint64_t>(params.integer("bytes"))));
  WorkCost cost;
  cost.compute.push_back(bytes_work(ComputeKind::memory, "HBM traffic", bytes));
  cost.work = per_gpu_work(bytes / 1e9);
  return cost;
}

std::optional<WorkCost> h2d_cost(const Params& params) {
  const auto bytes = static_cast<double>(params.integer("bytes"));
  const std::string& direction = params.text("direction");
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
  if (params.text("impl") != "nccl") return std::nullopt;
  StepShape s;
  s.layers = params.integer("layers");
  s.hidden = params.integer("hidden");
  s.batch = params.integer("batch");
  s.accum = params.integer("accum");
  const std::int64_t bucket_mb = params.integer("bucket_mb");
  if (s.layers < 1 || s.hidden < 1 || s.batch < 1 || s.accum < 1 || bucket_mb < 0) {
    return std::nullopt;
  }
  s.dtype = params.text("dtype");
  const train::DType precision = train::precision_from_string(s.dtype);
  s.elem = static_cast<double>(train::element_bytes(precision));
  s.rows = static_cast<double>(s.batch) * static_cast<double>(s.hidden);
  const bool h2d = params.boolean("h2d");
  const bool overlap = params.boolean("overlap");

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

namespace {

// One layer's shapes for the transformer step's cost (tensor-parallel degree 1).
struct LayerShape {
  std::int64_t T = 0, h = 0, q = 0, a = 0, m = 0, S = 0, hd = 0;
  double heads = 0;  // sequences x q heads: the attention GEMMs' repeat
  double e = 2;
  std::string dtype;
};

void add_gemm(std::vector<ComputeWork>& c, const char* label, std::int64_t m, std::int64_t n,
              std::int64_t k, const LayerShape& s, double repeat = 1) {
  c.push_back(gemm_work(label, m, n, k, s.dtype, repeat));
}

void add_bytes(std::vector<ComputeWork>& c, const char* label, double bytes) {
  c.push_back(bytes_work(ComputeKind::memory, label, bytes));
}

void add_layer_forward(std::vector<ComputeWork>& c, const LayerShape& s) {
  const double th = static_cast<double>(s.T * s.h) * s.e,
               scores = s.heads * static_cast<double>(s.S * s.S) * s.e;
  add_bytes(c, "RMSNorm", 2 * th);
  add_gemm(c, "QKV GEMM", s.T, s.q, s.h, s);
  add_gemm(c, "attention scores GEMM", s.S, s.S, s.hd, s, s.heads);
  add_bytes(c, "causal softmax", 1.5 * scores);
  add_gemm(c, "attention values GEMM", s.hd, s.S, s.S, s, s.heads);
  add_gemm(c, "output projection GEMM", s.T, s.h, s.a, s);
  add_bytes(c, "RMSNorm", 2 * th);
  add_gemm(c, "gate/up GEMM", s.T, 2 * s.m, s.h, s);
  add_bytes(c, "SwiGLU", 3.0 * static_cast<double>(s.T * s.m) * s.e);
  add_gemm(c, "down GEMM", s.T, s.h, s.m, s);
}

void add_layer_backward(std::vector<ComputeWork>& c, const LayerShape& s) {
  const double th = static_cast<double>(s.T * s.h) * s.e,
               scores = s.heads * static_cast<double>(s.S * s.S) * s.e;
  const double norm = 4 * th + 2.0 * static_cast<double>(s.T * s.h) * 4;
  add_gemm(c, "weight-gradient GEMM", s.m, s.h, s.T, s);
  add_gemm(c, "input-gradient GEMM", s.T, s.m, s.h, s);
  add_bytes(c, "SwiGLU backward", 5.0 * static_cast<double>(s.T * s.m) * s.e);
  add_gemm(c, "weight-gradient GEMM", s.h, 2 * s.m, s.T, s);
  add_gemm(c, "input-gradient GEMM", s.T, s.h, 2 * s.m, s);
  add_bytes(c, "RMSNorm backward", norm);
  add_gemm(c, "weight-gradient GEMM", s.a, s.h, s.T, s);
  add_gemm(c, "input-gradient GEMM", s.T, s.a, s.h, s);
  add_gemm(c, "attention GEMMs backward", s.S, s.S, s.hd, s, 4 * s.heads);
  add_bytes(c, "causal softmax backward", 2 * scores);
  add_gemm(c, "weight-gradient GEMM", s.h, s.q, s.T, s);
  add_gemm(c, "input-gradient GEMM", s.T, s.h, s.q, s);
  add_bytes(c, "RMSNorm backward", norm);
}

}  // namespace

std::optional<WorkCost> transformer_step_cost(const Params& params) {
  using namespace transformer;
  const Strategy strategy = params.choice<Strategy>("strategy", kStrategyNames);
  if (strategy != Strategy::ddp && strategy != Strategy::fsdp) return std::nullopt;
  const StepConfig cfg = config_from_params(params, 1);
  const LocalDims d = local_dims(cfg.shape, 1);
  LayerShape s{cfg.local_tokens(), d.hidden, d.qkv_width(), d.attn_width(), d.mlp, cfg.seq,
               d.head_dim, static_cast<double>(cfg.batch * d.q_heads),
               static_cast<double>(kernels::dtype_size(cfg.precision)), params.text("dtype")};
  const double P = static_cast<double>(layout_for(cfg).total);
  const bool overlap = cfg.overlap;
  WorkCost cost;
  auto& c = cost.compute;
  for (int micro = 0; micro < cfg.accum; ++micro) {
    const bool last = micro == cfg.accum - 1;
    std::vector<std::size_t> forward_end, backward_end;
    const std::size_t start = c.size();  // the micro-step's first item
    for (int l = 0; l < cfg.layers; ++l) {
      add_layer_forward(c, s);
      forward_end.push_back(c.size() - 1);
    }
    add_bytes(c, "loss gradient", 3.0 * static_cast<double>(s.T * s.h) * s.e);
    for (int l = cfg.layers - 1; l >= 0; --l) {
      add_layer_backward(c, s);
      backward_end.push_back(c.size() - 1);  // last layer first
    }
    const auto ready = [&](bool ok, std::size_t at) -> std::optional<std::size_t> {
      return overlap && ok ? std::optional<std::size_t>(at) : std::nullopt;
    };
    if (strategy == Strategy::fsdp) {
      // Forward gathers as soon as the layer two before has computed, backward likewise, each
      // reduce-scatter after its layer's backward (overlap=false: all after the compute).
      for (std::size_t l = 0; l < forward_end.size(); ++l) {
        cost.collectives.push_back({CollectiveKind::all_gather, s.e * P,
                                    ready(true, l < 2 ? start : forward_end[l - 2])});
      }
      for (std::size_t i = 0; i < backward_end.size(); ++i) {
        const std::size_t before = i < 2 ? forward_end.back() : backward_end[i - 2];
        cost.collectives.push_back({CollectiveKind::all_gather, s.e * P, ready(true, before)});
        cost.collectives.push_back(
            {CollectiveKind::reduce_scatter, 4 * P, ready(true, backward_end[i])});
      }
    } else if (last) {
      for (std::size_t i = 0; i < backward_end.size(); ++i) {
        cost.collectives.push_back(
            {CollectiveKind::all_reduce, 4 * P, ready(true, backward_end[i])});
      }
    }
  }
  ComputeWork optimizer = bytes_work(ComputeKind::memory, "AdamW",
                                     static_cast<double>(cfg.layers) * P * (28.0 + s.e));
  optimizer.after_communication = true;
  c.push_back(optimizer);
  const double tokens = static_cast<double>(cfg.batch * cfg.seq * cfg.accum);
  cost.work = per_gpu_work(tokens);
  return cost;
}

}  // namespace mgbench::bench
