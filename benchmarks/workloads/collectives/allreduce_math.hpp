#pragma once
// All-reduce arithmetic shared by the workload, its summary and the tests (no CUDA):
// nccl-tests' bandwidth definitions, message-size lists, point expansion, the large-message
// plateau summary, and the exact expected values used for verification.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench::allreduce {

// Sizes at or above this count towards the plateau busbw.
inline constexpr std::uint64_t kPlateauMinBytes = std::uint64_t{64} << 20;

// nccl-tests: algbw = S / t, busbw = algbw * 2(n-1)/n, in GB/s (1e9 bytes).
double algbw_gbps(std::uint64_t bytes, double seconds);
double busbw_factor(int nranks);
double busbw_gbps(std::uint64_t bytes, double seconds, int nranks);
// Why a point is waived ("" when it runs): one rank in place is a no-op.
std::string waiver(int nranks, bool inplace);
// {"time_us", "algbw_GBps", "busbw_GBps"} for the headline seconds per op; no busbw_GBps on
// one rank (undefined there).
Json metrics(std::uint64_t bytes, int nranks, double seconds);

// min_bytes, min_bytes*factor, ... up to max_bytes (inclusive when hit). factor >= 2.
std::vector<std::uint64_t> size_list(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                     std::uint64_t factor);
// The same as decimal strings, for axis declarations.
std::vector<std::string> size_strings(const std::vector<std::uint64_t>& sizes);
// Default sizes per profile: standard/full 8 B .. 1 GiB in x2 steps; quick x8 steps from 8 B
// plus 64 MiB, 128 MiB and 256 MiB so that the plateau has three sizes.
std::vector<std::uint64_t> default_sizes(Profile profile);

// Element size of "fp32", "bf16", "fp16", "int32"; UsageError otherwise.
std::size_t dtype_size(const std::string& dtype);
// Elements in `bytes` (rounded down, as nccl-tests does); 0 when smaller than one element.
std::uint64_t element_count(std::uint64_t bytes, const std::string& dtype);

// Point expansion: dtype x inplace x bytes x impl (x algo for impl=mgbench), in that nesting
// order (one table per dtype, nccl and mgbench side by side per size). Adds "count", rounds
// "bytes" down to whole elements, skips sizes below one element, drops "algo" from
// impl=nccl points and removes duplicates.
std::vector<Params> expand_points(const AxisValues& values);

// Run-level summary: one row per (gpus, impl, dtype, inplace[, algo]) with the median busbw
// over the ok points of >= kPlateauMinBytes:
//   [{"gpus", "impl", "dtype", "inplace", "plateau_busbw_GBps", "sizes": [bytes...]}, ...]
// ("algo" only for impl=mgbench points that forced one). Rows without such sizes are left
// out; rows are sorted by gpus, impl, dtype, inplace.
Json plateau_summary(const std::vector<PointResult>& points);

// Verification data (the kernels' generator, usable on the host).
int input_value(int rank, std::uint64_t index, std::uint32_t seed);
int expected_value(int nranks, std::uint64_t index, std::uint32_t seed);

}  // namespace mgbench::bench::allreduce
