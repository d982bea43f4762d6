#pragma once
// The collectives of one rank of the transformer step (transformer_step.cpp), with the bytes it
// hands to NCCL counted per kind (the verification compares them with comm_volume()).
//
// Communicators: ddp and fsdp use the group's communicator for data parallelism, tp uses it for
// tensor parallelism. tp_dp splits it (ncclCommSplit, blocking, once per point) into the
// tensor-parallel groups (consecutive ranks: rank / tp) and the data-parallel groups (ranks of
// the same tensor-parallel rank: rank % tp). Every call on the group's communicator goes through
// its locked call path (nccl_call, nccl_allreduce); calls on a split communicator hold this
// class's lock for it, and a monitor thread aborts the split communicators as soon as the
// group's watchdog has aborted the group's, so that a hung TP or DP collective returns too.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "mgbench/bench/executor.hpp"
#include "training/transformer_math.hpp"

namespace mgbench::bench::transformer {

class StepComms {
 public:
  // Collective over the group's ranks (tp_dp: every rank splits the group's communicator).
  StepComms(const RankEnv& env, const StepConfig& cfg);
  ~StepComms();
  StepComms(const StepComms&) = delete;
  StepComms& operator=(const StepComms&) = delete;

  int tp_rank() const { return tp_rank_; }
  int dp_rank() const { return dp_rank_; }

  // Sum over the tensor-parallel group, in place (16-bit activations or their gradients).
  void tp_allreduce(void* data, std::size_t count, DType dtype, cudaStream_t stream);
  // Sum over the data-parallel group, in place (fp32 gradients).
  void dp_allreduce(float* data, std::size_t count, cudaStream_t stream);
  // FSDP over the data-parallel group: `full` = every rank's `shard` in rank order (16-bit).
  void all_gather(const void* shard, void* full, std::size_t shard_count, DType dtype,
                  cudaStream_t stream);
  // FSDP: this rank's shard of the sum of every rank's `full` (fp32).
  void reduce_scatter(const float* full, float* shard, std::size_t shard_count,
                      cudaStream_t stream);

  // Bytes handed to NCCL since the last reset, per kind (see CommVolume).
  const CommVolume& counted() const { return counted_; }
  void reset_count() { counted_ = CommVolume{}; }

 private:
  struct Split;  // a split communicator, its lock and its abort state
  void issue(Split* split, ncclComm_t group_comm,
             const std::function<ncclResult_t(ncclComm_t)>& fn, const char* what);
  void split(const RankEnv& env, const StepConfig& cfg);  // under the group's watchdog
  void split_both(const RankEnv& env, const StepConfig& cfg, double timeout_s);
  void monitor();

  ncclComm_t group_comm_ = nullptr;
  std::unique_ptr<Split> tp_, dp_;  // tp_dp only
  int tp_rank_ = 0, dp_rank_ = 0, dp_size_ = 1;
  CommVolume counted_;
  std::atomic<bool> stop_{false};
  std::thread monitor_;
};

}  // namespace mgbench::bench::transformer
