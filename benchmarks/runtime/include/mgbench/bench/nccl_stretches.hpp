#pragma once
// The stretches of a group's points that share NCCL communicators: NCCL reads variables such as
// NCCL_ALGO and NCCL_PROTO when a communicator is created, so points that ask for different
// values cannot share one (RunnerOptions::nccl_env). Host-only.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/group.hpp"

namespace mgbench::bench {

using NcclVariables = std::vector<std::pair<std::string, std::string>>;
using NcclEnvFn = std::function<NcclVariables(const Params&)>;

// Points [begin, end) of a group, whose communicators are created with `variables` set.
struct NcclStretch {
  std::size_t begin = 0, end = 0;
  NcclVariables variables;
};

// Consecutive points (rounds included) with equal variables form one stretch, in order; without
// `env` the whole group is one stretch with none. A group without points has no stretch.
std::vector<NcclStretch> nccl_stretches(const GroupSpec& spec, const NcclEnvFn& env);

}  // namespace mgbench::bench
