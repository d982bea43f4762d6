#pragma once
// The gradient all-reduce of the training step (train_step.cpp): the in-place fp32 sum over
// the ranks of one bucket, through NCCL or through the project's own peer all-reduce.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/peer_allreduce.hpp"

namespace mgbench::bench::train {

class GradReducer {
 public:
  virtual ~GradReducer() = default;
  // Enqueues the in-place fp32 sum over ranks of data[0..count) on `stream`.
  virtual void allreduce(float* data, std::size_t count, cudaStream_t stream) = 0;
};

// Waits until a call on a non-blocking communicator has been enqueued on its stream (NCCL may
// return ncclInProgress before the work is on the stream; events recorded after the call
// must come after it).
void nccl_wait_enqueued(ncclComm_t comm, double timeout_s);

class NcclReducer final : public GradReducer {
 public:
  NcclReducer(ncclComm_t comm, double timeout_s);
  void allreduce(float* data, std::size_t count, cudaStream_t stream) override;

 private:
  ncclComm_t comm_;
  double timeout_s_;
};

class PeerReducer final : public GradReducer {
 public:
  PeerReducer(RankEnv& env, std::size_t max_bytes) : peer_(env, max_bytes) {}
  void allreduce(float* data, std::size_t count, cudaStream_t stream) override;

 private:
  PeerAllreduce peer_;
};

}  // namespace mgbench::bench::train
