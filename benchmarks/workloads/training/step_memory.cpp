// What the training-step workloads share around their replicas (see step_memory.hpp).
#include "training/step_memory.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench {

std::size_t device_used_bytes() {
  std::size_t free_b = 0, total_b = 0;
  MGBENCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return total_b - free_b;
}

StepMemory::StepMemory(int device) {
  MGBENCH_CUDA_CHECK(cudaSetDevice(device));
  before_ = device_used_bytes();
}

void StepMemory::warm(const std::function<void()>& collectives) {
  const std::size_t before = device_used_bytes();
  collectives();
  const std::size_t after = device_used_bytes();
  lazy_ = after > before ? after - before : 0;
  note();
  after_setup_ = device_used_bytes();
}

void StepMemory::first_ops() {
  if (++calls_ != 2) return;
  const std::size_t used = device_used_bytes();
  lazy_ += used > after_setup_ ? used - after_setup_ : 0;
}

void StepMemory::note() {
  const std::size_t used = device_used_bytes();
  const std::size_t base = before_ + lazy_;
  if (used > base) peak_ = std::max(peak_, used - base);
}

std::uint64_t StepMemory::peak_bytes(std::uint64_t allocated) const {
  return std::max<std::uint64_t>(peak_, allocated);
}

void meet_after_setup(const RankEnv& env, std::exception_ptr error) {
  const auto failed = env.all_gather_ptr(error ? reinterpret_cast<void*>(1) : nullptr);
  if (error) std::rethrow_exception(error);
  for (void* f : failed) {
    if (f != nullptr) throw WaivedError("another rank failed during set-up");
  }
}

}  // namespace mgbench::bench
