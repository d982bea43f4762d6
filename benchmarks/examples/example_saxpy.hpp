#pragma once
// The parts of the example workload (example_saxpy.cpp) that its tests call: the formulas and
// the check of one output buffer. A workload of the product keeps these in its own math header
// beside it (benchmarks/workloads/<family>/<name>_math.hpp, in mgbench_workload_math) when other
// files or unit tests need them.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "mgbench/bench/executor.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench::bench::example {

inline constexpr float kSaxpyA = 3.0f;  // a small integer: every output is exact in fp32

// fp32 elements in `bytes` (rounded down); UsageError below one element.
std::uint64_t saxpy_elements(std::uint64_t bytes);
// Bytes one op moves through HBM: reads x and y, writes out: 3 x 4 bytes per element.
double saxpy_bytes_moved(std::uint64_t elements);
// {"GBps_per_gpu", "GBps_aggregate"} of a point from its `bytes` and t (seconds per op).
Json saxpy_metrics(const Params& params, int nranks, double seconds);
// Compares every element of `out` with kSaxpyA * x[i] + y[i] for the inputs of `seed`
// (kernels::triad_fill); `counter` is one device word. Details: "checked" and "wrong".
Verification saxpy_check(const float* out, std::uint64_t elements, std::uint32_t seed,
                         unsigned long long* counter, cudaStream_t stream);

}  // namespace mgbench::bench::example
