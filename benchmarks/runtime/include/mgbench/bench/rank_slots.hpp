#pragma once
// State a workload keeps per rank for a whole group, in the process that runs the rank (e.g. the
// own all-reduce's buffers, which outlive a point). A group numbers its ranks in two ways: the
// group rank (0..nranks-1 over every node: RankEnv::rank) and, with a process per GPU, the local
// rank on its node (which picks the GPU from GroupSpec::devices, the devices of one node). Neither
// numbers the ranks of one process: with threads those are every rank, with a process per GPU
// only its own. A RankSlot is that third number; RankSlots is indexed by it and by nothing else,
// so that neither a group rank nor a local rank (plain ints) can index a per-process table, and
// its size comes from the group itself, never from the devices of one node. Host-only.
#include <cstddef>
#include <vector>

#include "mgbench/model/group.hpp"

namespace mgbench::bench {

class RankSlot {
 public:
  // The slot of group rank `rank` of `nranks`, which must run in this process (`processes`:
  // null with threads); throws std::logic_error otherwise, or when it is not a rank of the group.
  static RankSlot of(int rank, int nranks, const ProcessGroup* processes);
  static RankSlot of(const GroupContext& ctx, int rank) {
    return of(rank, ctx.spec.ranks(), ctx.processes);
  }
  std::size_t index() const { return index_; }

 private:
  explicit RankSlot(std::size_t index) : index_(index) {}
  std::size_t index_;
};

// How many ranks this process runs: every rank of the group with threads, one with processes.
std::size_t ranks_in_process(const GroupContext& ctx);

template <typename T>
class RankSlots {
 public:
  explicit RankSlots(const GroupContext& ctx) : slots_(ranks_in_process(ctx)) {}
  T& operator[](RankSlot slot) { return slots_.at(slot.index()); }
  const T& operator[](RankSlot slot) const { return slots_.at(slot.index()); }
  std::size_t size() const { return slots_.size(); }
  // Every slot, e.g. for a teardown after the rank threads have ended.
  typename std::vector<T>::iterator begin() { return slots_.begin(); }
  typename std::vector<T>::iterator end() { return slots_.end(); }

 private:
  std::vector<T> slots_;
};

}  // namespace mgbench::bench
