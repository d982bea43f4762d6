#pragma once
// The project's own GEMM: fixed code, independent of cuBLAS, so that a regression between
// two runs of it points at the driver/hardware rather than at a library update.
//
// Layout convention ("TN", the cuBLASLt fast path), all dense and row-major:
//   A[M, K]  (row i of A is contiguous, lda = K)
//   B[N, K]  (B is given transposed: row j holds column j of the math B, ldb = K)
//   C[M, N]  (ldc = N)
//   C = A * B^T, i.e. C[i][j] = sum_k A[i][k] * B[j][k], with beta = 0.
//
// Kernels (gemm() picks one per call, see gemm_select):
//   sm90a_wgmma   bf16, fp16, tf32, fp8 on compute capability 9.0 when the binary holds
//                 sm_90a code: persistent, warp-specialised (one TMA producer warpgroup, two
//                 wgmma consumer warpgroups), 128 x 256 CTA tile, 4-stage mbarrier ring of
//                 128-byte-swizzled TMA tiles, grouped tile order. Needs K * element size a
//                 multiple of 16 bytes and 16-byte aligned A/B (TMA), any M, N.
//   mma_sync      bf16, fp16, tf32 (sm_80+), fp8 (sm_89+): mma.sync, ldmatrix, cp.async
//                 multi-stage pipeline, 128 x 128 block tile, 8 warps of 64 x 32. Any shape;
//                 K not a multiple of 16 bytes of elements or misaligned A/B take a slower
//                 per-element load path with the same results.
//   simt_fp32     fp32: SIMT FMA, 128 x 256 x 32 block tile, 8 warps of 32 x 128, 8 x 16
//                 outputs per thread, register-staged double buffer. Any shape; K % 4 != 0
//                 or misaligned A/B take a per-element load path with the same results.
// Accumulation is fp32 throughout. Outputs: bf16/fp16 in the input type, tf32 and fp32 in
// fp32, fp8 (e4m3 inputs) in bf16, rounded to nearest. tf32 inputs are fp32 in memory: the
// mma_sync kernel rounds them (cvt.rna), wgmma uses their top 19 bits.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels {

// The own kernels and their identity, recorded with every point. A kernel's version changes
// whenever its code changes: two runs whose own-kernel versions differ cannot tell a driver
// change from a kernel change.
enum class GemmKernel { sm90a_wgmma, mma_sync, simt_fp32 };

struct GemmKernelInfo {
  GemmKernel kernel;
  const char* name;
  int version;
  const char* archs;   // compute capabilities it runs on
  const char* dtypes;  // input types it serves
};

inline constexpr GemmKernelInfo kGemmKernels[] = {
    {GemmKernel::sm90a_wgmma, "sm90a_wgmma", 1, "9.0 (sm_90a code)", "bf16, fp16, tf32, fp8"},
    {GemmKernel::mma_sync, "mma_sync", 2, ">= 8.0 (fp8: >= 8.9)", "bf16, fp16, tf32, fp8"},
    {GemmKernel::simt_fp32, "simt_fp32", 2, ">= 8.0", "fp32"},
};

constexpr const GemmKernelInfo& gemm_kernel_info(GemmKernel kernel) {
  return kGemmKernels[static_cast<int>(kernel)];
}

// The kernel gemm() runs for these arguments on the current device: sm90a_wgmma where it is
// available and fits, else mma_sync; fp32 always simt_fp32.
GemmKernel gemm_select(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                       const void* b);

// Enqueues C = A * B^T on `stream` for type fp32, tf32, fp16, bf16 or fp8_e4m3 (A and B are
// stored in dtype_size(type) bytes per element, tf32 as fp32; C as described above). Returns
// cudaErrorInvalidValue for another type, m, n or k < 1 or null pointers,
// cudaErrorNotSupported for fp8 below compute capability 8.9, otherwise the launch status.
// No host synchronisation.
cudaError_t gemm(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                 const void* b, void* c, cudaStream_t stream);

// The individual kernels (gemm() picks one); exposed for tests and micro-benchmarks.
namespace detail {
// bf16/fp16/tf32/fp8 with mma.sync; `aligned` selects the cp.async path (caller checked it).
cudaError_t gemm_tensor_core(DType type, std::int64_t m, std::int64_t n, std::int64_t k,
                             const void* a, const void* b, void* c, bool aligned,
                             cudaStream_t stream);
cudaError_t gemm_simt_fp32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                           const float* b, float* c, bool aligned, cudaStream_t stream);
// sm_90a kernel (TMA + wgmma) for bf16, fp16, tf32 and fp8 e4m3. `fits`: the shape and
// pointers suit its TMA loads (K * element size a multiple of 16 bytes, A and B 16-byte
// aligned); `available`: `device` has compute capability 9.0 and this binary holds the
// kernel's sm_90a code. gemm_hopper() itself checks `fits` only.
bool gemm_hopper_fits(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                      const void* b);
bool gemm_hopper_available(int device);
cudaError_t gemm_hopper(DType type, std::int64_t m, std::int64_t n, std::int64_t k,
                        const void* a, const void* b, void* c, cudaStream_t stream);
// Compute capability of the current device as 10 * major + minor (0 when unknown).
int current_device_cc();
// Whether the 16-byte vector path applies (K multiple of 16 bytes of elements, A/B aligned).
bool gemm_vector_path(DType type, std::int64_t k, const void* a, const void* b);
}  // namespace detail

}  // namespace mgbench::kernels
