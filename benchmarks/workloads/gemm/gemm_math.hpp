#pragma once
// Host-side pieces of the GEMM workload (gemm/gemm.cpp) that unit tests check
// without a GPU: point expansion, metrics, verification tolerance and sampling.
#include <cstdint>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

// Square points (M = N = K = size) for every `size`, then explicit shapes (`shape` MxNxK, e.g.
// each GEMM of a transformer layer), then batch points (M = batch, N = K = hidden) for every
// batch x hidden, each x dtype x impl (in that nesting order).
// impl=mgbench x dtype=fp8 is not planned: the own kernel has no fp8 path.
// Params: {"shape": "square", "m", "n", "k", "dtype", "impl"}, {"shape": "8192x6144x4096", "m",
// "n", "k", ...} or {"shape": "batch", "batch", "hidden", "dtype", "impl"}: a batch point keeps
// its batch as "batch", so that with --scaling strong (the planner's per-GPU batch) its points
// form a series by global batch. UsageError for a shape that is not MxNxK of positive integers.
std::vector<Params> expand_gemm_points(const AxisValues& values);

// M, N, K of a point: m, n, k, or for a batch point M = batch and N = K = hidden (points written
// before batch points kept "batch" name M, N, K too). Throws UsageError when neither is there.
struct GemmDims {
  std::int64_t m = 0, n = 0, k = 0;
};
GemmDims gemm_dims(const Params& params);

// "8192x6144x4096" (M x N x K, each a positive integer at most `max_dim`); UsageError otherwise.
GemmDims parse_gemm_shape(const std::string& text, std::int64_t max_dim);

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k);  // 2 M N K

// Bytes of A (M x K), B (N x K) and C (M x N) for element sizes `in_size` and `out_size`.
// Throws UsageError when a size is not positive or a product overflows size_t.
struct GemmBufferBytes {
  std::size_t a = 0, b = 0, c = 0;
};
GemmBufferBytes gemm_buffer_bytes(std::int64_t m, std::int64_t n, std::int64_t k,
                                  std::size_t in_size, std::size_t out_size);
// {"tflops_per_gpu", "tflops_aggregate" (= nranks x per GPU), "time_ms"}.
Json gemm_metrics(const Params& params, int nranks, double seconds);

// An output element c with FP64 reference `ref` and abs_sum = sum_k |a_ik b_jk| passes when
//   |c - ref| <= value_rel * |ref| + sum_rel * abs_sum.
// value_rel covers the rounding of the output, sum_rel the accumulation (and for tf32 the
// rounding of the inputs inside the tensor core); derivation in gemm.cpp.
struct GemmTolerance {
  double value_rel = 0;
  double sum_rel = 0;
};
// dtype: fp32, tf32, fp16, bf16, fp8. Throws UsageError for anything else.
GemmTolerance gemm_tolerance(const std::string& dtype);
double gemm_allowed_error(const GemmTolerance& tolerance, double ref, double abs_sum);

// The own kernels next to cuBLAS: one row per GPU count, shape, dtype, timing and cache with
// an ok point of each impl: {"gpus", "shape" ("M=N=K=4096" or "2048x8192x8192"), "dtype",
// "measured" ("host, cold"), "cublas_tflops", "own_tflops", "own_vs_cublas", "kernel"
// ("simt_fp32 v2", from the own point's extra.implementation)}; TFLOP/s per GPU.
Json own_vs_cublas_summary(const std::vector<PointResult>& points);

// `count` distinct indices in [0, extent), sorted, always including 0 and extent - 1
// (where the tile tails are); all of them when extent <= count. Deterministic per seed.
std::vector<std::int64_t> gemm_sample_indices(std::int64_t extent, int count, std::uint64_t seed);

}  // namespace mgbench::bench
