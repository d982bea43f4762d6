// Per-rank state of a process (bench/rank_slots.hpp): sized by the ranks the process runs, never
// by the GPUs of one node, and indexed only by a rank's slot. A group of 2 nodes x 2 GPUs with a
// process per GPU is the case where the group rank (0..3) and the node's devices (2) disagree:
// the own all-reduce once sized its state by the devices and indexed it by the group rank, so
// that ranks 2 and 3 wrote past its end.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/rank_slots.hpp"

using mgbench::GroupContext;
using mgbench::GroupSpec;
using mgbench::bench::RankSlot;
using mgbench::bench::RankSlots;

namespace {

// Whether `Slots` can be indexed with an `Index`.
template <typename Slots, typename Index, typename = void>
struct indexable : std::false_type {};
template <typename Slots, typename Index>
struct indexable<Slots, Index,
                 std::void_t<decltype(std::declval<Slots&>()[std::declval<Index>()])>>
    : std::true_type {};

// A group rank (or a local rank) is an int: it cannot index per-process state by mistake.
static_assert(!indexable<RankSlots<int>, int>::value);
static_assert(!indexable<RankSlots<int>, std::size_t>::value);
static_assert(indexable<RankSlots<int>, RankSlot>::value);
static_assert(!std::is_constructible_v<RankSlots<int>, std::size_t>);  // no size but the group's

class NoSink : public mgbench::PointSink {
 public:
  void point_started(std::size_t) override {}
  void point_finished(const mgbench::PointResult&) override {}
};

// One process of a group launched by mpirun: rank `rank` of `size`, nodes of `per_node` ranks.
class FakeProcess : public mgbench::ProcessGroup {
 public:
  FakeProcess(int rank, int size, int per_node) : rank_(rank), size_(size), per_node_(per_node) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return rank_ % per_node_; }
  int local_size() const override { return per_node_; }
  const std::string& host() const override { return host_; }
  void barrier(const std::string&) override {}
  std::string broadcast(const std::string& value, const std::string&) override { return value; }
  std::vector<std::string> all_gather(const std::string& mine, const std::string&) override {
    return {mine};
  }
  [[noreturn]] void abort(const std::string& reason) override { throw std::runtime_error(reason); }

 private:
  int rank_, size_, per_node_;
  std::string host_ = "node";
};

GroupSpec two_nodes_of_two() {
  GroupSpec spec;
  spec.workload = "allreduce";
  spec.devices = {0, 1};  // the GPUs of one node
  spec.placement.process_model = mgbench::ProcessModel::processes;
  spec.placement.launcher = mgbench::Launcher::mpirun;
  spec.placement.nodes = 2;
  spec.placement.gpus_per_node = 2;
  return spec;
}

}  // namespace

TEST_CASE("rank slots: a process per GPU on 2 nodes holds one slot, whatever its group rank") {
  const GroupSpec spec = two_nodes_of_two();
  NoSink sink;
  for (int rank = 0; rank < 4; ++rank) {
    FakeProcess process(rank, 4, 2);
    const GroupContext ctx{spec, sink, nullptr, &process};
    RankSlots<int> slots(ctx);
    REQUIRE(slots.size() == 1);  // not spec.devices.size() (2), not the group's 4 ranks
    const RankSlot slot = RankSlot::of(ctx, rank);
    CHECK(slot.index() == 0);
    slots[slot] = rank + 10;
    CHECK(slots[RankSlot::of(ctx, rank)] == rank + 10);
    // Another process's rank never has a slot here, nor does a rank outside the group.
    CHECK_THROWS_AS(RankSlot::of(ctx, (rank + 1) % 4), std::logic_error);
    CHECK_THROWS_AS(RankSlot::of(ctx, 4), std::logic_error);
  }
}

TEST_CASE("rank slots: a thread per GPU holds one slot per rank, the last one included") {
  GroupSpec spec;
  spec.devices = {3, 5, 6, 7};
  NoSink sink;
  const GroupContext ctx{spec, sink, nullptr, nullptr};
  RankSlots<std::string> slots(ctx);
  REQUIRE(slots.size() == 4);
  for (int rank = 0; rank < 4; ++rank) {
    CHECK(RankSlot::of(ctx, rank).index() == static_cast<std::size_t>(rank));
    slots[RankSlot::of(ctx, rank)] = std::to_string(rank);
  }
  CHECK(slots[RankSlot::of(ctx, 3)] == "3");
  CHECK(slots[RankSlot::of(ctx, 0)] == "0");
  CHECK_THROWS_AS(RankSlot::of(ctx, 4), std::logic_error);
  CHECK_THROWS_AS(RankSlot::of(ctx, -1), std::logic_error);
  std::size_t visited = 0;
  for (const std::string& s : slots) visited += s.empty() ? 0 : 1;
  CHECK(visited == 4);
}
