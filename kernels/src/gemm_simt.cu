// Tiled SIMT fp32 GEMM: C[M,N] = A[M,K] * B[N,K]^T, all row-major (see gemm.hpp).
//
// Block tile 128 x 128 x 8, 256 threads in a 16 x 16 grid; each thread computes 8 x 8
// outputs as four 4 x 4 quadrants (rows ty*4 and 64 + ty*4, columns tx*4 and 64 + tx*4) so
// that its shared-memory reads are float4 and conflict-free. Both operands are stored
// k-major in shared memory (transposed while staging), double-buffered: the next k-tile is
// loaded into registers while the current one is multiplied.
#include <cstdint>

#include "mgbench/kernels/gemm.hpp"

namespace mgbench::kernels::detail {

namespace {

constexpr int kBlock = 128;  // M and N
constexpr int kBlockK = 8;
constexpr int kThreads = 256;
constexpr int kPad = 4;  // keeps the transposed stores off one bank, rows stay 16-byte aligned
constexpr int kLd = kBlock + kPad;

// Thread `tid` stages row tid/2, k elements (tid%2)*4 .. +3 of a 128 x 8 tile.
template <bool kAligned>
__device__ __forceinline__ float4 load_tile_part(const float* __restrict__ g, std::int64_t rows,
                                                 std::int64_t k, std::int64_t row0,
                                                 std::int64_t k0, int tid) {
  const std::int64_t row = row0 + tid / 2;
  const std::int64_t kk = k0 + (tid % 2) * 4;
  if constexpr (kAligned) {
    // K is a multiple of 4: a float4 is entirely inside or outside the matrix.
    if (row < rows && kk < k) return __ldg(reinterpret_cast<const float4*>(g + row * k + kk));
    return make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = (row < rows && kk + e < k) ? g[row * k + kk + e] : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
  }
}

__device__ __forceinline__ void store_tile_part(float (*tile)[kLd], float4 v, int tid) {
  const int row = tid / 2;
  const int kk = (tid % 2) * 4;
  tile[kk + 0][row] = v.x;
  tile[kk + 1][row] = v.y;
  tile[kk + 2][row] = v.z;
  tile[kk + 3][row] = v.w;
}

template <bool kAligned>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_simt_kernel(const float* __restrict__ a, const float* __restrict__ b,
                     float* __restrict__ c, std::int64_t m, std::int64_t n, std::int64_t k,
                     bool vector_store) {
  __shared__ __align__(16) float as[2][kBlockK][kLd];
  __shared__ __align__(16) float bs[2][kBlockK][kLd];

  const std::int64_t block_m = static_cast<std::int64_t>(blockIdx.y) * kBlock;
  const std::int64_t block_n = static_cast<std::int64_t>(blockIdx.x) * kBlock;
  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

  float4 next_a = load_tile_part<kAligned>(a, m, k, block_m, 0, tid);
  float4 next_b = load_tile_part<kAligned>(b, n, k, block_n, 0, tid);
  store_tile_part(as[0], next_a, tid);
  store_tile_part(bs[0], next_b, tid);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int cur = kt & 1;
    const bool more = kt + 1 < k_tiles;
    if (more) {
      const std::int64_t k0 = static_cast<std::int64_t>(kt + 1) * kBlockK;
      next_a = load_tile_part<kAligned>(a, m, k, block_m, k0, tid);
      next_b = load_tile_part<kAligned>(b, n, k, block_n, k0, tid);
    }
#pragma unroll
    for (int kk = 0; kk < kBlockK; ++kk) {
      float ra[8], rb[8];
      const float4 a0 = *reinterpret_cast<const float4*>(&as[cur][kk][ty * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[cur][kk][64 + ty * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[cur][kk][tx * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[cur][kk][64 + tx * 4]);
      ra[0] = a0.x; ra[1] = a0.y; ra[2] = a0.z; ra[3] = a0.w;
      ra[4] = a1.x; ra[5] = a1.y; ra[6] = a1.z; ra[7] = a1.w;
      rb[0] = b0.x; rb[1] = b0.y; rb[2] = b0.z; rb[3] = b0.w;
      rb[4] = b1.x; rb[5] = b1.y; rb[6] = b1.z; rb[7] = b1.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    if (more) {
      // The other buffer was last read in iteration kt-1, before the barrier that ended it.
      store_tile_part(as[cur ^ 1], next_a, tid);
      store_tile_part(bs[cur ^ 1], next_b, tid);
    }
    __syncthreads();
  }

  // acc[i][j]: row (i < 4 ? ty*4 + i : 64 + ty*4 + i-4), column likewise with tx.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const std::int64_t row = block_m + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
    if (row >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t col = block_n + half * 64 + tx * 4;
      float* out = c + row * n + col;
      const float* v = &acc[i][half * 4];
      if (vector_store && col + 3 < n) {
        *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (col + e < n) out[e] = v[e];
        }
      }
    }
  }
}

}  // namespace

cudaError_t gemm_simt_fp32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                           const float* b, float* c, bool aligned, cudaStream_t stream) {
  if (m < 1 || n < 1 || k < 1 || a == nullptr || b == nullptr || c == nullptr) {
    return cudaErrorInvalidValue;
  }
  const std::int64_t tiles_m = (m + kBlock - 1) / kBlock;
  const std::int64_t tiles_n = (n + kBlock - 1) / kBlock;
  if (tiles_m > 65535 || tiles_n > 0x7fffffff) return cudaErrorInvalidValue;
  const bool vector_store = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0;
  const dim3 grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m));
  if (aligned) {
    gemm_simt_kernel<true><<<grid, kThreads, 0, stream>>>(a, b, c, m, n, k, vector_store);
  } else {
    gemm_simt_kernel<false><<<grid, kThreads, 0, stream>>>(a, b, c, m, n, k, vector_store);
  }
  return cudaGetLastError();
}

}  // namespace mgbench::kernels::detail
