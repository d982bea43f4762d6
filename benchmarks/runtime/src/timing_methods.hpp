#pragma once
// Executor internals for the timing methods and cache modes (mgbench/model/measurement.hpp):
// the CUDA graph of one sample's ops, the second method a point may be timed with, and what
// the device can do (for the impossible-value flags).
#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "group_shared.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/point_quality.hpp"

namespace mgbench::bench {

// `reps` calls of enqueue captured once (thread-local capture mode, so other rank threads
// keep working) into an instantiated graph; launch() enqueues all of them at once.
class CapturedOps {
 public:
  CapturedOps(cudaStream_t stream, const std::function<void()>& enqueue, int reps);
  ~CapturedOps();
  CapturedOps(const CapturedOps&) = delete;
  CapturedOps& operator=(const CapturedOps&) = delete;
  void launch(cudaStream_t stream) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// The method a point is also timed with when the workload asks for both: host for device,
// device for host and graph.
TimingMethod other_method(TimingMethod method);

// Median over `samples` of the slowest rank's seconds per op with `method` (collective: every
// rank calls it with the same arguments). graph captures the reps once.
double time_with_method(GroupShared& shared, int rank, const std::function<void()>& enqueue,
                        int reps, TimingMethod method, int samples);

// Bus width x memory clock, name, compute capability and links (PCIe, NVLink: NVML) of
// `device`.
HardwareLimits device_limits(int device);
// The limits a group's points are checked against: its first device's, with distinct_gpus
// false when ranks share a GPU.
HardwareLimits group_limits(const std::vector<int>& devices);

}  // namespace mgbench::bench
