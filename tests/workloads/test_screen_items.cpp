// `mgbench screen`'s stages as the binary plans them with the registered workloads (the CPU tests
// of the screen run the selftest in their place): each item plans one point with the parameters
// docs/SCREEN.md names, and its metric is one its workload reports.
#include <map>
#include <set>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/screen.hpp"

namespace {

std::string param(const mgbench::ScreenLaunch& l, const char* name) {
  const auto& p = l.group.points.at(0).params;
  return p.contains(name) ? p.at(name).to_json().dump() : "";
}

}  // namespace

TEST_CASE("screen: the real stages plan one point each, with the parameters the docs name") {
  mgbench::ScreenOptions options;  // the local launcher: one node
  const auto plan = mgbench::make_screen_plan(options, {"node"}, 8, false, {0});
  REQUIRE(plan.node_launches.size() == 1);
  const auto& launches = plan.node_launches[0];
  REQUIRE(launches.size() == 5);
  std::map<std::string, const mgbench::ScreenLaunch*> by;
  for (const auto& l : launches) {
    by[l.item.label] = &l;
    CHECK(l.group.points.size() == 1);
    CHECK(l.group.devices.size() == 8);
    CHECK(l.group.placement.hosts == std::vector<std::string>{"node"});
    const mgbench::Workload* w = mgbench::find_workload(l.item.workload);
    REQUIRE(w != nullptr);
    if (l.item.scope != mgbench::ScreenScope::matrix) {
      INFO(l.item.label << ": " << l.item.metric);
      CHECK(w->presentation().find_metric(l.item.metric) != nullptr);
    }
  }
  CHECK(param(*by.at("gemm"), "impl") == "\"cublas\"");
  CHECK(param(*by.at("gemm"), "dtype") == "\"bf16\"");
  CHECK(param(*by.at("gemm"), "shape") == "\"square\"");
  CHECK(param(*by.at("gemm"), "m") == "8192");
  CHECK(param(*by.at("membw"), "impl") == "\"copy\"");
  CHECK(param(*by.at("membw"), "bytes") == "1073741824");
  CHECK(param(*by.at("h2d"), "direction") == "\"h2d\"");
  CHECK(param(*by.at("h2d"), "memory") == "\"pinned\"");
  CHECK(param(*by.at("h2d"), "numa") == "\"local\"");
  CHECK(param(*by.at("p2p"), "engine") == "\"ce\"");
  CHECK(param(*by.at("p2p"), "bytes") == "67108864");
  CHECK(param(*by.at("allreduce"), "impl") == "\"nccl\"");
  CHECK(param(*by.at("allreduce"), "bytes") == "268435456");
  // Every point of the screen has its own index.
  std::set<std::size_t> indices;
  for (const auto& l : launches) CHECK(indices.insert(l.group.points[0].index).second);
}

TEST_CASE("screen: through mpirun, stage 3's pairs and the whole set, and no p2p matrix") {
  mgbench::ScreenOptions options;
  options.launch.launcher = mgbench::Launcher::mpirun;
  const auto plan = mgbench::make_screen_plan(options, {"a", "b", "c", "d"}, 8, false, {0, 1, 3});
  CHECK(plan.node_launches[2].empty());  // node 2 takes no part
  CHECK(plan.node_launches[0].size() == 4);
  // Three nodes a, b, d: (a,b), then (a,d), then b and d catch up with each other.
  REQUIRE(plan.rounds.size() == 3);
  CHECK(plan.rounds[0] == std::vector<std::pair<int, int>>{{0, 1}});
  CHECK(plan.rounds[1] == std::vector<std::pair<int, int>>{{0, 3}});
  CHECK(plan.rounds[2] == std::vector<std::pair<int, int>>{{1, 3}});
  for (const auto& round : plan.round_launches) {
    for (const auto& l : round) {
      CHECK(l.group.placement.nodes == 2);
      CHECK(l.group.placement.process_model == mgbench::ProcessModel::processes);
      CHECK(l.nodes.size() == 2);
    }
  }
  REQUIRE(plan.whole.size() == 1);
  CHECK(plan.whole[0].group.placement.hosts == std::vector<std::string>{"a", "b", "d"});
  CHECK(plan.notes.at(0).find("p2p matrix") == 0);
  CHECK(plan.estimated_s > 0);
}
