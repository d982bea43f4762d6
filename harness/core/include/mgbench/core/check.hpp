#pragma once
// MGBENCH_CUDA_CHECK / _CUBLAS_ / _NCCL_ throw mgbench::ApiError (OutOfMemoryError for
// allocation failures) carrying host, rank, expression and code. The _NOEXCEPT variants log
// instead and are for destructors only. Include after the library's own header.
#include "mgbench/core/error.hpp"

#define MGBENCH_CUDA_CHECK(expr)                                                                \
  do {                                                                                          \
    const cudaError_t mgbench_err_ = (expr);                                                    \
    if (mgbench_err_ != cudaSuccess) {                                                          \
      (void)cudaGetLastError();                                                                 \
      ::mgbench::throw_api_error("CUDA", static_cast<int>(mgbench_err_),                        \
                                 cudaGetErrorName(mgbench_err_),                                \
                                 cudaGetErrorString(mgbench_err_), #expr, __FILE__, __LINE__,   \
                                 mgbench_err_ == cudaErrorMemoryAllocation);                    \
    }                                                                                           \
  } while (0)

#define MGBENCH_CUDA_CHECK_NOEXCEPT(expr)                                                       \
  do {                                                                                          \
    const cudaError_t mgbench_err_ = (expr);                                                    \
    if (mgbench_err_ != cudaSuccess) {                                                          \
      ::mgbench::report_api_error_noexcept("CUDA", static_cast<int>(mgbench_err_),              \
                                           cudaGetErrorName(mgbench_err_),                      \
                                           cudaGetErrorString(mgbench_err_), #expr, __FILE__,   \
                                           __LINE__);                                           \
    }                                                                                           \
  } while (0)

// Checks the launch of the kernel just enqueued.
#define MGBENCH_CUDA_CHECK_LAUNCH() MGBENCH_CUDA_CHECK(cudaGetLastError())

#define MGBENCH_CUBLAS_CHECK(expr)                                                              \
  do {                                                                                          \
    const cublasStatus_t mgbench_st_ = (expr);                                                  \
    if (mgbench_st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      ::mgbench::throw_api_error("cuBLAS", static_cast<int>(mgbench_st_),                       \
                                 cublasGetStatusName(mgbench_st_),                              \
                                 cublasGetStatusString(mgbench_st_), #expr, __FILE__, __LINE__, \
                                 mgbench_st_ == CUBLAS_STATUS_ALLOC_FAILED);                    \
    }                                                                                           \
  } while (0)

#define MGBENCH_CUBLAS_CHECK_NOEXCEPT(expr)                                                     \
  do {                                                                                          \
    const cublasStatus_t mgbench_st_ = (expr);                                                  \
    if (mgbench_st_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      ::mgbench::report_api_error_noexcept("cuBLAS", static_cast<int>(mgbench_st_),             \
                                           cublasGetStatusName(mgbench_st_),                    \
                                           cublasGetStatusString(mgbench_st_), #expr, __FILE__, \
                                           __LINE__);                                           \
    }                                                                                           \
  } while (0)

#define MGBENCH_NCCL_CHECK(expr)                                                                \
  do {                                                                                          \
    const ncclResult_t mgbench_nr_ = (expr);                                                    \
    if (mgbench_nr_ != ncclSuccess && mgbench_nr_ != ncclInProgress) {                          \
      ::mgbench::throw_api_error("NCCL", static_cast<int>(mgbench_nr_), "ncclResult_t",         \
                                 ncclGetErrorString(mgbench_nr_), #expr, __FILE__, __LINE__,    \
                                 false);                                                        \
    }                                                                                           \
  } while (0)

#define MGBENCH_NCCL_CHECK_NOEXCEPT(expr)                                                       \
  do {                                                                                          \
    const ncclResult_t mgbench_nr_ = (expr);                                                    \
    if (mgbench_nr_ != ncclSuccess && mgbench_nr_ != ncclInProgress) {                          \
      ::mgbench::report_api_error_noexcept("NCCL", static_cast<int>(mgbench_nr_),               \
                                           "ncclResult_t", ncclGetErrorString(mgbench_nr_),     \
                                           #expr, __FILE__, __LINE__);                          \
    }                                                                                           \
  } while (0)
