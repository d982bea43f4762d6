// Tiled SIMT fp32 GEMM: C[M,N] = A[M,K] * B[N,K]^T, all row-major (see gemm.hpp). The kernel
// is a template over its tiling (gemm_simt_tile.cuh); this file picks the configuration.
//
// Block tile 128 x 128 x 16, 256 threads = 8 warps as 4 (M) x 2 (N), warp tile 32 x 64, lanes
// 4 x 8, 8 x 8 outputs per thread as 2 x 2 sub-tiles of 4 x 4; both operands k-major in
// shared memory, staged through registers into two buffers, one chunk of 8 k in flight;
// two blocks per SM (128 registers); tiles walked in groups of 8 tile rows.
#include "gemm_simt_tile.cuh"
#include "mgbench/kernels/gemm.hpp"

namespace mgbench::kernels::detail {

namespace {

using SimtTiling = simt::Tiling</*BM, BN, BK*/ 128, 128, 16, /*TM, TN*/ 8, 8, /*LY, LX*/ 4, 8,
                                /*blocks per SM*/ 2, /*stages*/ 2>;

}  // namespace

cudaError_t gemm_simt_fp32(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                           const float* b, float* c, bool aligned, cudaStream_t stream) {
  if (m < 1 || n < 1 || k < 1 || a == nullptr || b == nullptr || c == nullptr) {
    return cudaErrorInvalidValue;
  }
  return simt::launch<SimtTiling>(m, n, k, a, b, c, aligned, stream);
}

}  // namespace mgbench::kernels::detail
