#pragma once
// The transformer step's verification (internal to transformer_step.cpp), each part collective:
//  - agreement: ddp replicas hold bitwise-identical fp32 master weights; tensor-parallel ranks
//    hold identical replicated norm weights, and ranks of the same tensor-parallel rank (tp_dp's
//    replicas) identical slices; fsdp ranks gather the same whole model from their shards; no
//    master weight is NaN or infinite;
//  - communication: the bytes the last step handed to NCCL, per kind, equal comm_volume();
//  - gradients: one step of the tiny model (tiny_config) on every rank; the whole model's
//    weights and gradients assembled from the ranks (shards, tensor-parallel slices) match the
//    FP64 reference summed over the data-parallel groups' micro-batches (times accum: every
//    micro-step sees the same micro-batch), tensor by tensor, within gradient_tolerance().
#include <string>

#include "mgbench/bench/executor.hpp"
#include "training/transformer_model.hpp"
#include "training/transformer_reference.hpp"

namespace mgbench::bench::transformer {

struct CheckResult {
  bool ok = true;
  std::string message;  // why not (empty when ok)
};

CheckResult check_agreement(const RankEnv& env, Replica& replica, Verification& v);
CheckResult check_comm_volume(const CommVolume& counted, const StepConfig& cfg, Verification& v);
CheckResult check_gradients(const RankEnv& env, Replica& tiny, Verification& v);

}  // namespace mgbench::bench::transformer
