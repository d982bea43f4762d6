// Topology-aware device choice: which n GPUs a group uses when --devices is absent.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/run/device_choice.hpp"
#include "mgbench/run/plan.hpp"

using mgbench::choose_devices;
using mgbench::TopologyLabels;

namespace {

// n GPUs, every pair labelled by `pair(i, j)`, the diagonal "X".
template <typename F>
TopologyLabels labels_of(int n, F pair) {
  const auto size = static_cast<std::size_t>(n);
  TopologyLabels t(size, std::vector<std::string>(size));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) t[i][j] = i == j ? "X" : pair(std::min(i, j), std::max(i, j));
  }
  return t;
}

std::vector<int> iota(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// Two NUMA nodes of four PCIe GPUs each; within a node, pairs {0,2} and {1,3} share a switch.
TopologyLabels two_socket_pcie() {
  return labels_of(8, [](int i, int j) -> std::string {
    if (i / 4 != j / 4) return "SYS";
    return (i % 2 == j % 2) ? "PIX" : "NODE";
  });
}

}  // namespace

TEST_CASE("link costs order NVLink before PCIe switches before host bridges before sockets") {
  using mgbench::link_cost;
  CHECK(link_cost("NV18") < link_cost("PIX"));
  CHECK(link_cost("PIX") < link_cost("PXB"));
  CHECK(link_cost("PXB") < link_cost("PHB"));
  CHECK(link_cost("PHB") < link_cost("NODE"));
  CHECK(link_cost("NODE") < link_cost("SYS"));
  CHECK(link_cost("?") == link_cost("PXB"));  // unknown: neither preferred nor avoided
  CHECK(link_cost("NV") == link_cost("?"));
}

TEST_CASE("where every pair looks alike the first n GPUs are chosen") {
  const auto nvswitch = labels_of(8, [](int, int) { return std::string("NV18"); });
  CHECK(choose_devices(iota(8), 4, nvswitch) == std::vector<int>{0, 1, 2, 3});
  CHECK(choose_devices(iota(8), 8, nvswitch) == iota(8));
  CHECK(choose_devices(iota(4), 2, TopologyLabels{}) == std::vector<int>{0, 1});  // no NVML
}

TEST_CASE("pairs share a PCIe switch and groups stay on one socket") {
  const auto t = two_socket_pcie();
  CHECK(choose_devices(iota(8), 2, t) == std::vector<int>{0, 2});
  CHECK(choose_devices(iota(8), 4, t) == std::vector<int>{0, 1, 2, 3});
  CHECK(choose_devices({4, 5, 6, 7}, 2, t) == std::vector<int>{4, 6});
}

TEST_CASE("NVLink islands win over PCIe neighbours") {
  // 0-3 and 4-7 are NVLink islands; within an island every pair is NV4.
  const auto t =
      labels_of(8, [](int i, int j) { return std::string(i / 4 == j / 4 ? "NV4" : "SYS"); });
  CHECK(choose_devices({0, 4, 5, 6, 7}, 4, t) == std::vector<int>{4, 5, 6, 7});
}

TEST_CASE("large machines are searched greedily and still avoid the slow links") {
  // 24 GPUs in 3 NVLink islands of 8: choosing 8 must give one island.
  const auto t =
      labels_of(24, [](int i, int j) { return std::string(i / 8 == j / 8 ? "NV12" : "SYS"); });
  std::vector<int> candidates = iota(24);
  candidates.erase(candidates.begin() + 1);  // GPU 1 excluded: island 0 has only 7 left
  const auto chosen = choose_devices(candidates, 8, t);
  CHECK(chosen == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
}

TEST_CASE("the plan's scaling groups move to the chosen GPUs with one note per count") {
  mgbench::Plan plan;
  plan.devices = iota(8);
  auto group = [](std::vector<int> d, std::string purpose) {
    mgbench::PlannedGroup g;
    g.devices = std::move(d);
    g.purpose = std::move(purpose);
    return g;
  };
  plan.groups = {group({0}, "scaling"), group({0, 1}, "scaling"), group({0, 1, 2, 3}, "scaling"),
                 group({0, 1}, "scaling"), group({1}, "baseline")};
  mgbench::apply_topology(plan, two_socket_pcie());
  CHECK(plan.groups[0].devices == std::vector<int>{0});
  CHECK(plan.groups[1].devices == std::vector<int>{0, 2});
  CHECK(plan.groups[2].devices == std::vector<int>{0, 1, 2, 3});
  CHECK(plan.groups[3].devices == std::vector<int>{0, 2});  // same count, same choice
  CHECK(plan.groups[4].devices == std::vector<int>{1});
  REQUIRE(plan.notes.size() == 1);  // the 4-GPU choice is the first four: no note
  CHECK(plan.notes[0].find("2-GPU groups use GPUs 0,2") != std::string::npos);
}
