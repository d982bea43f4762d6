#pragma once
// Data-path kernels: HBM copy and triad, the word pattern every data-path workload fills and
// checks, and a dependent-load chase for latency.
//
// - pattern_word(i, seed): the 32-bit word at index i of a pattern buffer (a mix of index and
//   seed); the same inline function on host and device, so either side can check a buffer.
// - copy_words: dst[i] = src[i] for `words` 32-bit words; 16-byte loads and stores (streaming
//   cache hints), grid-stride with 4 packs per thread in flight, grid sized to fill every SM.
//   dst may live on a peer GPU (SM stores through peer access). Pointers must be 16-byte aligned.
// - triad: a[i] = b[i] + scalar * c[i] on floats, the same vector scheme.
// - triad inputs: b[i] = pattern_word(i) & 0xffff, c[i] = (pattern_word(i) >> 16) & 0xff as
//   floats, so with a small integer scalar every result is exact in fp32.
// - count_*_mismatch: the number of elements that differ from the expected value, enqueued into
//   *device_counter (device memory; reset by the call).
// - chase: one thread follows chain[j] from index 0 for `steps` dependent loads (volatile: no L1)
//   and writes the index it ends on to *end (for verification).
// Launchers enqueue on `stream` and return the launch status; the caller checks it.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define MGBENCH_HOST_DEVICE __host__ __device__
#else
#define MGBENCH_HOST_DEVICE
#endif

namespace mgbench::kernels {

MGBENCH_HOST_DEVICE inline std::uint32_t pattern_word(std::uint64_t index, std::uint32_t seed) {
  std::uint64_t x = index * 0x9e3779b97f4a7c15ULL + seed;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::uint32_t>(x ^ (x >> 31));
}

MGBENCH_HOST_DEVICE inline float triad_b(std::uint64_t index, std::uint32_t seed) {
  return static_cast<float>(pattern_word(index, seed) & 0xffffu);
}
MGBENCH_HOST_DEVICE inline float triad_c(std::uint64_t index, std::uint32_t seed) {
  return static_cast<float>((pattern_word(index, seed) >> 16) & 0xffu);
}

cudaError_t fill_pattern(std::uint32_t* data, std::size_t words, std::uint32_t seed,
                         cudaStream_t stream);
cudaError_t copy_words(std::uint32_t* dst, const std::uint32_t* src, std::size_t words,
                       cudaStream_t stream);
cudaError_t triad_fill(float* b, float* c, std::size_t count, std::uint32_t seed,
                       cudaStream_t stream);
cudaError_t triad(float* a, const float* b, const float* c, float scalar, std::size_t count,
                  cudaStream_t stream);
cudaError_t count_pattern_mismatch(const std::uint32_t* data, std::size_t words,
                                   std::uint32_t seed, unsigned long long* device_counter,
                                   cudaStream_t stream);
cudaError_t count_triad_mismatch(const float* a, std::size_t count, std::uint32_t seed,
                                 float scalar, unsigned long long* device_counter,
                                 cudaStream_t stream);
cudaError_t chase(const std::uint32_t* chain, std::uint32_t steps, std::uint32_t* end,
                  cudaStream_t stream);

}  // namespace mgbench::kernels
