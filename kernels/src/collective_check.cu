// The collectives' verification kernels: pattern fills and the count of wrong elements (see
// collective_check.hpp).
#include "mgbench/kernels/collective_check.hpp"

#include <algorithm>

#include "element_traits.cuh"

namespace mgbench::kernels {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, 4096));
}

template <class T>
__global__ void fill_kernel(typename T::Bits* data, std::size_t count, FillPattern pattern,
                            std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = T::from_int(
        collective_input_value(pattern.range, pattern.rank, pattern.first_index + i, seed));
  }
}

template <class T>
__global__ void count_wrong_kernel(const typename T::Bits* data, std::size_t count,
                                   ExpectedPattern expected, std::uint32_t seed,
                                   unsigned long long* counter) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    if (!T::equals_int(data[i], collective_expected_value(expected, i, seed))) ++wrong;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    wrong += __shfl_down_sync(0xffffffffu, wrong, offset);
  }
  if ((threadIdx.x & 31u) == 0 && wrong != 0) atomicAdd(counter, wrong);
}

}  // namespace

cudaError_t collective_fill(void* data, std::size_t count, DType dtype, FillPattern pattern,
                            std::uint32_t seed, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  return elements::with_traits(dtype, [&](auto traits) {
    using T = decltype(traits);
    fill_kernel<T><<<grid, kThreads, 0, stream>>>(static_cast<typename T::Bits*>(data), count,
                                                  pattern, seed);
  });
}

cudaError_t collective_count_wrong(const void* data, std::size_t count, DType dtype,
                                   ExpectedPattern expected, std::uint32_t seed,
                                   unsigned long long* device_counter, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned grid = grid_for(count);
  return elements::with_traits(dtype, [&](auto traits) {
    using T = decltype(traits);
    count_wrong_kernel<T><<<grid, kThreads, 0, stream>>>(
        static_cast<const typename T::Bits*>(data), count, expected, seed, device_counter);
  });
}

}  // namespace mgbench::kernels
