// Data-path kernels (see datapath.hpp): vectorised copy and triad, pattern fill and checks,
// and the dependent-load chase.
#include "mgbench/kernels/datapath.hpp"

#include <algorithm>

namespace mgbench::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // 16-byte packs per thread in flight
constexpr int kMaxDevices = 64;

// Enough resident blocks to fill every SM (cached per device and host thread).
unsigned resident_blocks(const void* kernel) {
  thread_local int cached[kMaxDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return 1024;
  if (cached[device] == 0) {
    int sms = 0, per_sm = 0;
    (void)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    (void)cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0);
    cached[device] = std::max(1, sms) * std::max(1, per_sm);
  }
  return static_cast<unsigned>(cached[device]);
}

unsigned grid_for(std::size_t items, const void* kernel) {
  const std::size_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(needed, resident_blocks(kernel))));
}

__global__ void copy_kernel(std::uint32_t* __restrict__ dst, const std::uint32_t* __restrict__ src,
                            std::size_t words) {
  const std::size_t packs = words / 4;
  auto* d = reinterpret_cast<int4*>(dst);
  const auto* s = reinterpret_cast<const int4*>(src);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < packs; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(s + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(d + i + u * stride, v[u]);
  }
  for (; i < packs; i += stride) __stcs(d + i, __ldcs(s + i));
  if (blockIdx.x == 0 && threadIdx.x < words % 4) {
    const std::size_t w = packs * 4 + threadIdx.x;
    dst[w] = src[w];
  }
}

__global__ void triad_kernel(float* __restrict__ a, const float* __restrict__ b,
                             const float* __restrict__ c, float scalar, std::size_t count) {
  const std::size_t packs = count / 4;
  auto* a4 = reinterpret_cast<float4*>(a);
  const auto* b4 = reinterpret_cast<const float4*>(b);
  const auto* c4 = reinterpret_cast<const float4*>(c);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  auto one = [&](std::size_t k, const float4& x, const float4& y) {
    __stcs(a4 + k, make_float4(x.x + scalar * y.x, x.y + scalar * y.y, x.z + scalar * y.z,
                               x.w + scalar * y.w));
  };
  for (; i + (kUnroll - 1) * stride < packs; i += kUnroll * stride) {
    float4 x[kUnroll], y[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      x[u] = __ldcs(b4 + i + u * stride);
      y[u] = __ldcs(c4 + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) one(i + u * stride, x[u], y[u]);
  }
  for (; i < packs; i += stride) one(i, __ldcs(b4 + i), __ldcs(c4 + i));
  if (blockIdx.x == 0 && threadIdx.x < count % 4) {
    const std::size_t k = packs * 4 + threadIdx.x;
    a[k] = b[k] + scalar * c[k];
  }
}

__global__ void fill_pattern_kernel(std::uint32_t* data, std::size_t words, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    data[i] = pattern_word(i, seed);
  }
}

__global__ void triad_fill_kernel(float* b, float* c, std::size_t count, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    b[i] = triad_b(i, seed);
    c[i] = triad_c(i, seed);
  }
}

__device__ void add_count(unsigned long long mine, unsigned long long* counter) {
  for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffu, mine, offset);
  if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(counter, mine);
}

__global__ void pattern_mismatch_kernel(const std::uint32_t* data, std::size_t words,
                                        std::uint32_t seed, unsigned long long* counter) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    wrong += data[i] != pattern_word(i, seed) ? 1 : 0;
  }
  add_count(wrong, counter);
}

__global__ void triad_mismatch_kernel(const float* a, std::size_t count, std::uint32_t seed,
                                      float scalar, unsigned long long* counter) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float expected = triad_b(i, seed) + scalar * triad_c(i, seed);
    wrong += __float_as_uint(a[i]) != __float_as_uint(expected) ? 1 : 0;
  }
  add_count(wrong, counter);
}

__global__ void chase_kernel(const std::uint32_t* chain, std::uint32_t steps, std::uint32_t* end) {
  const volatile std::uint32_t* c = chain;
  std::uint32_t j = 0;
  for (std::uint32_t s = 0; s < steps; ++s) j = c[j];
  *end = j;
}

}  // namespace

cudaError_t fill_pattern(std::uint32_t* data, std::size_t words, std::uint32_t seed,
                         cudaStream_t stream) {
  fill_pattern_kernel<<<grid_for(words, reinterpret_cast<const void*>(fill_pattern_kernel)),
                        kThreads, 0, stream>>>(data, words, seed);
  return cudaGetLastError();
}

cudaError_t copy_words(std::uint32_t* dst, const std::uint32_t* src, std::size_t words,
                       cudaStream_t stream) {
  if (words == 0) return cudaSuccess;
  if ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 != 0) {
    return cudaErrorMisalignedAddress;
  }
  copy_kernel<<<grid_for(words / 4 + 1, reinterpret_cast<const void*>(copy_kernel)), kThreads, 0,
                stream>>>(dst, src, words);
  return cudaGetLastError();
}

cudaError_t triad_fill(float* b, float* c, std::size_t count, std::uint32_t seed,
                       cudaStream_t stream) {
  triad_fill_kernel<<<grid_for(count, reinterpret_cast<const void*>(triad_fill_kernel)), kThreads,
                      0, stream>>>(b, c, count, seed);
  return cudaGetLastError();
}

cudaError_t triad(float* a, const float* b, const float* c, float scalar, std::size_t count,
                  cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) |
       reinterpret_cast<std::uintptr_t>(c)) % 16 != 0) {
    return cudaErrorMisalignedAddress;
  }
  triad_kernel<<<grid_for(count / 4 + 1, reinterpret_cast<const void*>(triad_kernel)), kThreads, 0,
                 stream>>>(a, b, c, scalar, count);
  return cudaGetLastError();
}

cudaError_t count_pattern_mismatch(const std::uint32_t* data, std::size_t words,
                                   std::uint32_t seed, unsigned long long* device_counter,
                                   cudaStream_t stream) {
  cudaError_t err = cudaMemsetAsync(device_counter, 0, sizeof(unsigned long long), stream);
  if (err != cudaSuccess || words == 0) return err;
  pattern_mismatch_kernel<<<grid_for(words,
                                     reinterpret_cast<const void*>(pattern_mismatch_kernel)),
                            kThreads, 0, stream>>>(data, words, seed, device_counter);
  return cudaGetLastError();
}

cudaError_t count_triad_mismatch(const float* a, std::size_t count, std::uint32_t seed,
                                 float scalar, unsigned long long* device_counter,
                                 cudaStream_t stream) {
  cudaError_t err = cudaMemsetAsync(device_counter, 0, sizeof(unsigned long long), stream);
  if (err != cudaSuccess || count == 0) return err;
  triad_mismatch_kernel<<<grid_for(count, reinterpret_cast<const void*>(triad_mismatch_kernel)),
                          kThreads, 0, stream>>>(a, count, seed, scalar, device_counter);
  return cudaGetLastError();
}

cudaError_t chase(const std::uint32_t* chain, std::uint32_t steps, std::uint32_t* end,
                  cudaStream_t stream) {
  chase_kernel<<<1, 1, 0, stream>>>(chain, steps, end);
  return cudaGetLastError();
}

}  // namespace mgbench::kernels
