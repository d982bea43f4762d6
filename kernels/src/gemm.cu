// Dispatch of the own GEMM to the tensor-core or SIMT kernel (see gemm.hpp).
#include "mgbench/kernels/gemm.hpp"

#include <cstdint>

namespace mgbench::kernels {

namespace detail {

bool gemm_vector_path(DType type, std::int64_t k, const void* a, const void* b) {
  const auto per_vector = static_cast<std::int64_t>(16 / dtype_size(type));
  return k % per_vector == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
}

}  // namespace detail

cudaError_t gemm(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                 const void* b, void* c, cudaStream_t stream) {
  if (m < 1 || n < 1 || k < 1 || a == nullptr || b == nullptr || c == nullptr) {
    return cudaErrorInvalidValue;
  }
  const bool aligned = detail::gemm_vector_path(type, k, a, b);
  if (type == DType::fp32) {
    return detail::gemm_simt_fp32(m, n, k, static_cast<const float*>(a),
                                  static_cast<const float*>(b), static_cast<float*>(c), aligned,
                                  stream);
  }
  return detail::gemm_tensor_core(type, m, n, k, a, b, c, aligned, stream);
}

}  // namespace mgbench::kernels
