#pragma once
// cuBLASLt helpers shared by the GEMM workloads (gemm, train_step, transformer_step): RAII for
// the cuBLASLt objects, the cudaDataType_t of a kernels::DType and the best-heuristic algorithm
// query.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench {

struct LtDeleter {
  void operator()(cublasLtHandle_t p) const { MGBENCH_CUBLAS_CHECK_NOEXCEPT(cublasLtDestroy(p)); }
  void operator()(cublasLtMatmulDesc_t p) const {
    MGBENCH_CUBLAS_CHECK_NOEXCEPT(cublasLtMatmulDescDestroy(p));
  }
  void operator()(cublasLtMatrixLayout_t p) const {
    MGBENCH_CUBLAS_CHECK_NOEXCEPT(cublasLtMatrixLayoutDestroy(p));
  }
  void operator()(cublasLtMatmulPreference_t p) const {
    MGBENCH_CUBLAS_CHECK_NOEXCEPT(cublasLtMatmulPreferenceDestroy(p));
  }
};
template <typename Handle>
using LtPtr = std::unique_ptr<std::remove_pointer_t<Handle>, LtDeleter>;

inline cudaDataType_t cuda_data_type(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::fp32:
    case kernels::DType::tf32: return CUDA_R_32F;
    case kernels::DType::bf16: return CUDA_R_16BF;
    case kernels::DType::fp16: return CUDA_R_16F;
    case kernels::DType::fp8_e4m3: return CUDA_R_8F_E4M3;
    case kernels::DType::int32: return CUDA_R_32I;
  }
  return CUDA_R_32F;
}

// The first algorithm of cuBLASLt's heuristic for D = alpha op(A) op(B) + beta C with at
// most `max_workspace_bytes` of workspace, for pointers aligned to `min_alignment_bytes` (0:
// cuBLASLt's default, 256). Throws WaivedError(waived_message) when cuBLASLt has none
// (CUBLAS_STATUS_NOT_SUPPORTED or no result), ApiError on other failures.
inline cublasLtMatmulHeuristicResult_t lt_best_heuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    std::uint64_t max_workspace_bytes, const std::string& waived_message,
    std::uint32_t min_alignment_bytes = 0) {
  cublasLtMatmulPreference_t pref = nullptr;
  MGBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  LtPtr<cublasLtMatmulPreference_t> pref_guard(pref);
  MGBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace_bytes,
      sizeof max_workspace_bytes));
  if (min_alignment_bytes != 0) {
    for (const auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                 CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                 CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                 CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      MGBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
          pref, attribute, &min_alignment_bytes, sizeof min_alignment_bytes));
    }
  }
  cublasLtMatmulHeuristicResult_t heuristic{};
  int returned = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, d, pref, 1, &heuristic, &returned);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
      (status == CUBLAS_STATUS_SUCCESS && returned == 0)) {
    throw WaivedError(waived_message);
  }
  MGBENCH_CUBLAS_CHECK(status);
  return heuristic;
}

}  // namespace mgbench::bench
