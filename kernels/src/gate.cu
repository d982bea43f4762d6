#include "mgbench/kernels/gate.hpp"

namespace mgbench::kernels {
namespace {

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void start_gate_kernel(const volatile int* flag, int generation,
                                  std::uint64_t timeout_ns, int* timed_out) {
  const std::uint64_t start = global_timer_ns();
  while (*flag < generation) {
    if (global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      break;
    }
#if __CUDA_ARCH__ >= 700
    __nanosleep(200);
#endif
  }
  __threadfence_system();
}

__global__ void busy_wait_kernel(std::uint64_t ns) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

}  // namespace

cudaError_t launch_start_gate(const volatile int* flag, int generation, std::uint64_t timeout_ns,
                              int* timed_out, cudaStream_t stream) {
  start_gate_kernel<<<1, 1, 0, stream>>>(flag, generation, timeout_ns, timed_out);
  return cudaGetLastError();
}

cudaError_t launch_busy_wait(std::uint64_t ns, cudaStream_t stream) {
  busy_wait_kernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

}  // namespace mgbench::kernels
