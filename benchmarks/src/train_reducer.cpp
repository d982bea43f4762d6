// The training step's gradient all-reduce (see train_reducer.hpp).
#include "mgbench/bench/train_reducer.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench::train {

void nccl_wait_enqueued(ncclComm_t comm, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(std::max(timeout_s, 1.0));
  ncclResult_t state = ncclInProgress;
  while (true) {
    MGBENCH_NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
    if (state != ncclInProgress) break;
    if (std::chrono::steady_clock::now() > deadline) {
      throw EnvironmentError("an NCCL call was still in progress after the group timeout");
    }
    std::this_thread::yield();
  }
  MGBENCH_NCCL_CHECK(state);
}

NcclReducer::NcclReducer(ncclComm_t comm, double timeout_s) : comm_(comm), timeout_s_(timeout_s) {
  if (comm_ == nullptr) throw EnvironmentError("train_step: no NCCL communicator for this rank");
}

void NcclReducer::allreduce(float* data, std::size_t count, cudaStream_t stream) {
  MGBENCH_NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat32, ncclSum, comm_, stream));
  nccl_wait_enqueued(comm_, timeout_s_);
}

void PeerReducer::allreduce(float* data, std::size_t count, cudaStream_t stream) {
  peer_.run(data, data, count, kernels::DType::fp32, stream);
}

}  // namespace mgbench::bench::train
