// Tiled SIMT fp32 GEMM: C[M,N] = A[M,K] * B[N,K]^T, all row-major (see gemm.hpp).
//
// Block tile 128 x 128 x 8, 256 threads = 8 warps as 4 (M) x 2 (N), warp tile 32 x 64, lanes
// as 4 x 8; each thread computes 8 x 8 outputs as four 4 x 4 quadrants (rows 4 tm and
// 16 + 4 tm of its warp's 32, columns 4 tn and 32 + 4 tn of its warp's 64), so each of its
// four float4 shared-memory reads per k is one wavefront per warp (4 or 8 distinct
// addresses). Both operands are stored k-major in shared memory (transposed while staging),
// double-buffered: the next k-tile is loaded into registers while the current one is
// multiplied, and the operands of step kk + 1 are read while step kk is multiplied.
#include <cstdint>

#include "mgbench/kernels/gemm.hpp"

namespace mgbench::kernels::detail {

namespace {

constexpr int kBlock = 128;  // M and N
constexpr int kBlockK = 8;
constexpr int kThreads = 256;
constexpr int kPad = 4;  // keeps the transposed stores off one bank, rows stay 16-byte aligned
constexpr int kLd = kBlock + kPad;

// Thread `tid` stages row tid/2, k elements (tid%2)*4 .. +3 of a 128 x 8 tile: `row_ptr`
// points at that row's first element (null when the row is outside the matrix).
template <bool kAligned>
__device__ __forceinline__ float4 load_tile_part(const float* __restrict__ row_ptr,
                                                 std::int64_t k, std::int64_t kk) {
  if (row_ptr == nullptr) return make_float4(0.f, 0.f, 0.f, 0.f);
  if constexpr (kAligned) {
    // K is a multiple of 4: a float4 is entirely inside or outside the matrix.
    if (kk < k) return __ldg(reinterpret_cast<const float4*>(row_ptr + kk));
    return make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = kk + e < k ? row_ptr[kk + e] : 0.f;
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

// The thread's 8 A values (rows) and 8 B values (columns) of step kk.
__device__ __forceinline__ void load_fragments(const float (*as)[kLd], const float (*bs)[kLd],
                                               int kk, int a_off, int b_off, float (&ra)[8],
                                               float (&rb)[8]) {
  const float4 a0 = *reinterpret_cast<const float4*>(&as[kk][a_off]);
  const float4 a1 = *reinterpret_cast<const float4*>(&as[kk][a_off + 16]);
  const float4 b0 = *reinterpret_cast<const float4*>(&bs[kk][b_off]);
  const float4 b1 = *reinterpret_cast<const float4*>(&bs[kk][b_off + 32]);
  ra[0] = a0.x; ra[1] = a0.y; ra[2] = a0.z; ra[3] = a0.w;
  ra[4] = a1.x; ra[5] = a1.y; ra[6] = a1.z; ra[7] = a1.w;
  rb[0] = b0.x; rb[1] = b0.y; rb[2] = b0.z; rb[3] = b0.w;
  rb[4] = b1.x; rb[5] = b1.y; rb[6] = b1.z; rb[7] = b1.w;
}

// acc[i][j]: row a_off + (i < 4 ? i : 16 + i - 4), column b_off + (j < 4 ? j : 32 + j - 4).
__device__ __forceinline__ void store_outputs(float* __restrict__ c, const float (&acc)[8][8],
                                              std::int64_t m, std::int64_t n,
                                              std::int64_t row0, std::int64_t col0,
                                              bool vector_store) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const std::int64_t row = row0 + (i < 4 ? i : 16 + (i - 4));
    if (row >= m) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t col = col0 + half * 32;
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

template <bool kAligned>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_simt_kernel(const float* __restrict__ a, const float* __restrict__ b,
                     float* __restrict__ c, std::int64_t m, std::int64_t n, std::int64_t k,
                     bool vector_store) {
  __shared__ __align__(16) float as[2][kBlockK][kLd];
  __shared__ __align__(16) float bs[2][kBlockK][kLd];

  const std::int64_t block_m = static_cast<std::int64_t>(blockIdx.y) * kBlock;
  const std::int64_t block_n = static_cast<std::int64_t>(blockIdx.x) * kBlock;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int a_off = (warp / 2) * 32 + (lane / 8) * 4;
  const int b_off = (warp % 2) * 64 + (lane % 8) * 4;
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);
  const std::int64_t stage_row_a = block_m + tid / 2, stage_row_b = block_n + tid / 2;
  const float* a_row = stage_row_a < m ? a + stage_row_a * k : nullptr;
  const float* b_row = stage_row_b < n ? b + stage_row_b * k : nullptr;
  const std::int64_t k_part = (tid % 2) * 4;

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

  store_tile_part(as[0], load_tile_part<kAligned>(a_row, k, k_part), tid);
  store_tile_part(bs[0], load_tile_part<kAligned>(b_row, k, k_part), tid);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int cur = kt & 1;
    const bool more = kt + 1 < k_tiles;
    float4 next_a = make_float4(0.f, 0.f, 0.f, 0.f), next_b = next_a;
    if (more) {
      const std::int64_t k0 = static_cast<std::int64_t>(kt + 1) * kBlockK + k_part;
      next_a = load_tile_part<kAligned>(a_row, k, k0);
      next_b = load_tile_part<kAligned>(b_row, k, k0);
    }
    float ra[2][8], rb[2][8];
    load_fragments(as[cur], bs[cur], 0, a_off, b_off, ra[0], rb[0]);
#pragma unroll
    for (int kk = 0; kk < kBlockK; ++kk) {
      if (kk + 1 < kBlockK) {
        load_fragments(as[cur], bs[cur], kk + 1, a_off, b_off, ra[(kk + 1) & 1],
                       rb[(kk + 1) & 1]);
      }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[kk & 1][i], rb[kk & 1][j], acc[i][j]);
    }
    if (more) {
      // The other buffer was last read in iteration kt-1, before the barrier that ended it.
      store_tile_part(as[cur ^ 1], next_a, tid);
      store_tile_part(bs[cur ^ 1], next_b, tid);
    }
    __syncthreads();
  }
  store_outputs(c, acc, m, n, block_m + a_off, block_n + b_off, vector_store);
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
