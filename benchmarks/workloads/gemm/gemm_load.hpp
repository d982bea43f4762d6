#pragma once
// A sustained GEMM load (cuBLASLt bf16, n x n, back to back) on a set of GPUs: what `mgbench
// doctor` runs to read PCIe links and clock-event reasons under load. The composition root hands
// it to the doctor as its DeviceLoadFn.
#include <functional>
#include <vector>

namespace mgbench::bench {

// Runs for `seconds` on every device; `tick(elapsed_s)` is called about every `tick_s`.
// Throws ApiError on CUDA / cuBLAS failures.
void run_gemm_load(const std::vector<int>& devices, double seconds,
                   const std::function<void(double)>& tick, double tick_s = 0.2);

}  // namespace mgbench::bench
