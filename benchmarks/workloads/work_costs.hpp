#pragma once
// What one op of each workload is made of (model/work_cost.hpp), declared with Workload::cost
// in the workload's file and used by `mgbench predict`. Host-side only: the unit tests call
// these directly.
//   gemm:       one GEMM M x N x K of the point's dtype; work = 2 M N K x GPUs / 1e12 (TFLOP)
//   allreduce:  one all-reduce of `bytes` (impl=nccl only: the own peer all-reduce is not a
//               ring, tree or NVLS algorithm); work = bytes x 2(N-1)/N / 1e9 (busbw, GB)
//   allgather, reducescatter, broadcast, reduce: one collective of `bytes` (nccl-tests' size;
//               NCCL's own algorithm and protocol only; alltoall and sendrecv are not
//               modelled); work = bytes x the collective's busbw factor / 1e9 (GB)
//   membw:      bytes moved through HBM; work = bytes x GPUs / 1e9
//   h2d:        one host copy (h2d or d2h; bidir is two concurrent copies: not a reference);
//               work = bytes x GPUs / 1e9
//   train_step: see train_step_cost below.
//   transformer_step: see transformer_step_cost below.
#include <optional>

#include "collectives/collective_math.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/work_cost.hpp"

namespace mgbench::bench {

std::optional<WorkCost> gemm_cost(const Params& params);
std::optional<WorkCost> allreduce_cost(const Params& params);
std::optional<WorkCost> collective_cost(collective::Kind kind, const Params& params);
std::optional<WorkCost> membw_cost(const Params& params);
std::optional<WorkCost> h2d_cost(const Params& params);

// One optimizer step of train_step (impl=nccl; the own reducer is not modelled), per GPU, with
// R = batch x hidden elements of e bytes (2 for bf16/fp16, 4 for fp32/tf32) and P parameters:
//   per micro-step: [h2d: x and t, 2 R e bytes]; forward: L GEMMs (batch x H x H) and the
//   bias/activation kernels (reading and writing z, writing a: 3 R e, the last layer 2 R e);
//   the loss gradient (3 R e); backward per layer, last layer first: weight-gradient GEMM
//   (H x H x batch), bias gradient (R e), and below the first layer the input-gradient GEMM
//   (batch x H x H) and the activation backward (3 R e);
//   after the gradient all-reduce: SGD with momentum (fp32 master, momentum and gradient read,
//   master and momentum written: 20 bytes per padded parameter, + e for the 16-bit copy).
// The gradient buckets (train::partition_buckets) are all-reduced in fp32 (4 bytes per element)
// after the last micro-step's layer that completes them (overlap=true), or all after the
// backward pass (overlap=false). work = batch x accum x GPUs (samples).
std::optional<WorkCost> train_step_cost(const Params& params);

// One optimizer step of transformer_step, per GPU, for strategy ddp and fsdp (tp and tp_dp are
// not modelled: their all-reduces block the compute, which the model's one communication stream
// beside the compute does not describe, and their compute shrinks with the tensor-parallel
// degree). Per micro-step and layer (T tokens, e bytes per element), forward: RMSNorm (2 T h e),
// QKV GEMM (T x qkv x h), scores GEMMs (S x S x head_dim, sequences x heads of them), causal
// softmax (1.5 sequences heads S^2 e), value GEMMs, output GEMM, RMSNorm, gate/up GEMM, SwiGLU
// (3 T mlp e), down GEMM; the loss gradient (3 T h e); backward, last layer first: each
// projection's weight- and input-gradient GEMMs, four attention GEMMs per head, the softmax and
// norm backward passes; after every collective AdamW (28 + e bytes per parameter). Collectives
// (P the padded layer length): ddp one fp32 all-reduce of 4 P bytes per layer after its backward
// on the last micro-step; fsdp per micro-step and layer an all-gather of e P bytes before its
// forward (ready once the layer two before has computed) and before its backward, and a
// reduce-scatter of 4 P bytes after its backward. The model does not make the compute wait for a
// late all-gather, and counts the optimizer of the whole model (fsdp runs it on one shard).
// work = batch x seq x accum x GPUs (tokens).
std::optional<WorkCost> transformer_step_cost(const Params& params);

}  // namespace mgbench::bench
