#pragma once
// The gradient all-reduce of the training step (train_step.cpp): the in-place fp32 sum over
// the ranks of one bucket, through NCCL or through the project's own peer all-reduce.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "collectives/peer_allreduce.hpp"

namespace mgbench::bench::train {

class GradReducer {
 public:
  virtual ~GradReducer() = default;
  // Enqueues the in-place fp32 sum over ranks of data[0..count) on `stream`.
  virtual void allreduce(float* data, std::size_t count, cudaStream_t stream) = 0;
};

// Through the communicators' locked call path (NcclComms::allreduce): once another thread
// has aborted them, allreduce() throws EnvironmentError instead of touching a freed
// communicator. Each call returns once the op is on the stream (NCCL may return
// ncclInProgress before; events recorded after the call must come after it).
class NcclReducer final : public GradReducer {
 public:
  explicit NcclReducer(ncclComm_t comm);
  void allreduce(float* data, std::size_t count, cudaStream_t stream) override;

 private:
  ncclComm_t comm_;
  NcclComms* owner_ = nullptr;  // the communicators that own comm_ (nullptr: none)
  int owner_rank_ = 0;
};

class PeerReducer final : public GradReducer {
 public:
  // `max_blocks` bounds the all-reduce's grid: it overlaps with the backward GEMMs, which
  // need the SMs more than a bandwidth-bound copy does.
  PeerReducer(RankEnv& env, std::size_t max_bytes, int max_blocks)
      : peer_(env, max_bytes, max_blocks) {}
  void allreduce(float* data, std::size_t count, cudaStream_t stream) override;

 private:
  PeerAllreduce peer_;
};

}  // namespace mgbench::bench::train
