#pragma once
// Verification data of the collectives (nccl-tests style): every input element is a small
// non-zero integer from a counter-based hash of (source rank, index in the source buffer, seed),
// so every expected output is known exactly in every dtype, on the host as on the GPU.
//
// - ValueRange::narrow: -2, -1, 1, 2. Sums over ranks stay exact (|sum| <= 2n: exact in bf16 up
//   to 128 ranks, fp16 up to 1024): the inputs of all-reduce, reduce-scatter and reduce.
// - ValueRange::wide: -64..-1, 1..64. Data that is only moved (all-gather, all-to-all,
//   broadcast, send/recv): 128 values, so that an element taken from the wrong rank or offset
//   differs from the expected one with probability 127/128.
//
// A FillPattern says what one buffer holds: element i = value(range, rank, first_index + i).
// An ExpectedPattern says what an output must hold:
// - sum:  element i = sum over ranks 0..nranks-1 of narrow(rank, first_index + i);
// - copy: the output is chunks of `chunk` elements; element i lies in chunk k = i / chunk at
//   offset o = i % chunk and comes from rank (first_rank + k) % nranks, index first_index + o,
//   in the wide range.
// The poison value (fill_poison: NaN, INT32_MIN) is never an expected value.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "mgbench/kernels/fill.hpp"

#if !defined(MGBENCH_HOST_DEVICE)
#if defined(__CUDACC__)
#define MGBENCH_HOST_DEVICE __host__ __device__
#else
#define MGBENCH_HOST_DEVICE
#endif
#endif

namespace mgbench::kernels {

enum class ValueRange : int { narrow, wide };

struct FillPattern {
  ValueRange range = ValueRange::narrow;
  int rank = 0;
  std::uint64_t first_index = 0;
};

struct ExpectedPattern {
  bool sum = false;
  int nranks = 1;
  std::uint64_t chunk = 1;  // copy: elements per chunk (at least 1)
  int first_rank = 0;       // copy: the source rank of chunk 0
  std::uint64_t first_index = 0;

  MGBENCH_HOST_DEVICE static ExpectedPattern sum_of(int nranks, std::uint64_t first_index) {
    return ExpectedPattern{true, nranks, 1, 0, first_index};
  }
  MGBENCH_HOST_DEVICE static ExpectedPattern copy_of(int nranks, std::uint64_t chunk,
                                                     int first_rank, std::uint64_t first_index) {
    return ExpectedPattern{false, nranks, chunk, first_rank, first_index};
  }
};

// The hash behind every input value (splitmix64's finaliser over index, rank and seed).
MGBENCH_HOST_DEVICE inline std::uint64_t collective_hash(int rank, std::uint64_t index,
                                                         std::uint32_t seed) {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(seed) << 32) | static_cast<std::uint32_t>(rank);
  std::uint64_t x = (index * 0x9E3779B97F4A7C15ULL) ^ (key * 0xD1B54A32D192ED03ULL);
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

// Element `index` of rank `rank`'s source buffer in `range`; never zero.
MGBENCH_HOST_DEVICE inline int collective_input_value(ValueRange range, int rank,
                                                      std::uint64_t index, std::uint32_t seed) {
  const std::uint64_t x = collective_hash(rank, index, seed);
  if (range == ValueRange::narrow) {
    const int v = static_cast<int>(x & 3u);  // {-2, -1, 1, 2}
    return v < 2 ? v - 2 : v - 1;
  }
  const int v = static_cast<int>(x & 127u);  // {-64..-1, 1..64}
  return v < 64 ? v - 64 : v - 63;
}

// The exact value element `i` of an output must hold.
MGBENCH_HOST_DEVICE inline int collective_expected_value(const ExpectedPattern& e, std::uint64_t i,
                                                         std::uint32_t seed) {
  if (e.sum) {
    int total = 0;
    for (int r = 0; r < e.nranks; ++r) {
      total += collective_input_value(ValueRange::narrow, r, e.first_index + i, seed);
    }
    return total;
  }
  const std::uint64_t chunk = e.chunk == 0 ? 1 : e.chunk;
  const std::uint64_t k = i / chunk;
  const auto n = static_cast<std::uint64_t>(e.nranks < 1 ? 1 : e.nranks);
  const int source = static_cast<int>((static_cast<std::uint64_t>(e.first_rank) + k) % n);
  return collective_input_value(ValueRange::wide, source, e.first_index + i % chunk, seed);
}

// Fills `count` elements of `data` (fp32, bf16, fp16 or int32; cudaErrorInvalidValue otherwise)
// with the pattern.
cudaError_t collective_fill(void* data, std::size_t count, DType dtype, FillPattern pattern,
                            std::uint32_t seed, cudaStream_t stream);
// Adds to *device_counter (device memory; the caller zeroes it) the number of the `count`
// elements of `data` that differ from the expected pattern.
cudaError_t collective_count_wrong(const void* data, std::size_t count, DType dtype,
                                   ExpectedPattern expected, std::uint32_t seed,
                                   unsigned long long* device_counter, cudaStream_t stream);

}  // namespace mgbench::kernels
