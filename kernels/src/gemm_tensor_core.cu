// Tensor-core GEMM (bf16, fp16, tf32, fp8 e4m3) with mma.sync, ldmatrix and a cp.async
// pipeline.
// C[M,N] = A[M,K] * B[N,K]^T, everything row-major (see gemm.hpp).
//
// Block tile 128 x 128, 8 warps as 2 (M) x 4 (N), warp tile 64 x 32. Each shared-memory
// tile row holds 64 bytes of K (32 bf16/fp16, 16 fp32 or 64 fp8 elements), so one k-tile is
// two MMA k-steps of 32 bytes for every precision (m16n8k16 for 16-bit inputs, m16n8k8 for
// tf32, m16n8k32 for fp8) and the ldmatrix addressing is the same for all of them: an 8 x 8
// b16 matrix gives lane l the 4 bytes at row l/4, bytes 4 (l%4).., which is the fragment
// layout of all three shapes. kStages k-tiles are in flight. fp8 (e4m3 in, bf16 out) needs
// sm_89; the host never launches it on an older GPU.
//
// Shared-memory swizzle: a row is four 16-byte chunks; chunk c of row r lives at chunk
// c ^ ((r >> 1) & 3). The eight rows one ldmatrix phase reads (r..r+7, same logical chunk)
// then fall into eight different 16-byte bank groups of a 128-byte window: conflict-free.
#include <cstdint>
#include <type_traits>

#include "gemm_common.cuh"
#include "mgbench/kernels/gemm.hpp"

namespace mgbench::kernels::detail {

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kRowBytes = 64;  // bytes of K per tile row
constexpr int kChunks = kRowBytes / 16;
constexpr int kStages = 4;
constexpr int kThreads = 256;
constexpr int kWarpM = 64;
constexpr int kWarpN = 32;
constexpr int kMmaM = kWarpM / 16;  // m16 tiles per warp
constexpr int kMmaN = kWarpN / 8;   // n8 tiles per warp
constexpr int kTileBytes = kBlockM * kRowBytes;  // one operand, one stage (== kBlockN rows)
constexpr int kStageBytes = 2 * kTileBytes;
constexpr int kSmemBytes = kStages * kStageBytes;  // 64 KiB: dynamic shared memory
constexpr int kGroupM = 8;  // block rasterisation: 8 tile rows share the B tiles in L2

static_assert(kBlockM == kBlockN, "A and B tiles share one geometry");
static_assert(kBlockM * kChunks == 2 * kThreads, "two 16-byte chunks per thread and operand");

__device__ __forceinline__ int swizzled_offset(int row, int chunk) {
  return row * kRowBytes + ((chunk ^ ((row >> 1) & 3)) << 4);
}

__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;  // 0: zero-fill, nothing is read
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t addr, std::uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t bits) {
  std::uint32_t out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(__uint_as_float(bits)));
  return out;
}

// One mma.sync with fp32 accumulation in place (d += a * b); `kind` is the instruction's
// "shape.row.col.f32.<A type>.<B type>.f32" part.
#define MGBENCH_MMA_SYNC_F32(kind)                                                         \
  asm volatile("mma.sync.aligned." kind " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, " \
               "{%0, %1, %2, %3};\n"                                                       \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                            \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

// Per-precision pieces: the MMA instruction (m16n8k16 for bf16/fp16, m16n8k8 for tf32, whose
// inputs are fp32 in memory, m16n8k32 for fp8), whether inputs are rounded to tf32, and the
// output type (the input type; bf16 for fp8).
template <typename T>
struct MmaTraits {
  using Out = std::conditional_t<std::is_same_v<T, __nv_fp8_e4m3>, __nv_bfloat16, T>;
  static constexpr bool kTf32 = std::is_same_v<T, float>;
  __device__ __forceinline__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      MGBENCH_MMA_SYNC_F32("m16n8k16.row.col.f32.bf16.bf16.f32");
    } else if constexpr (std::is_same_v<T, __half>) {
      MGBENCH_MMA_SYNC_F32("m16n8k16.row.col.f32.f16.f16.f32");
    } else if constexpr (std::is_same_v<T, float>) {
      MGBENCH_MMA_SYNC_F32("m16n8k8.row.col.f32.tf32.tf32.f32");
    } else {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
      MGBENCH_MMA_SYNC_F32("m16n8k32.row.col.f32.e4m3.e4m3.f32");
#else
      __trap();  // no fp8 MMA before sm_89; the host does not launch this
#endif
    }
  }
};

#undef MGBENCH_MMA_SYNC_F32

// Copies one 128-row x 64-byte tile (rows [row0, row0+128) of a [rows, K] matrix, K
// elements [k0, k0 + 64/sizeof(T))) into swizzled shared memory; out-of-range parts are 0.
template <typename T, bool kAligned>
__device__ __forceinline__ void load_tile(std::uint32_t smem_tile, const T* __restrict__ g,
                                          std::int64_t rows, std::int64_t k, std::int64_t row0,
                                          std::int64_t k0, int tid) {
  constexpr int kPerChunk = 16 / sizeof(T);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int id = tid + i * kThreads;
    const int row = id / kChunks;
    const int chunk = id % kChunks;
    const std::int64_t grow = row0 + row;
    const std::int64_t gk = k0 + chunk * kPerChunk;
    const std::uint32_t dst = smem_tile + swizzled_offset(row, chunk);
    if constexpr (kAligned) {
      // K is a multiple of kPerChunk: a chunk is entirely inside or outside the matrix.
      const bool valid = grow < rows && gk < k;
      const T* src = valid ? g + grow * k + gk : g;
      cp_async_16(dst, src, valid);
    } else {
      union {
        T e[kPerChunk];
        uint4 v;
      } pack;
#pragma unroll
      for (int e = 0; e < kPerChunk; ++e) {
        const bool valid = grow < rows && gk + e < k;
        pack.e[e] = valid ? g[grow * k + gk + e] : T(0.0f);
      }
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(pack.v.x),
                   "r"(pack.v.y), "r"(pack.v.z), "r"(pack.v.w));
    }
  }
}

// The A fragments of the warp's four m16 tiles and the B fragments of its four n8 tiles for
// one MMA k-step, from the stage at `stage` (byte offsets from the per-lane tables).
template <bool kTf32>
__device__ __forceinline__ void load_fragments(std::uint32_t stage, std::uint32_t a_off,
                                               std::uint32_t b_off,
                                               std::uint32_t (&af)[kMmaM][4],
                                               std::uint32_t (&bf)[kMmaN][2]) {
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) ldmatrix_x4(stage + a_off + i * 16 * kRowBytes, af[i]);
#pragma unroll
  for (int j = 0; j < kMmaN / 2; ++j) {
    std::uint32_t r[4];
    ldmatrix_x4(stage + b_off + j * 16 * kRowBytes, r);
    bf[2 * j][0] = r[0];
    bf[2 * j][1] = r[1];
    bf[2 * j + 1][0] = r[2];
    bf[2 * j + 1][1] = r[3];
  }
  if constexpr (kTf32) {
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e) af[i][e] = to_tf32(af[i][e]);
#pragma unroll
    for (int j = 0; j < kMmaN; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) bf[j][e] = to_tf32(bf[j][e]);
  }
}

// Grouped rasterisation of the 1-D grid: the first row and column of this block's tile.
__device__ __forceinline__ void block_origin(int tiles_m, int tiles_n, std::int64_t& block_m,
                                             std::int64_t& block_n) {
  int tile_m = 0, tile_n = 0;
  grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kGroupM, tile_m, tile_n);
  block_m = static_cast<std::int64_t>(tile_m) * kBlockM;
  block_n = static_cast<std::int64_t>(tile_n) * kBlockN;
}

// Load stage: k-tile `kt` of A and B into pipeline stage `stage` of shared memory.
template <typename T, bool kAligned>
__device__ __forceinline__ void load_stage(std::uint32_t smem_base, int stage, int kt,
                                           const T* a, const T* b, std::int64_t m,
                                           std::int64_t n, std::int64_t k, std::int64_t block_m,
                                           std::int64_t block_n, int tid) {
  constexpr int kPerRow = kRowBytes / sizeof(T);  // K elements per k-tile
  const std::uint32_t sa = smem_base + stage * kStageBytes;
  const std::int64_t k0 = static_cast<std::int64_t>(kt) * kPerRow;
  load_tile<T, kAligned>(sa, a, m, k, block_m, k0, tid);
  load_tile<T, kAligned>(sa + kTileBytes, b, n, k, block_n, k0, tid);
}

// ldmatrix lane addressing (see the fragment layouts in the PTX ISA, mma m16n8k16/k8), as
// byte offsets into a stage for each of the two MMA k-steps of a k-tile.
// A, x4 per m16 tile: matrices (rows 0-7, chunk lo), (8-15, lo), (0-7, hi), (8-15, hi).
// B, x4 per pair of n8 tiles: (n 0-7, lo), (0-7, hi), (8-15, lo), (8-15, hi).
__device__ __forceinline__ void fragment_offsets(int lane, int warp_m, int warp_n,
                                                 std::uint32_t (&a_off)[2],
                                                 std::uint32_t (&b_off)[2]) {
  const int quad = lane >> 3;
  const int r8 = lane & 7;
  const int swz = (r8 >> 1) & 3;  // (row >> 1) & 3 for every row this lane addresses
  const int a_row = warp_m * kWarpM + (quad & 1) * 8 + r8;
  const int a_hi = quad >> 1;
  const int b_row = warp_n * kWarpN + (quad >> 1) * 8 + r8;
  const int b_hi = quad & 1;
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    a_off[kk] = a_row * kRowBytes + (((2 * kk + a_hi) ^ swz) << 4);
    b_off[kk] = kTileBytes + b_row * kRowBytes + (((2 * kk + b_hi) ^ swz) << 4);
  }
}

// Epilogue: accumulator (i, j) holds rows g and g+8, columns 2t and 2t+1 of its m16n8 tile.
template <typename Traits>
__device__ __forceinline__ void store_tile(typename Traits::Out* c,
                                           const float (&acc)[kMmaM][kMmaN][4], std::int64_t m,
                                           std::int64_t n, std::int64_t block_m,
                                           std::int64_t block_n, int warp_m, int warp_n,
                                           int lane, bool pair_store) {
  const int g = lane >> 2;
  const int t = lane & 3;
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) {
      const std::int64_t col = block_n + warp_n * kWarpN + j * 8 + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::int64_t row = block_m + warp_m * kWarpM + i * 16 + g + h * 8;
        store_pair(c, m, n, row, col, acc[i][j][2 * h], acc[i][j][2 * h + 1], pair_store);
      }
    }
  }
}

template <typename T, bool kAligned>
__global__ void __launch_bounds__(kThreads, 2)
    gemm_tc_kernel(const T* __restrict__ a, const T* __restrict__ b,
                   typename MmaTraits<T>::Out* __restrict__ c, std::int64_t m, std::int64_t n,
                   std::int64_t k, int tiles_m, int tiles_n, bool pair_store) {
  using Traits = MmaTraits<T>;
  constexpr int kPerRow = kRowBytes / sizeof(T);  // K elements per k-tile
  extern __shared__ __align__(128) unsigned char smem[];

  std::int64_t block_m = 0, block_n = 0;
  block_origin(tiles_m, tiles_n, block_m, block_n);

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp % 2;
  const int warp_n = warp / 2;

  const std::uint32_t smem_base = smem_u32(smem);
  const int k_tiles = static_cast<int>((k + kPerRow - 1) / kPerRow);

  std::uint32_t a_off[2], b_off[2];
  fragment_offsets(lane, warp_m, warp_n, a_off, b_off);

  float acc[kMmaM][kMmaN][4];
#pragma unroll
  for (int i = 0; i < kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaN; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage<T, kAligned>(smem_base, s, s, a, b, m, n, k, block_m, block_n, tid);
    cp_async_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Group kt has landed (at most kStages-2 younger groups pending); the barrier also
    // guarantees every warp finished reading the stage the next load overwrites.
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < k_tiles) {
      load_stage<T, kAligned>(smem_base, next % kStages, next, a, b, m, n, k, block_m, block_n,
                              tid);
    }
    cp_async_commit();

    // MMA stage. Fragments of k-step 1 are read from shared memory before the MMAs of
    // k-step 0 issue.
    const std::uint32_t stage = smem_base + (kt % kStages) * kStageBytes;
    std::uint32_t af[2][kMmaM][4];
    std::uint32_t bf[2][kMmaN][2];
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
      load_fragments<Traits::kTf32>(stage, a_off[kk], b_off[kk], af[kk], bf[kk]);
    }
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) Traits::mma(acc[i][j], af[kk][i], bf[kk][j]);
    }
  }
  cp_async_wait<0>();

  store_tile<Traits>(c, acc, m, n, block_m, block_n, warp_m, warp_n, lane, pair_store);
}

// 64 KiB of dynamic shared memory needs the opt-in. Set on every launch (about a
// microsecond of host time): it is per context, and a context may have been recreated.
template <typename Kernel>
cudaError_t prepare_kernel(Kernel kernel) {
  cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (err != cudaSuccess) return err;
  // Two blocks per SM need 128 KiB of the unified L1/shared storage.
  return cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                              cudaSharedmemCarveoutMaxShared);
}

template <typename T, bool kAligned>
cudaError_t launch(std::int64_t m, std::int64_t n, std::int64_t k, const void* a, const void* b,
                   void* c, cudaStream_t stream) {
  auto* kernel = &gemm_tc_kernel<T, kAligned>;
  const cudaError_t err = prepare_kernel(kernel);
  if (err != cudaSuccess) return err;
  const std::int64_t tiles_m = (m + kBlockM - 1) / kBlockM;
  const std::int64_t tiles_n = (n + kBlockN - 1) / kBlockN;
  if (tiles_m * tiles_n > 0x7fffffff || tiles_m * kGroupM * tiles_n > 0x7fffffff) {
    return cudaErrorInvalidValue;
  }
  using Out = typename MmaTraits<T>::Out;
  const bool pair_store =
      n % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % (2 * sizeof(Out)) == 0;
  kernel<<<static_cast<unsigned>(tiles_m * tiles_n), kThreads, kSmemBytes, stream>>>(
      static_cast<const T*>(a), static_cast<const T*>(b), static_cast<Out*>(c), m, n, k,
      static_cast<int>(tiles_m), static_cast<int>(tiles_n), pair_store);
  return cudaGetLastError();
}

template <typename T>
cudaError_t launch_any(std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                       const void* b, void* c, bool aligned, cudaStream_t stream) {
  return aligned ? launch<T, true>(m, n, k, a, b, c, stream)
                 : launch<T, false>(m, n, k, a, b, c, stream);
}

}  // namespace

cudaError_t gemm_tensor_core(DType type, std::int64_t m, std::int64_t n, std::int64_t k,
                             const void* a, const void* b, void* c, bool aligned,
                             cudaStream_t stream) {
  if (m < 1 || n < 1 || k < 1 || a == nullptr || b == nullptr || c == nullptr) {
    return cudaErrorInvalidValue;
  }
  switch (type) {
    case DType::bf16: return launch_any<__nv_bfloat16>(m, n, k, a, b, c, aligned, stream);
    case DType::fp16: return launch_any<__half>(m, n, k, a, b, c, aligned, stream);
    case DType::tf32: return launch_any<float>(m, n, k, a, b, c, aligned, stream);
    case DType::fp8_e4m3:
      if (current_device_cc() < 89) return cudaErrorNotSupported;
      return launch_any<__nv_fp8_e4m3>(m, n, k, a, b, c, aligned, stream);
    default: break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace mgbench::kernels::detail
