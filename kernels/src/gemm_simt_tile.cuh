// The SIMT fp32 GEMM as a template over its tiling (internal to kernels/src; gemm_simt.cu
// picks one configuration). C[M,N] = A[M,K] * B[N,K]^T, all row-major (see gemm.hpp).
//
// Geometry. A block computes a BM x BN tile of C. Each thread holds TM x TN accumulators made
// of (TM/4) x (TN/4) sub-tiles of 4 x 4; the 32 lanes of a warp sit as LY x LX, so a warp
// covers (TM LY) x (TN LX) and one sub-tile row of the warp is contiguous (4 LY rows, 4 LX
// columns). A lane's float4 shared-memory reads then touch LY (for A) or LX (for B) distinct
// 16-byte words next to each other: one wavefront, the rest broadcast.
//
// Shared memory holds both operands k-major (tile[k][row], rows padded by 4 floats), so a
// fragment of 4 rows at one k is one float4. The global rows are K-contiguous, so staging
// transposes. Two ways, chosen by kStages:
//   2    register staging: float4 global loads of the next k-tile while this one is
//        multiplied, then four scalar stores each into the other of two buffers. Lanes cover
//        16 rows x 2 float4 (32 contiguous bytes per row); the stores are conflict-free.
//   >= 3 a cp.async ring of kStages buffers with 4-byte copies (the copy does the transpose).
//        Lanes cover 4 rows x 8 k (32 contiguous bytes per row); conflict-free in shared
//        memory with the same padding.
// One barrier per k-tile either way. Tiles are walked in groups of kGroupM tile rows
// (grouped_tile) so that blocks that run together share A and B in L2.
//
// Bounds: rows past M or N read as zero; a K tail reads as zero (kAligned: K % 4 == 0 and
// A, B 16-byte aligned, so a float4 lies wholly inside or outside; otherwise per element).
// Offsets inside one block's rows are 32-bit (Off = uint32) unless kWide.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "gemm_common.cuh"

namespace mgbench::kernels::detail::simt {

template <int BM_, int BN_, int BK_, int TM_, int TN_, int LY_, int LX_, int kMinBlocks_,
          int kStages_, int kGroupM_ = 8, int kOrder_ = 0, int kCopyLanes_ = 8>
struct Tiling {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, LY = LY_, LX = LX_;
  static constexpr int kMinBlocks = kMinBlocks_, kStages = kStages_, kGroupM = kGroupM_;
  static constexpr int kOrder = kOrder_;  // FMA order: 0 rows outer, 1 columns outer, 2 snake
  static constexpr int kWarpM = TM * LY, kWarpN = TN * LX;
  static constexpr int kWarpsN = BN / kWarpN;
  static constexpr int kThreads = 32 * (BM / kWarpM) * kWarpsN;
  static constexpr bool kAsync = kStages >= 3;
  // Staging: kPerRow threads share a row; a thread's k positions in a k-tile are
  // lane_k + kKStep h (+ 0..3 on the register path, which moves float4s).
  static constexpr int kPerRow = kAsync ? kCopyLanes_ : 2;
  static constexpr int kKStep = kAsync ? kCopyLanes_ : 8;
  static constexpr int kPad = kAsync ? 32 / kPerRow : 4;  // floats per shared row, see below
  static constexpr int kLdA = BM + kPad, kLdB = BN + kPad;
  static constexpr int kStageFloats = BK * (kLdA + kLdB);
  static constexpr int kSmemBytes = kStages * kStageFloats * 4;
  static_assert(LY * LX == 32 && TM % 4 == 0 && TN % 4 == 0, "4 x 4 sub-tiles, 32 lanes");
  static_assert(BM % kWarpM == 0 && BN % kWarpN == 0, "whole warps per block");
  static_assert(BK % 8 == 0 && kStages >= 2, "k-tiles of 8 or 16");
  static_assert(BM % 32 == 0 && BN % 32 == 0, "the padding below assumes it");
  static_assert(!kAsync || kCopyLanes_ == 2 || kCopyLanes_ == 4 || kCopyLanes_ == 8, "lanes");
  static_assert(BM % (kThreads / kPerRow) == 0 && BN % (kThreads / kPerRow) == 0, "staging");
};
// Padding keeps the staging stores conflict-free and rows 16-byte aligned. Bank of tile[k][r]:
// (k kPad + r) % 32. Register path: one store instruction of a warp writes 16 consecutive rows
// at k and k + 4 (the two float4 columns): 16 (k / 4 % 2) + r, 32 banks with kPad 4. cp.async:
// 32 / P consecutive rows at P consecutive k: k (32 / P) + r, 32 banks with kPad 32 / P.

// ---- staging of one operand tile (R rows x BK) into shared memory -------------------------

__device__ __forceinline__ void cp_async_4(std::uint32_t dst, const float* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 4 : 0));
}

// Per-thread view of one operand: it stages rows tid / kPerRow + j T / kPerRow, and in each
// k-tile the k positions lane_k + kKStep h.
template <class T, int R, typename Off>
struct Rows {
  static constexpr int kRows = R * T::kPerRow / T::kThreads;  // rows per thread
  static constexpr int kLd = R + T::kPad;
  using Idx = std::conditional_t<sizeof(Off) == 8, std::int64_t, int>;  // k positions
  const float* base;  // the block's first row of this operand
  Off offset[kRows];  // element offset of the thread's first k in each row
  bool valid[kRows];  // the row is inside the matrix
  int lane_k;

  __device__ __forceinline__ Rows(const float* g, std::int64_t rows, std::int64_t k,
                                  std::int64_t row0, int tid) {
    base = g + row0 * k;
    lane_k = T::kAsync ? tid % T::kPerRow : (tid % 2) * 4;
#pragma unroll
    for (int j = 0; j < kRows; ++j) {
      const int r = tid / T::kPerRow + j * (T::kThreads / T::kPerRow);
      valid[j] = row0 + r < rows;
      offset[j] = static_cast<Off>(valid[j] ? r : 0) * static_cast<Off>(k) + lane_k;
    }
  }
  // Shared-memory index of row j, k position lane_k + kKStep h + e (stage base excluded).
  __device__ __forceinline__ int smem_index(int tid, int j, int h, int e) const {
    const int r = tid / T::kPerRow + j * (T::kThreads / T::kPerRow);
    return (h * T::kKStep + lane_k + e) * kLd + r;
  }
  // Row j at k position lane_k + kq. The sum is formed in Off, so the compiler keeps one
  // address computation per use instead of a hoisted 64-bit pointer per row.
  __device__ __forceinline__ const float* at(int j, Idx kq) const {
    return base + (offset[j] + static_cast<Off>(kq));
  }
};

// Register path: one chunk (8 k) of one operand's k-tile, a float4 per row of the thread.
template <class T, bool kAligned, class RowsT>
struct Staged {
  float4 v[RowsT::kRows];

  template <typename Idx>
  __device__ __forceinline__ void load(const RowsT& rows, Idx kq, Idx k, bool k_full) {
#pragma unroll
    for (int j = 0; j < RowsT::kRows; ++j) {
      const float* p = rows.at(j, kq);
      if constexpr (kAligned) {
        // K % 4 == 0: a float4 lies wholly inside or outside the matrix.
        v[j] = rows.valid[j] && (k_full || kq + rows.lane_k < k)
                   ? __ldg(reinterpret_cast<const float4*>(p))
                   : make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        float e[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          e[q] = rows.valid[j] && (k_full || kq + rows.lane_k + q < k) ? p[q] : 0.f;
        }
        v[j] = make_float4(e[0], e[1], e[2], e[3]);
      }
    }
  }
  __device__ __forceinline__ void store(const RowsT& rows, float* tile, int tid, int h) const {
#pragma unroll
    for (int j = 0; j < RowsT::kRows; ++j) {
      float* s = tile + rows.smem_index(tid, j, h, 0);
      s[0 * RowsT::kLd] = v[j].x;
      s[1 * RowsT::kLd] = v[j].y;
      s[2 * RowsT::kLd] = v[j].z;
      s[3 * RowsT::kLd] = v[j].w;
    }
  }
};

// cp.async path: one operand's k-tile starting at k0 into `tile`, 4 bytes per copy.
template <class T, class RowsT, typename Idx>
__device__ __forceinline__ void copy_async(const RowsT& rows, float* tile, Idx k0, Idx k,
                                           int tid) {
  const bool k_full = k0 + T::BK <= k;
  const std::uint32_t s0 = smem_u32(tile);
#pragma unroll
  for (int j = 0; j < RowsT::kRows; ++j)
#pragma unroll
    for (int h = 0; h < T::BK / T::kKStep; ++h) {
      const Idx kk = k0 + h * T::kKStep;
      const bool ok = rows.valid[j] && (k_full || kk + rows.lane_k < k);
      // A copy that reads nothing still gets an address inside the matrix.
      cp_async_4(s0 + 4u * static_cast<std::uint32_t>(rows.smem_index(tid, j, h, 0)),
                 rows.at(j, k_full || ok ? kk : Idx{0}), ok);
    }
}

// ---- the multiply ---------------------------------------------------------------------------

template <int kOrder, int TM, int TN>
__device__ __forceinline__ void outer_product(float (&acc)[TM][TN], const float (&a)[TM],
                                              const float (&b)[TN]) {
  if constexpr (kOrder == 1) {
#pragma unroll
    for (int j = 0; j < TN; ++j)
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  } else {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int jj = 0; jj < TN; ++jj) {
        const int j = (kOrder == 2 && (i & 1)) ? TN - 1 - jj : jj;
        acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
  }
}

template <int kCount, int kStride>
__device__ __forceinline__ void load_fragment(const float* s, float (&r)[kCount]) {
#pragma unroll
  for (int q = 0; q < kCount / 4; ++q) {
    const float4 v = *reinterpret_cast<const float4*>(s + q * kStride);
    r[4 * q] = v.x;
    r[4 * q + 1] = v.y;
    r[4 * q + 2] = v.z;
    r[4 * q + 3] = v.w;
  }
}

// acc += k steps kBegin .. kBegin + kCount - 1 of the k-tile in shared memory (as, bs: the
// k-major A and B tiles); a_off, b_off: the thread's first row and column in the tile.
template <class T, int kBegin, int kCount>
__device__ __forceinline__ void multiply_steps(const float* as, const float* bs, int a_off,
                                               int b_off, float (&acc)[T::TM][T::TN]) {
#pragma unroll
  for (int kk = kBegin; kk < kBegin + kCount; ++kk) {
    float a[T::TM], b[T::TN];
    load_fragment<T::TM, 4 * T::LY>(as + kk * T::kLdA + a_off, a);
    load_fragment<T::TN, 4 * T::LX>(bs + kk * T::kLdB + b_off, b);
    outer_product<T::kOrder>(acc, a, b);
  }
}

// acc[i][j] is C[row0 + (i/4) 4 LY + i%4][col0 + (j/4) 4 LX + j%4].
template <class T>
__device__ __forceinline__ void store_tile(float* __restrict__ c, const float (&acc)[T::TM][T::TN],
                                           std::int64_t m, std::int64_t n, std::int64_t row0,
                                           std::int64_t col0, bool vector_store) {
#pragma unroll
  for (int i = 0; i < T::TM; ++i) {
    const std::int64_t row = row0 + (i / 4) * 4 * T::LY + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int q = 0; q < T::TN / 4; ++q) {
      const std::int64_t col = col0 + q * 4 * T::LX;
      float* out = c + row * n + col;
      const float* v = &acc[i][4 * q];
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

// ---- main loops -----------------------------------------------------------------------------

// One k-tile on the register path: chunk h (8 k) of the next tile is loaded while chunk h of
// this one is multiplied, then stored into the other buffer (`next`, last read before the
// barrier that ended the previous tile). One chunk in flight keeps the staging registers few.
template <class T, int h, class SA, class SB, class RA, class RB, typename Idx>
__device__ __forceinline__ void registers_tile(SA& sa, SB& sb, const RA& ra, const RB& rb,
                                               const float* cur, float* next, Idx k0, Idx k,
                                               bool more, int tid, int a_off, int b_off,
                                               float (&acc)[T::TM][T::TN]) {
  if constexpr (h < T::BK / 8) {
    const bool k_full = k0 + T::BK <= k;
    if (more) {
      sa.load(ra, k0 + h * 8, k, k_full);
      sb.load(rb, k0 + h * 8, k, k_full);
    }
    multiply_steps<T, 8 * h, 8>(cur, cur + T::BK * T::kLdA, a_off, b_off, acc);
    if (more) {
      sa.store(ra, next, tid, h);
      sb.store(rb, next + T::BK * T::kLdA, tid, h);
    }
    registers_tile<T, h + 1>(sa, sb, ra, rb, cur, next, k0, k, more, tid, a_off, b_off, acc);
  }
}

// k-tiles are counted in Idx (int unless the offsets are 64-bit).
template <class T, bool kAligned, class RA, class RB, typename Idx>
__device__ __forceinline__ void mainloop_registers(const RA& ra, const RB& rb, float* smem, Idx k,
                                                   int tid, int a_off, int b_off,
                                                   float (&acc)[T::TM][T::TN]) {
  const Idx k_tiles = (k + T::BK - 1) / T::BK;
  Staged<T, kAligned, RA> sa;
  Staged<T, kAligned, RB> sb;
#pragma unroll
  for (int h = 0; h < T::BK / 8; ++h) {
    sa.load(ra, Idx{8 * h}, k, T::BK <= k);
    sb.load(rb, Idx{8 * h}, k, T::BK <= k);
    sa.store(ra, smem, tid, h);
    sb.store(rb, smem + T::BK * T::kLdA, tid, h);
  }
  __syncthreads();
  for (Idx kt = 0; kt < k_tiles; ++kt) {
    const float* cur = smem + (kt & 1) * T::kStageFloats;
    float* next = smem + ((kt + 1) & 1) * T::kStageFloats;
    registers_tile<T, 0>(sa, sb, ra, rb, cur, next, (kt + 1) * T::BK, k, kt + 1 < k_tiles, tid,
                         a_off, b_off, acc);
    __syncthreads();
  }
}

template <class T, class RA, class RB, typename Idx>
__device__ __forceinline__ void mainloop_async(const RA& ra, const RB& rb, float* smem, Idx k,
                                               int tid, int a_off, int b_off,
                                               float (&acc)[T::TM][T::TN]) {
  const Idx k_tiles = (k + T::BK - 1) / T::BK;
#pragma unroll
  for (int s = 0; s < T::kStages - 1; ++s) {
    float* tile = smem + s * T::kStageFloats;
    if (s < k_tiles) {
      copy_async<T>(ra, tile, Idx{s * T::BK}, k, tid);
      copy_async<T>(rb, tile + T::BK * T::kLdA, Idx{s * T::BK}, k, tid);
    }
    cp_async_commit();
  }
  for (Idx kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<T::kStages - 2>();
    __syncthreads();  // tile kt visible to all; buffer (kt - 1) % kStages free again
    const Idx fetch = kt + T::kStages - 1;
    if (fetch < k_tiles) {
      float* tile = smem + static_cast<int>(fetch % T::kStages) * T::kStageFloats;
      copy_async<T>(ra, tile, fetch * T::BK, k, tid);
      copy_async<T>(rb, tile + T::BK * T::kLdA, fetch * T::BK, k, tid);
    }
    cp_async_commit();
    const float* cur = smem + static_cast<int>(kt % T::kStages) * T::kStageFloats;
    multiply_steps<T, 0, T::BK>(cur, cur + T::BK * T::kLdA, a_off, b_off, acc);
  }
  cp_async_wait<0>();
}

template <class T, bool kAligned, bool kWide>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    gemm_simt_kernel(const float* __restrict__ a, const float* __restrict__ b,
                     float* __restrict__ c, std::int64_t m, std::int64_t n, std::int64_t k,
                     bool vector_store) {
  extern __shared__ __align__(16) float smem[];
  using Off = std::conditional_t<kWide, std::int64_t, std::uint32_t>;
  const int tiles_m = static_cast<int>((m + T::BM - 1) / T::BM);
  const int tiles_n = static_cast<int>((n + T::BN - 1) / T::BN);
  int tile_m = 0, tile_n = 0;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, T::kGroupM, tile_m, tile_n);
  const std::int64_t block_m = static_cast<std::int64_t>(tile_m) * T::BM;
  const std::int64_t block_n = static_cast<std::int64_t>(tile_n) * T::BN;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int a_off = (warp / T::kWarpsN) * T::kWarpM + (lane / T::LX) * 4;
  const int b_off = (warp % T::kWarpsN) * T::kWarpN + (lane % T::LX) * 4;

  float acc[T::TM][T::TN];
#pragma unroll
  for (int i = 0; i < T::TM; ++i)
#pragma unroll
    for (int j = 0; j < T::TN; ++j) acc[i][j] = 0.f;

  using RA = Rows<T, T::BM, Off>;
  const RA ra(a, m, k, block_m, tid);
  const Rows<T, T::BN, Off> rb(b, n, k, block_n, tid);
  const auto kdim = static_cast<typename RA::Idx>(k);
  if constexpr (T::kAsync) {
    mainloop_async<T>(ra, rb, smem, kdim, tid, a_off, b_off, acc);
  } else {
    mainloop_registers<T, kAligned>(ra, rb, smem, kdim, tid, a_off, b_off, acc);
  }
  store_tile<T>(c, acc, m, n, block_m + a_off, block_n + b_off, vector_store);
}

// Host side: whether 32-bit in-block offsets suffice (every row offset of one block fits).
template <class T>
constexpr bool needs_wide(std::int64_t k) {
  const std::int64_t rows = T::BM > T::BN ? T::BM : T::BN;
  return rows * k >= (std::int64_t{1} << 31);
}

// Opts the kernel into its dynamic shared memory and asks for a carveout that holds
// kMinBlocks blocks per SM (the rest stays L1). Per launch, about a microsecond: the settings
// are per context, and a context may have been recreated.
template <class T, class Kernel>
cudaError_t prepare_kernel(Kernel kernel) {
  int device = 0, per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) {
    err = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  }
  if (err == cudaSuccess) {
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               T::kSmemBytes);
  }
  if (err != cudaSuccess || per_sm <= 0) return err;
  const int needed = T::kMinBlocks * (T::kSmemBytes + 1024);  // 1 KiB per block for the system
  const int percent = (100 * needed + per_sm - 1) / per_sm;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                              percent < 100 ? percent : 100);
}

// Enqueues the kernel for one shape; the caller has checked m, n, k >= 1 and the pointers.
// `aligned`: K % 4 == 0 and A, B 16-byte aligned.
template <class T>
cudaError_t launch(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                   const float* b, float* c, bool aligned, cudaStream_t stream) {
  const std::int64_t tiles_m = (m + T::BM - 1) / T::BM, tiles_n = (n + T::BN - 1) / T::BN;
  if (tiles_m * tiles_n > 0x7fffffff || tiles_n * T::kGroupM > 0x7fffffff) {
    return cudaErrorInvalidValue;
  }
  const bool vector_store = n % 4 == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0;
  auto kernel = gemm_simt_kernel<T, false, true>;
  if (!needs_wide<T>(k)) {
    kernel = aligned ? gemm_simt_kernel<T, true, false> : gemm_simt_kernel<T, false, false>;
  }
  const cudaError_t err = prepare_kernel<T>(kernel);
  if (err != cudaSuccess) return err;
  kernel<<<static_cast<unsigned>(tiles_m * tiles_n), T::kThreads, T::kSmemBytes, stream>>>(
      a, b, c, m, n, k, vector_store);
  return cudaGetLastError();
}

}  // namespace mgbench::kernels::detail::simt
