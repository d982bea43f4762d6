#pragma once
// The transformer step's points and metrics (training/transformer_step.cpp), host-side so that
// the unit tests check them without a GPU.
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench::transformer {

// Points: for every model (a preset, or model=custom: every hidden x heads x kv_heads x mlp, kv
// heads defaulting to heads), layers, seq, dtype, accum, strategy (tp_dp: x tp_size), overlap
// (not for tp: its all-reduces are on the critical path), then batch in the order given (the
// out-of-memory boundary of --batch-sizes auto walks it upwards). Params: {"model", ["hidden",
// "heads", "kv_heads", "mlp"], "layers", "seq", "batch", "accum", "dtype", "strategy",
// ["tp_size"], ["overlap"]}. UsageError for a custom model without its dimensions, dimensions
// without model=custom, or dimensions that do not make a layer.
std::vector<Params> expand_points(const AxisValues& values);

// {"tokens_per_s", "tokens_per_s_per_gpu", "global_batch" (sequences per step), "global_tokens",
//  "step_time_s", "model_tflops_per_gpu", "parameters", "comm_bytes_per_step"}: tokens per step =
// batch x seq x accum x GPUs; model TFLOP/s per GPU = step_model_flops_per_gpu / t / 1e12.
Json metrics(const Params& params, int nranks, double seconds);

}  // namespace mgbench::bench::transformer
