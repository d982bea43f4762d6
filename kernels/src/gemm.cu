// Dispatch of the own GEMM to the Hopper, mma.sync or SIMT kernel (see gemm.hpp).
#include "mgbench/kernels/gemm.hpp"

#include <cstdint>

namespace mgbench::kernels {

namespace detail {

bool gemm_vector_path(DType type, std::int64_t k, const void* a, const void* b) {
  const auto per_vector = static_cast<std::int64_t>(16 / dtype_size(type));
  return k % per_vector == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
}

int current_device_cc() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return major * 10 + minor;
}

}  // namespace detail

GemmKernel gemm_select(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                       const void* b) {
  if (type == DType::fp32) return GemmKernel::simt_fp32;
  int device = 0;
  if (detail::gemm_hopper_fits(type, m, n, k, a, b) && cudaGetDevice(&device) == cudaSuccess &&
      detail::gemm_hopper_available(device)) {
    return GemmKernel::sm90a_wgmma;
  }
  cudaGetLastError();
  return GemmKernel::mma_sync;
}

cudaError_t gemm(DType type, std::int64_t m, std::int64_t n, std::int64_t k, const void* a,
                 const void* b, void* c, cudaStream_t stream) {
  if (m < 1 || n < 1 || k < 1 || a == nullptr || b == nullptr || c == nullptr) {
    return cudaErrorInvalidValue;
  }
  switch (gemm_select(type, m, n, k, a, b)) {
    case GemmKernel::simt_fp32:
      return detail::gemm_simt_fp32(m, n, k, static_cast<const float*>(a),
                                    static_cast<const float*>(b), static_cast<float*>(c),
                                    detail::gemm_vector_path(type, k, a, b), stream);
    case GemmKernel::sm90a_wgmma: return detail::gemm_hopper(type, m, n, k, a, b, c, stream);
    case GemmKernel::mma_sync: break;
  }
  return detail::gemm_tensor_core(type, m, n, k, a, b, c,
                                  detail::gemm_vector_path(type, k, a, b), stream);
}

}  // namespace mgbench::kernels
