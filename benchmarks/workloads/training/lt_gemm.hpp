#pragma once
// The cuBLASLt GEMMs of the training steps (train_step, transformer_step): a rank's handle and
// workspace, a GEMM described once in column-major terms (optionally strided-batched) and planned
// once, then enqueued many times; and the CUDA events that order a rank's streams.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "mgbench/bench/cublaslt.hpp"
#include "mgbench/bench/device_buffer.hpp"

namespace mgbench::bench {

// A CUDA event without timing (ordering between streams).
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// `waiter` waits for everything enqueued on `producer` so far.
void stream_wait(cudaStream_t waiter, cudaStream_t producer, const Event& event);

// The handle and the workspace shared by every GEMM of a rank (all on the timed stream).
class LtContext {
 public:
  explicit LtContext(std::size_t workspace_bytes);
  cublasLtHandle_t handle() const { return handle_.get(); }
  void* workspace() const { return workspace_.get(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  DeviceBuffer workspace_;
  LtPtr<cublasLtHandle_t> handle_;
};

// Column-major description of one GEMM: D[m,n] = alpha op(A) op(B) + beta C, with C and D of
// one layout; `batch` > 1 makes it strided-batched (entry i at A + i stride_a, ...; elements).
// Every pointer handed to it, and every stride in bytes, must be a multiple of `alignment`
// bytes: cuBLASLt picks its algorithm for that alignment.
struct GemmShape {
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  cudaDataType_t ab_type = CUDA_R_32F, c_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  std::int32_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  std::uint32_t alignment = 256;
};

// One cuBLASLt matmul, planned once (heuristic) and enqueued many times.
class LtGemm {
 public:
  LtGemm(const LtContext& ctx, const GemmShape& s, const char* what);
  // D = C = op(A) op(B) + beta C.
  void run(const void* a, const void* b, void* c, float beta, cudaStream_t stream) const {
    run(a, b, c, c, 1.0f, beta, stream);
  }
  // D = alpha op(A) op(B) + beta C (C is not read when beta is 0).
  void run(const void* a, const void* b, const void* c, void* d, float alpha, float beta,
           cudaStream_t stream) const;

 private:
  const LtContext& ctx_;
  LtPtr<cublasLtMatmulDesc_t> desc_;
  LtPtr<cublasLtMatrixLayout_t> a_, b_, c_;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace mgbench::bench
