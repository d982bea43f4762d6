// One rank of a launch around MPI's start (launched_rank.hpp).
#include "mgbench/run/launched_rank.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/core/cpu_list.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/run/worker.hpp"

namespace mgbench {

namespace {

// Fake GPUs (a test hook): nothing is asked of CUDA.
bool fake_gpus() { return test_hooks::read(test_hooks::kFakeDevices).has_value(); }

// The node of `rank` under MGBENCH_TEST_RANKS_PER_NODE (nodes of N consecutive ranks).
std::optional<int> test_node(int rank) {
  const auto per_node = test_hooks::read_number(test_hooks::kRanksPerNode, 1, 1 << 20);
  return per_node ? std::optional<int>(rank / static_cast<int>(*per_node)) : std::nullopt;
}

bool first_n(const std::vector<int>& devices) {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] != static_cast<int>(i)) return false;
  }
  return true;
}

RankFacts my_facts(const LaunchedGroup& group, const RankStart& start) {
  RankFacts mine;
  mine.rank = group.rank();
  mine.local_rank = group.local_rank();
  mine.host = group.host();
  mine.node = node_identity(test_node(group.rank()));
  mine.gpus = start.gpus;
  for (const auto& bus : mine.gpus) {
    mine.gpu_cpus.push_back(fake_gpus() ? "" : gpu_local_cpulist(bus));
  }
  mine.device_before_mpi = start.device;
  mine.cpus = format_cpu_list(current_thread_cpus());
  return mine;
}

}  // namespace

RankStart start_rank(const std::vector<int>& planned) {
  RankStart start;
  start.gpus = visible_gpus();
  start.device =
      device_before_mpi(launcher_local_rank(), planned, static_cast<int>(start.gpus.size()));
  // With fake GPUs the choice is only recorded; a real one is made current now.
  if (start.device >= 0 && !fake_gpus() && !select_device(start.device)) start.device = -1;
  return start;
}

RankPlace place_rank(LaunchedGroup& group, const GroupSpec& spec, const RankStart& start) {
  const RankFacts mine = my_facts(group, start);
  std::vector<RankFacts> all;
  for (const auto& text :
       group.all_gather(dump_json(Json(mine)), "start-up: every rank's GPUs and CPUs")) {
    all.push_back(Json::parse(text).get<RankFacts>());
  }
  // Every node is mapped the same way on every rank: rank 0's notes need every rank's GPU.
  std::map<std::string, std::vector<RankFacts>> by_node;
  std::map<std::string, NodeDevices> mapped;
  for (const auto& f : all) {
    if (mapped.count(f.node) != 0) continue;
    by_node[f.node] = ranks_on_node(all, f.node);
    mapped[f.node] = map_node_devices(by_node[f.node], spec.devices);
  }
  std::vector<std::string> devices;
  bool per_task = false;
  int ordinal = -1;
  std::string bus;
  for (const auto& f : all) {
    const auto& node = by_node[f.node];
    const auto it = std::find_if(node.begin(), node.end(),
                                 [&](const RankFacts& r) { return r.rank == f.rank; });
    const auto at = static_cast<std::size_t>(it - node.begin());
    const NodeDevices& d = mapped[f.node];
    per_task = per_task || d.per_task;
    devices.push_back(d.bus_ids.at(at));
    if (f.rank == mine.rank) {
      ordinal = d.ordinals.at(at);
      bus = d.bus_ids.at(at);
    }
  }
  group.set_device(ordinal, bus);
  if (!fake_gpus() && ordinal != start.device && !select_device(ordinal)) {
    throw EnvironmentError(fmt::format("CUDA cannot select GPU {} ({})", ordinal, bus));
  }
  RankPlace place;
  place.node_bus_ids = mapped[mine.node].bus_ids;
  if (group.rank() == 0) {
    place.notes = launch_notes(all, devices, spec.placement.nodes,
                               per_task && !first_n(spec.devices));
  }
  return place;
}

Json probe_rank(ProcessGroup& group, bool doctor) {
  NodeReport mine;
  mine.host = group.host();
  // One rank per node: under the test hook, each rank is a node of its own.
  mine.node = node_identity(test_node(0).has_value() ? std::optional<int>(group.rank())
                                                     : std::nullopt);
  Json probe;
  try {
    probe = execute_probe(doctor && group.rank() == 0);
    mine.gpus_seen = static_cast<int>(probe.at("inventory").at("devices").size());
    mine.environment = node_environment(probe.value("environment", Json::object()));
  } catch (const std::exception& e) {
    mine.error = one_line(e.what());
  }
  mine.node_gpus = node_gpu_count();
  const auto reports = group.all_gather(dump_json(Json(mine)), "the device probe");
  if (group.rank() != 0) return Json();
  if (!mine.error.empty()) {
    return Json{{"type", "fatal"}, {"message", fmt::format("{}: {}", mine.host, mine.error)}};
  }
  Json nodes = Json::array();
  for (const auto& text : reports) nodes.push_back(Json::parse(text));
  probe["type"] = "probe";
  probe["nodes"] = std::move(nodes);
  return probe;
}

}  // namespace mgbench
