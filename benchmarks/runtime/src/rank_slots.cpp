// The slots of the ranks a process runs (see rank_slots.hpp).
#include "mgbench/bench/rank_slots.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace mgbench::bench {

std::size_t ranks_in_process(const GroupContext& ctx) {
  return ctx.processes != nullptr ? 1 : static_cast<std::size_t>(ctx.spec.ranks());
}

RankSlot RankSlot::of(int rank, int nranks, const ProcessGroup* processes) {
  if (rank < 0 || rank >= nranks) {
    throw std::logic_error(fmt::format("rank {} is not a rank of a group of {}", rank, nranks));
  }
  if (processes == nullptr) return RankSlot(static_cast<std::size_t>(rank));
  if (rank != processes->rank()) {
    throw std::logic_error(
        fmt::format("rank {} does not run in the process of rank {}", rank, processes->rank()));
  }
  return RankSlot(0);
}

}  // namespace mgbench::bench
