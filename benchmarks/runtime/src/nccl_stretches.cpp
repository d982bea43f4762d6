// The stretches of a group's points that share NCCL communicators (see nccl_stretches.hpp).
#include "mgbench/bench/nccl_stretches.hpp"

namespace mgbench::bench {

std::vector<NcclStretch> nccl_stretches(const GroupSpec& spec, const NcclEnvFn& env) {
  const std::size_t count = spec.point_count();
  if (count == 0) return {};
  if (!env) return {NcclStretch{0, count, {}}};
  std::vector<NcclStretch> out;
  for (std::size_t k = 0; k < count; ++k) {
    NcclVariables variables = env(spec.point_at(k).params);
    if (out.empty() || out.back().variables != variables) {
      out.push_back(NcclStretch{k, k, std::move(variables)});
    }
    out.back().end = k + 1;
  }
  return out;
}

}  // namespace mgbench::bench
