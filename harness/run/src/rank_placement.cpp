// Where the ranks of a launch really are (rank_placement.hpp).
#include "mgbench/run/rank_placement.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/core/cpu_list.hpp"
#include "mgbench/platform/fingerprint.hpp"

namespace mgbench {

std::string node_identity(std::optional<int> test_node) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string id = std::string(name) + "/" +
                   read_trimmed_file("/proc/sys/kernel/random/boot_id");
  if (test_node) id += "#node" + std::to_string(*test_node);
  return id;
}

void to_json(Json& j, const RankFacts& f) {
  j = Json{{"rank", f.rank},   {"local_rank", f.local_rank}, {"host", f.host},
           {"node", f.node},   {"gpus", f.gpus},             {"gpu_cpus", f.gpu_cpus},
           {"device_before_mpi", f.device_before_mpi},       {"cpus", f.cpus}};
}

void from_json(const Json& j, RankFacts& f) {
  f.rank = j.at("rank").get<int>();
  f.local_rank = j.at("local_rank").get<int>();
  f.host = j.at("host").get<std::string>();
  f.node = j.at("node").get<std::string>();
  f.gpus = j.at("gpus").get<std::vector<std::string>>();
  f.gpu_cpus = j.at("gpu_cpus").get<std::vector<std::string>>();
  f.device_before_mpi = j.at("device_before_mpi").get<int>();
  f.cpus = j.at("cpus").get<std::string>();
}

std::vector<RankFacts> ranks_on_node(const std::vector<RankFacts>& all, const std::string& node) {
  std::vector<RankFacts> mine;
  for (const auto& f : all) {
    if (f.node == node) mine.push_back(f);
  }
  std::sort(mine.begin(), mine.end(),
            [](const RankFacts& a, const RankFacts& b) { return a.local_rank < b.local_rank; });
  return mine;
}

namespace {

// The ordinal rank `r` of the node takes, in its own view.
int ordinal_of(const std::vector<RankFacts>& node, std::size_t r, const std::vector<int>& planned,
               bool same_view) {
  const RankFacts& f = node[r];
  if (same_view) {
    if (r >= planned.size()) {
      throw EnvironmentError(fmt::format(
          "rank {} on {} is local rank {}, but its node has {} GPU(s) in the group", f.rank,
          f.host, f.local_rank, planned.size()));
    }
    return planned[r];
  }
  int turn = 0;  // its turn among the ranks that see the same GPUs
  for (std::size_t q = 0; q < r; ++q) turn += node[q].gpus == f.gpus ? 1 : 0;
  return turn;
}

}  // namespace

NodeDevices map_node_devices(const std::vector<RankFacts>& node, const std::vector<int>& planned) {
  NodeDevices out;
  for (const auto& f : node) out.per_task = out.per_task || f.gpus != node.front().gpus;
  for (std::size_t r = 0; r < node.size(); ++r) {
    const RankFacts& f = node[r];
    if (f.gpus.empty()) {
      throw EnvironmentError(fmt::format("rank {} on {} sees no GPU", f.rank, f.host));
    }
    const int ordinal = ordinal_of(node, r, planned, !out.per_task);
    if (ordinal < 0 || ordinal >= static_cast<int>(f.gpus.size())) {
      throw EnvironmentError(fmt::format(
          "rank {} on {} sees {} GPU(s), and GPU {} of its place is not among them{}", f.rank,
          f.host, f.gpus.size(), ordinal,
          out.per_task ? " (each task sees its own GPUs: give every task one)" : ""));
    }
    out.ordinals.push_back(ordinal);
    out.bus_ids.push_back(f.gpus[static_cast<std::size_t>(ordinal)]);
  }
  // With one view the plan's ordinals decide: only a plan that lists a GPU twice (the tests'
  // several ranks on one GPU) puts two ranks on it. Tasks bound to their own GPUs can meet by
  // mistake in the binding.
  if (!out.per_task) return out;
  for (std::size_t a = 0; a < node.size(); ++a) {
    for (std::size_t b = a + 1; b < node.size(); ++b) {
      if (out.bus_ids[a].empty() || out.bus_ids[a] != out.bus_ids[b]) continue;
      throw EnvironmentError(fmt::format(
          "ranks {} and {} on {} would share the GPU at {}: give each task its own GPU "
          "(srun --gpus-per-task=1, or no GPU binding at all)",
          node[a].rank, node[b].rank, node[a].host, out.bus_ids[a]));
    }
  }
  return out;
}

int device_before_mpi(std::optional<int> local_rank, const std::vector<int>& planned,
                      int visible) {
  if (visible == 1) return 0;
  if (!local_rank || *local_rank < 0 || static_cast<std::size_t>(*local_rank) >= planned.size()) {
    return -1;
  }
  const int device = planned[static_cast<std::size_t>(*local_rank)];
  return device >= 0 && device < visible ? device : -1;
}

namespace {

std::optional<int> env_number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > (1 << 20)) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

std::optional<int> launcher_local_rank() {
  if (const auto per_node = test_hooks::read_number(test_hooks::kRanksPerNode, 1, 1 << 20)) {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"}) {
      if (const auto rank = env_number(name)) return *rank % static_cast<int>(*per_node);
    }
    return std::nullopt;
  }
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"}) {
    if (const auto rank = env_number(name)) return rank;
  }
  return std::nullopt;
}

namespace {

// "rank 3 on h1 ... (and 5 more rank(s))": the first rank's words and a count of the others.
std::string first_and_count(const std::vector<std::string>& lines) {
  if (lines.size() <= 1) return lines.empty() ? "" : lines[0];
  return fmt::format("{} (and {} more rank(s))", lines[0], lines.size() - 1);
}

// The GPU-local CPU list of rank `f`'s GPU `bus`, "" when unknown.
std::string local_cpus_of(const RankFacts& f, const std::string& bus) {
  for (std::size_t i = 0; i < f.gpus.size() && i < f.gpu_cpus.size(); ++i) {
    if (f.gpus[i] == bus) return f.gpu_cpus[i];
  }
  return "";
}

bool disjoint(const std::vector<int>& a, const std::vector<int>& b) {
  for (int c : a) {
    if (std::binary_search(b.begin(), b.end(), c)) return false;
  }
  return true;
}

}  // namespace

std::vector<LaunchNote> launch_notes(const std::vector<RankFacts>& all,
                                     const std::vector<std::string>& devices, int planned_nodes,
                                     bool devices_ignored) {
  std::vector<std::string> one_cpu, remote;
  std::set<std::string> nodes;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const RankFacts& f = all[i];
    nodes.insert(f.node);
    const std::vector<int> cpus = parse_cpu_list(f.cpus);
    if (cpus.size() == 1) {
      one_cpu.push_back(fmt::format("rank {} on {} may run on one CPU only ({})", f.rank, f.host,
                                    f.cpus));
    }
    const std::string bus = i < devices.size() ? devices[i] : "";
    const std::vector<int> local = parse_cpu_list(local_cpus_of(f, bus));
    if (!cpus.empty() && !local.empty() && disjoint(cpus, local)) {
      remote.push_back(fmt::format(
          "rank {} on {} runs on CPUs {}, none of them local to its GPU {} (CPUs {})", f.rank,
          f.host, f.cpus, bus, format_cpu_list(local)));
    }
  }
  std::vector<LaunchNote> notes;
  if (!one_cpu.empty()) {
    notes.push_back({"one_cpu", first_and_count(one_cpu) +
                                    ": its host threads share that core; give each task the "
                                    "CPUs of its GPU (srun: --launcher-arg=--cpus-per-task=N)"});
  }
  if (!remote.empty()) {
    notes.push_back({"remote_cpus", first_and_count(remote) +
                                        ": its host-side work crosses sockets; let the launcher "
                                        "give each task the CPUs near its GPU"});
  }
  if (static_cast<int>(nodes.size()) < planned_nodes) {
    notes.push_back({"machines", fmt::format(
                                     "the ranks ran on {} machine(s), not on the {} node(s) of "
                                     "the plan: the host list names one machine twice",
                                     nodes.size(), planned_nodes)});
  }
  if (devices_ignored) {
    notes.push_back({"devices_ignored",
                     "each task sees only its own GPU(s) (per-task GPU binding): --devices "
                     "cannot choose among them and is ignored"});
  }
  return notes;
}

void to_json(Json& j, const NodeReport& r) {
  j = Json{{"host", r.host},           {"node", r.node},           {"gpus_seen", r.gpus_seen},
           {"node_gpus", r.node_gpus}, {"environment", r.environment}, {"error", r.error}};
}

void from_json(const Json& j, NodeReport& r) {
  r.host = j.at("host").get<std::string>();
  r.node = j.at("node").get<std::string>();
  r.gpus_seen = j.at("gpus_seen").get<int>();
  r.node_gpus = j.at("node_gpus").get<int>();
  r.environment = j.value("environment", Json::object());
  r.error = j.value("error", std::string());
}

}  // namespace mgbench
