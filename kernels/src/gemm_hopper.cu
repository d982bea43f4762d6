// Hopper GEMM (sm_90a only): C[M,N] = A[M,K] * B[N,K]^T, everything row-major (gemm.hpp).
//
// Persistent, warp-specialised kernel, one CTA per SM, 384 threads = three warpgroups:
//   warpgroup 0  producer: one thread issues TMA tile loads (cp.async.bulk.tensor) into a
//                kStages-deep ring of shared-memory stages, each guarded by two mbarriers
//                ("full": the bytes landed; "empty": both consumers are done reading);
//   warpgroups 1, 2  consumers: rows [0, 64) and [64, 128) of the 128 x 256 CTA tile, one
//                wgmma.mma_async m64n256 per 32 bytes of K, fp32 accumulators in registers
//                (128 per thread), then a predicated epilogue straight to global memory.
// A k-tile is 128 bytes of K for every type (64 bf16/fp16, 32 tf32, 128 fp8 elements), the
// span of the 128-byte swizzle that TMA writes and the wgmma descriptors read, so each
// k-tile is four wgmma k-steps of 32 bytes. Tiles are visited in grouped order (16 tile rows
// walked column by column) and the CTAs stride through them, so the tiles in flight share
// their A and B panels in L2. TMA fills out-of-range rows and K columns with zeros, so M, N
// and K tails need no special code; only the epilogue checks bounds.
#include <cuda.h>  // CUtensorMap and its enums; the encoder is fetched through the runtime
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "gemm_common.cuh"
#include "mgbench/kernels/gemm.hpp"

// Device passes for any other architecture stop here; plain sm_90 fails in ptxas (wgmma and
// setmaxnreg need sm_90a).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
#error "gemm_hopper.cu holds sm_90a code only: build it for the 90a architecture"
#endif

namespace mgbench::kernels::detail {

namespace {

constexpr int kBlockM = 128;
constexpr int kBlockN = 256;
constexpr int kRowBytes = 128;  // bytes of K per k-tile row = the swizzle span
constexpr int kStepBytes = 32;  // bytes of K per wgmma instruction (k16 / k8 / k32)
constexpr int kStages = 4;
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kATileBytes = kBlockM * kRowBytes;  // 16 KiB
constexpr int kBTileBytes = kBlockN * kRowBytes;  // 32 KiB
constexpr int kStageBytes = kATileBytes + kBTileBytes;
constexpr int kSmemBytes = kStages * kStageBytes + 1024;  // + slack for 1024-byte alignment
constexpr int kGroupM = 16;  // H200, bf16 8192^3: 746 TFLOP/s (8 tile rows: 716)
// CTAs per thread-block cluster, along M: they share the B tile, each loads 1/kClusterM of it
// and multicasts it to all (1 = no clusters). On an H200, 2 gave the same bits but was much
// slower (bf16 8192^3: 452 against 746 TFLOP/s), so clusters stay off.
constexpr int kClusterM = 1;
constexpr int kBRowsPerCta = kBlockN / kClusterM;
constexpr int kAcc = 128;  // fp32 accumulators per consumer thread (64 x 256 / 128)

struct HopperArgs {
  void* c;
  std::int64_t m, n;
  int k_tiles, tiles_m, tiles_n;
  bool pair_store;
};

// ---- mbarrier, TMA and wgmma wrappers (PTX ISA: mbarrier, cp.async.bulk.tensor, wgmma) ----

__device__ __forceinline__ void mbar_init(std::uint32_t bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

// One 2-D TMA box (inner coordinate: K element, outer: row) into shared memory at `dst`,
// completing `bar`'s transaction count.
__device__ __forceinline__ void tma_load(std::uint32_t dst, const CUtensorMap* map, int k0,
                                         int row0, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(k0), "r"(row0), "r"(bar)
      : "memory");
}

// The same box into the same shared-memory offset of every CTA in `mask` (cluster ranks), each
// CTA's `bar` (same offset) completing its share of the bytes.
__device__ __forceinline__ void tma_load_multicast(std::uint32_t dst, const CUtensorMap* map,
                                                   int k0, int row0, std::uint32_t bar,
                                                   std::uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(k0), "r"(row0), "r"(bar), "h"(mask)
      : "memory");
}

__device__ __forceinline__ std::uint32_t cluster_special(int which) {
  std::uint32_t v = 0;
  if (which == 0) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(v));
  if (which == 1) asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(v));
  if (which == 2) asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(v));
  return v;
}

// All threads of every CTA in the cluster (a plain CTA barrier without clusters).
__device__ __forceinline__ void cluster_sync() {
  if constexpr (kClusterM > 1) {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
  } else {
    __syncthreads();
  }
}

// One arrival on the mbarrier at shared offset `bar` of every CTA in the cluster.
__device__ __forceinline__ void mbar_arrive_all(std::uint32_t bar) {
  if constexpr (kClusterM > 1) {
#pragma unroll
    for (std::uint32_t r = 0; r < kClusterM; ++r) {
      std::uint32_t remote = 0;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(r));
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote)
                   : "memory");
    }
  } else {
    mbar_arrive(bar);
  }
}

// Shared-memory matrix descriptor of a K-major operand written by TMA with the 128-byte
// swizzle: rows of 128 bytes, 8-row atoms 1024 bytes apart (stride byte offset), leading
// byte offset unused for this layout (1), swizzle mode 1 = 128 bytes in bits 62-63.
// The 32-byte k-steps inside a row advance the start address (bits 0-13, in 16-byte units).
__device__ __forceinline__ std::uint64_t smem_desc(std::uint32_t addr) {
  return static_cast<std::uint64_t>((addr & 0x3ffffu) >> 4) | (std::uint64_t{1} << 16) |
         (std::uint64_t{1024 >> 4} << 32) | (std::uint64_t{1} << 62);
}

// Keeps the compiler from moving accumulator reads/writes across wgmma issue and wait.
__device__ __forceinline__ void fence_acc(float (&d)[kAcc]) {
#pragma unroll
  for (int i = 0; i < kAcc; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

#define MGBENCH_ACC8(i)                                                                   \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define MGBENCH_ACC32(i) \
  MGBENCH_ACC8(i), MGBENCH_ACC8(i + 8), MGBENCH_ACC8(i + 16), MGBENCH_ACC8(i + 24)
#define MGBENCH_ACC_LIST                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "               \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "      \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "      \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "      \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "      \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "      \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, " \
  "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "   \
  "%125, %126, %127}"
// d (+)= A * B^T for one m64n256 wgmma; `kind` is "shape.f32.<A>.<B>", `tail` the
// immediates after the scale-d predicate (scale-a, scale-b and, for 16-bit types, the two
// transpose flags: 0 = K-major).
#define MGBENCH_WGMMA(kind, tail)                                                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                              \
               "wgmma.mma_async.sync.aligned." kind " " MGBENCH_ACC_LIST                  \
               ", %128, %129, p" tail ";\n}\n"                                            \
               : MGBENCH_ACC32(0), MGBENCH_ACC32(32), MGBENCH_ACC32(64), MGBENCH_ACC32(96) \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))

// Per-type pieces: the element size of A/B, the type of C and the wgmma instruction.
template <DType D>
struct Wgmma {
  using Out = std::conditional_t<D == DType::fp16, __half,
                                 std::conditional_t<D == DType::tf32, float, __nv_bfloat16>>;
  static constexpr int kElemBytes = D == DType::tf32 ? 4 : (D == DType::fp8_e4m3 ? 1 : 2);
  __device__ __forceinline__ static void mma(float (&d)[kAcc], std::uint64_t desc_a,
                                             std::uint64_t desc_b, std::uint32_t scale_d) {
    if constexpr (D == DType::bf16) {
      MGBENCH_WGMMA("m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0");
    } else if constexpr (D == DType::fp16) {
      MGBENCH_WGMMA("m64n256k16.f32.f16.f16", ", 1, 1, 0, 0");
    } else if constexpr (D == DType::tf32) {
      MGBENCH_WGMMA("m64n256k8.f32.tf32.tf32", ", 1, 1");
    } else {
      MGBENCH_WGMMA("m64n256k32.f32.e4m3.e4m3", ", 1, 1");
    }
  }
};

#undef MGBENCH_WGMMA
#undef MGBENCH_ACC_LIST
#undef MGBENCH_ACC32
#undef MGBENCH_ACC8

// ---- the two roles ----

struct Ring {
  std::uint32_t smem;   // first stage, 1024-byte aligned
  std::uint32_t full;   // mbarrier array, 8 bytes each
  std::uint32_t empty;  // mbarrier array
};

// The tiles of this CTA: cluster c walks the cluster tiles (kClusterM tile rows x 1 tile
// column) c, c + clusters, ... in grouped order; its CTA of rank r takes tile row r of each
// (past the last tile row on odd counts: it loads zeros and stores nothing).
struct TileWalk {
  int first, step, count, rank, rows_c, tiles_n;
  __device__ explicit TileWalk(const HopperArgs& args)
      : first(static_cast<int>(cluster_special(1))),
        step(static_cast<int>(cluster_special(2))),
        count(0),
        rank(static_cast<int>(cluster_special(0))),
        rows_c((args.tiles_m + kClusterM - 1) / kClusterM),
        tiles_n(args.tiles_n) {
    count = rows_c * tiles_n;
  }
  __device__ void tile(int index, int& tile_m, int& tile_n) const {
    int row_c = 0;
    grouped_tile(index, rows_c, tiles_n, kGroupM / kClusterM, row_c, tile_n);
    tile_m = row_c * kClusterM + rank;
  }
};

// Producer (one thread): every k-tile of every tile this CTA owns, into the ring.
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        const Ring& ring, const HopperArgs& args,
                                        int k_per_tile) {
  const TileWalk walk(args);
  const auto b_part = static_cast<std::uint32_t>(walk.rank * kBRowsPerCta * kRowBytes);
  int it = 0;
  for (int index = walk.first; index < walk.count; index += walk.step) {
    int tile_m = 0, tile_n = 0;
    walk.tile(index, tile_m, tile_n);
    const int b_row = tile_n * kBlockN + walk.rank * kBRowsPerCta;
    for (int kt = 0; kt < args.k_tiles; ++kt, ++it) {
      const int s = it % kStages;
      const auto phase = static_cast<std::uint32_t>((it / kStages) & 1);
      // Every consumer of the cluster released the stage (first pass: returns at once).
      mbar_wait(ring.empty + 8 * s, phase ^ 1u);
      const std::uint32_t full = ring.full + 8 * s;
      mbar_expect_tx(full, kStageBytes);  // own A, own and the other CTAs' parts of B
      const std::uint32_t stage = ring.smem + static_cast<std::uint32_t>(s * kStageBytes);
      tma_load(stage, map_a, kt * k_per_tile, tile_m * kBlockM, full);
      if constexpr (kClusterM > 1) {
        tma_load_multicast(stage + kATileBytes + b_part, map_b, kt * k_per_tile, b_row, full,
                           static_cast<std::uint16_t>((1u << kClusterM) - 1));
      } else {
        tma_load(stage + kATileBytes, map_b, kt * k_per_tile, b_row, full);
      }
    }
  }
}

// Epilogue of one consumer: accumulator d[4j + 2h + c] of thread t holds row
// 16 * (t / 32) + (t % 32) / 4 + 8h and column 8j + 2 (t % 4) + c of its 64 x 256 block.
template <typename Out>
__device__ __forceinline__ void store_block(const float (&d)[kAcc], const HopperArgs& args,
                                            std::int64_t row0, std::int64_t col0, int t) {
  auto* c = static_cast<Out*>(args.c);
  const std::int64_t row = row0 + 16 * (t / 32) + (t % 32) / 4;
  const std::int64_t col = col0 + 2 * (t % 4);
#pragma unroll
  for (int j = 0; j < kAcc / 4; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      store_pair(c, args.m, args.n, row + 8 * h, col + 8 * j, d[4 * j + 2 * h],
                 d[4 * j + 2 * h + 1], args.pair_store);
    }
  }
}

// Consumer warpgroup `cw`: rows [64 cw, 64 cw + 64) of every tile. The wgmmas of k-tile kt
// stay in flight while those of kt + 1 issue; a stage is released once its wgmmas are done.
template <DType D>
__device__ __forceinline__ void consume(const Ring& ring, const HopperArgs& args, int cw) {
  const int t = static_cast<int>(threadIdx.x) % 128;
  const TileWalk walk(args);
  float d[kAcc];
  int it = 0;
  for (int index = walk.first; index < walk.count; index += walk.step) {
    int tile_m = 0, tile_n = 0;
    walk.tile(index, tile_m, tile_n);
    int prev = -1;
    for (int kt = 0; kt < args.k_tiles; ++kt, ++it) {
      const int s = it % kStages;
      mbar_wait(ring.full + 8 * s, static_cast<std::uint32_t>((it / kStages) & 1));
      const std::uint32_t stage = ring.smem + static_cast<std::uint32_t>(s * kStageBytes);
      const std::uint64_t desc_a =
          smem_desc(stage + static_cast<std::uint32_t>(cw * 64 * kRowBytes));
      const std::uint64_t desc_b = smem_desc(stage + kATileBytes);
      fence_acc(d);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kRowBytes / kStepBytes; ++kk) {
        const auto step = static_cast<std::uint64_t>(kk * kStepBytes / 16);
        Wgmma<D>::mma(d, desc_a + step, desc_b + step, (kt > 0 || kk > 0) ? 1u : 0u);
      }
      wgmma_commit();
      fence_acc(d);
      if (prev >= 0) {
        wgmma_wait<1>();
        if (t % 32 == 0) mbar_arrive_all(ring.empty + 8 * prev);
      }
      prev = s;
    }
    wgmma_wait<0>();
    fence_acc(d);
    if (t % 32 == 0) mbar_arrive_all(ring.empty + 8 * prev);
    store_block<typename Wgmma<D>::Out>(d, args, std::int64_t{tile_m} * kBlockM + 64 * cw,
                                        std::int64_t{tile_n} * kBlockN, t);
  }
}

template <DType D>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_hopper_kernel(const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b, const HopperArgs args) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) std::uint64_t full_bar[kStages];
  __shared__ __align__(8) std::uint64_t empty_bar[kStages];
  const Ring ring{(smem_u32(smem_raw) + 1023u) & ~1023u, smem_u32(full_bar),
                  smem_u32(empty_bar)};
  const int wg = static_cast<int>(threadIdx.x) / 128;
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&map_a))
                 : "memory");
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&map_b))
                 : "memory");
    for (int s = 0; s < kStages; ++s) {
      mbar_init(ring.full + 8 * s, 1);                    // the producer's expect_tx arrival
      mbar_init(ring.empty + 8 * s, 4 * kConsumers * kClusterM);  // per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  cluster_sync();  // the barriers are initialised before any CTA of the cluster signals them
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    if (threadIdx.x == 0) {
      produce(&map_a, &map_b, ring, args, kRowBytes / Wgmma<D>::kElemBytes);
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    consume<D>(ring, args, wg - 1);
  }
  // No CTA leaves while another may still signal its barriers.
  if constexpr (kClusterM > 1) cluster_sync();
}

// ---- host side ----

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion,
                                   CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled from the driver the runtime loaded (no link against libcuda).
EncodeTiledFn encode_tiled() {
  static const EncodeTiledFn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return EncodeTiledFn{nullptr};
    }
    return reinterpret_cast<EncodeTiledFn>(p);
  }();
  return fn;
}

CUtensorMapDataType map_type(DType type) {
  switch (type) {
    case DType::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case DType::fp16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case DType::tf32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;  // raw fp32 bits; wgmma reads tf32
    default: return CU_TENSOR_MAP_DATA_TYPE_UINT8;            // fp8 e4m3
  }
}

// Tensor map of a row-major [rows, k] matrix, boxes of `box_rows` rows x 128 bytes of K.
cudaError_t make_map(CUtensorMap* map, DType type, const void* base, std::int64_t rows,
                     std::int64_t k, int box_rows) {
  const auto elem = static_cast<std::int64_t>(dtype_size(type));
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k * elem)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kRowBytes / elem),
                             static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const EncodeTiledFn encode = encode_tiled();
  if (encode == nullptr) return cudaErrorNotSupported;
  const CUresult res =
      encode(map, map_type(type), 2, const_cast<void*>(base), dims, strides, box, unit,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return res == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

template <DType D>
HopperArgs make_args(std::int64_t m, std::int64_t n, std::int64_t k, void* c) {
  using Out = typename Wgmma<D>::Out;
  HopperArgs args{c, m, n, 0, 0, 0, false};
  args.k_tiles =
      static_cast<int>((k * static_cast<std::int64_t>(dtype_size(D)) + kRowBytes - 1) / kRowBytes);
  args.tiles_m = static_cast<int>((m + kBlockM - 1) / kBlockM);
  args.tiles_n = static_cast<int>((n + kBlockN - 1) / kBlockN);
  args.pair_store = n % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % (2 * sizeof(Out)) == 0;
  return args;
}

// Persistent launch: as many clusters as fit on the GPU at once (one CTA per SM), at most one
// per cluster tile.
template <DType D>
cudaError_t launch(std::int64_t m, std::int64_t n, std::int64_t k, const void* a, const void* b,
                   void* c, cudaStream_t stream) {
  auto* kernel = &gemm_hopper_kernel<D>;
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         kSmemBytes);
  CUtensorMap map_a{}, map_b{};
  if (err == cudaSuccess) err = make_map(&map_a, D, a, m, k, kBlockM);
  if (err == cudaSuccess) err = make_map(&map_b, D, b, n, k, kBRowsPerCta);
  if (err != cudaSuccess) return err;
  const HopperArgs args = make_args<D>(m, n, k, c);

  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kClusterM;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(kClusterM);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  int slots = 0;
  err = cudaOccupancyMaxActiveClusters(&slots, kernel, &config);
  if (err != cudaSuccess) return err;
  if (slots < 1) return cudaErrorInvalidConfiguration;
  const int cluster_tiles = (args.tiles_m + kClusterM - 1) / kClusterM * args.tiles_n;
  const int clusters = cluster_tiles < slots ? cluster_tiles : slots;
  config.gridDim = dim3(static_cast<unsigned>(kClusterM * clusters));
  return cudaLaunchKernelEx(&config, kernel, map_a, map_b, args);
}

// Whether this binary holds the kernel's sm_90a image (asked once, with a compute capability
// 9.0 device current: the answer is the same for every such device).
bool image_present() {
  static const bool present = [] {
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, &gemm_hopper_kernel<DType::bf16>) != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it so the caller's next check is clean
      return false;
    }
    return true;
  }();
  return present;
}

}  // namespace

bool gemm_hopper_fits(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                      const void* b) {
  if (type != DType::bf16 && type != DType::fp16 && type != DType::tf32 &&
      type != DType::fp8_e4m3) {
    return false;
  }
  const auto elem = static_cast<std::int64_t>(dtype_size(type));
  const std::int64_t tiles_m = (m + kBlockM - 1) / kBlockM;
  const std::int64_t tiles_n = (n + kBlockN - 1) / kBlockN;
  // TMA: 16-byte aligned base and row pitch; int32 coordinates; int tile indices.
  return m >= 1 && n >= 1 && k >= 1 && (k * elem) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(a) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(b) % 16 == 0 && m < (std::int64_t{1} << 31) &&
         n < (std::int64_t{1} << 31) && k < (std::int64_t{1} << 31) &&
         tiles_m * tiles_n * kGroupM < (std::int64_t{1} << 31);
}

bool gemm_hopper_available(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  // sm_90a code runs on compute capability 9.0 only.
  return major == 9 && minor == 0 && encode_tiled() != nullptr && image_present();
}

cudaError_t gemm_hopper(DType type, std::int64_t m, std::int64_t n, std::int64_t k,
                        const void* a, const void* b, void* c, cudaStream_t stream) {
  if (c == nullptr || !gemm_hopper_fits(type, m, n, k, a, b)) return cudaErrorInvalidValue;
  switch (type) {
    case DType::bf16: return launch<DType::bf16>(m, n, k, a, b, c, stream);
    case DType::fp16: return launch<DType::fp16>(m, n, k, a, b, c, stream);
    case DType::tf32: return launch<DType::tf32>(m, n, k, a, b, c, stream);
    case DType::fp8_e4m3: return launch<DType::fp8_e4m3>(m, n, k, a, b, c, stream);
    default: break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace mgbench::kernels::detail
