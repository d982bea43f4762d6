// The training step's gradient all-reduce (see train_reducer.hpp).
#include "training/train_reducer.hpp"

#include "mgbench/core/error.hpp"

namespace mgbench::bench::train {

NcclReducer::NcclReducer(ncclComm_t comm) : comm_(comm) {
  if (comm_ == nullptr) throw EnvironmentError("train_step: no NCCL communicator for this rank");
  owner_ = NcclComms::owner_of(comm_, &owner_rank_);
}

void NcclReducer::allreduce(float* data, std::size_t count, cudaStream_t stream) {
  if (owner_ != nullptr) {
    owner_->allreduce(owner_rank_, data, data, count, ncclFloat32, stream);
  } else {
    nccl_allreduce(comm_, data, data, count, ncclFloat32, stream);
  }
}

void PeerReducer::allreduce(float* data, std::size_t count, cudaStream_t stream) {
  peer_.run(data, data, count, kernels::DType::fp32, stream);
}

}  // namespace mgbench::bench::train
