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
// Precisions:
//   bf16 / fp16: inputs and output in the 16-bit type, fp32 accumulation on tensor cores
//                (mma.sync m16n8k16, ldmatrix, cp.async multi-stage pipeline, 128x128 block
//                tile, 8 warps of 64x32). The output is rounded to nearest.
//   tf32:        fp32 inputs rounded to tf32 (cvt.rna) in registers, mma.sync m16n8k8,
//                fp32 accumulation and output; same tiling as bf16.
//   fp32:        tiled SIMT kernel (128x128x8 block tile, 8x8 outputs per thread), fp32 FMA.
// Any M, N, K >= 1 works. The asynchronous 16-byte copy path needs K to be a multiple of
// 16 bytes' worth of elements and 16-byte aligned A/B; otherwise a slower path with
// per-element predicated loads is used (same results). Compiled for sm_80 and newer.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels {

// Enqueues C = A * B^T on `stream` for type fp32, tf32, fp16 or bf16 (A, B and C are stored
// in dtype_size(type) bytes per element; tf32 data is stored as fp32). Returns
// cudaErrorInvalidValue for another type, m, n or k < 1 or null pointers, otherwise the
// launch status. No host synchronisation.
cudaError_t gemm(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                 const void* b, void* c, cudaStream_t stream);

// The individual kernels (gemm() picks one); exposed for tests and micro-benchmarks.
namespace detail {
// bf16/fp16/tf32 on tensor cores; `aligned` selects the cp.async path (caller checked it).
cudaError_t gemm_tensor_core(DType type, std::int64_t m, std::int64_t n, std::int64_t k,
                             const void* a, const void* b, void* c, bool aligned,
                             cudaStream_t stream);
cudaError_t gemm_simt_fp32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                           const float* b, float* c, bool aligned, cudaStream_t stream);
// Whether the 16-byte vector path applies (K multiple of 16 bytes of elements, A/B aligned).
bool gemm_vector_path(DType type, std::int64_t k, const void* a, const void* b);
}  // namespace detail

}  // namespace mgbench::kernels
