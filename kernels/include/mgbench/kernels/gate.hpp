#pragma once
// Start gate and busy-wait kernels (host launchers). The gate kernel spins on a flag in
// host-mapped memory until the host writes the expected generation, so that every rank's
// timed work starts together (as nvbench's blocking kernel does); launch skew and launch
// overhead stay out of the measurement.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mgbench::kernels {

// Waits until *flag >= generation, or until timeout_ns passes (then sets *timed_out = 1).
// `flag` is a device-visible pointer to host-mapped memory; `timed_out` is device memory
// or host-mapped memory.
cudaError_t launch_start_gate(const volatile int* flag, int generation, std::uint64_t timeout_ns,
                              int* timed_out, cudaStream_t stream);

// Spins for `ns` nanoseconds of GPU time (%globaltimer); one thread.
cudaError_t launch_busy_wait(std::uint64_t ns, cudaStream_t stream);

}  // namespace mgbench::kernels
