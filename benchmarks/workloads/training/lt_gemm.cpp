// The cuBLASLt GEMMs and stream events of the training steps (see lt_gemm.hpp).
#include "training/lt_gemm.hpp"

#include <string>

#include "mgbench/core/check.hpp"

namespace mgbench::bench {

namespace {

// A layout of rows x cols (ld) of `type`, strided-batched when batch > 1.
LtPtr<cublasLtMatrixLayout_t> make_layout(cudaDataType_t type, std::int64_t rows,
                                          std::int64_t cols, std::int64_t ld, std::int32_t batch,
                                          std::int64_t stride) {
  cublasLtMatrixLayout_t layout = nullptr;
  MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                                  static_cast<std::uint64_t>(cols), ld));
  LtPtr<cublasLtMatrixLayout_t> owned(layout);
  if (batch > 1) {
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return owned;
}

}  // namespace

Event::Event() { MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }

Event::~Event() {
  if (event_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
}

void stream_wait(cudaStream_t waiter, cudaStream_t producer, const Event& event) {
  MGBENCH_CUDA_CHECK(cudaEventRecord(event.get(), producer));
  MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(waiter, event.get(), 0));
}

LtContext::LtContext(std::size_t workspace_bytes) : workspace_(workspace_bytes) {
  cublasLtHandle_t handle = nullptr;
  MGBENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
  handle_.reset(handle);
}

LtGemm::LtGemm(const LtContext& ctx, const GemmShape& s, const char* what) : ctx_(ctx) {
  cublasLtMatmulDesc_t desc = nullptr;
  MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, s.compute, CUDA_R_32F));
  desc_.reset(desc);
  MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                      &s.trans_a, sizeof s.trans_a));
  MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                      &s.trans_b, sizeof s.trans_b));
  // Stored shapes: op(A) is m x k, so A is k x m when transposed; likewise for B.
  const bool ta = s.trans_a != CUBLAS_OP_N, tb = s.trans_b != CUBLAS_OP_N;
  a_ = make_layout(s.ab_type, ta ? s.k : s.m, ta ? s.m : s.k, s.lda, s.batch, s.stride_a);
  b_ = make_layout(s.ab_type, tb ? s.n : s.k, tb ? s.k : s.n, s.ldb, s.batch, s.stride_b);
  c_ = make_layout(s.c_type, s.m, s.n, s.ldc, s.batch, s.stride_c);
  heuristic_ = lt_best_heuristic(
      ctx.handle(), desc, a_.get(), b_.get(), c_.get(), c_.get(), ctx.workspace_bytes(),
      std::string("cuBLASLt has no algorithm for the ") + what + " GEMM (m=" +
          std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
          (s.batch > 1 ? " batch=" + std::to_string(s.batch) : std::string()) + ") on this GPU",
      s.alignment);
}

void LtGemm::run(const void* a, const void* b, const void* c, void* d, float alpha, float beta,
                 cudaStream_t stream) const {
  MGBENCH_CUBLAS_CHECK(cublasLtMatmul(ctx_.handle(), desc_.get(), &alpha, a, a_.get(), b,
                                      b_.get(), &beta, c, c_.get(), d, c_.get(),
                                      &heuristic_.algo, ctx_.workspace(),
                                      ctx_.workspace_bytes(), stream));
}

}  // namespace mgbench::bench
