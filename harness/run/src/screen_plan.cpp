// `mgbench screen`'s plan: what each stage measures, stage 3's pair schedule, the launches and
// the estimated time (screen.hpp).
#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/run/screen.hpp"

namespace mgbench {

namespace {

using Round = std::vector<std::pair<int, int>>;

// Pairs the nodes of `idle` (ascending) among themselves, each with the first idle node it has
// not met yet.
void pair_idle(std::vector<int> idle, const std::vector<std::set<int>>& met, Round& round) {
  while (!idle.empty()) {
    const int a = idle.front();
    idle.erase(idle.begin());
    for (auto it = idle.begin(); it != idle.end(); ++it) {
      if (met[static_cast<std::size_t>(a)].count(*it) == 0) {
        round.emplace_back(std::min(a, *it), std::max(a, *it));
        idle.erase(it);
        break;
      }
    }
  }
}

void record(const Round& round, std::vector<std::set<int>>& met) {
  for (const auto& [a, b] : round) {
    met[static_cast<std::size_t>(a)].insert(b);
    met[static_cast<std::size_t>(b)].insert(a);
  }
}

// A round that gives the nodes that have met the fewest others someone new.
Round catch_up_round(int n, const std::vector<std::set<int>>& met) {
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return met[static_cast<std::size_t>(a)].size() < met[static_cast<std::size_t>(b)].size();
  });
  Round round;
  pair_idle(order, met, round);
  return round;
}

}  // namespace

std::vector<std::vector<std::pair<int, int>>> pair_schedule(int nodes) {
  std::vector<Round> rounds;
  if (nodes < 2) return rounds;
  const auto n = static_cast<std::size_t>(nodes);
  std::vector<std::set<int>> met(n);
  for (int bit = 1; bit < nodes; bit <<= 1) {
    Round round;
    std::vector<int> idle;
    for (int i = 0; i < nodes; ++i) {
      const int j = i ^ bit;
      if (j >= nodes) idle.push_back(i);
      if (j < nodes && i < j) round.emplace_back(i, j);
    }
    pair_idle(idle, met, round);
    record(round, met);
    rounds.push_back(std::move(round));
  }
  const std::size_t want = std::min<std::size_t>(2, n - 1);
  for (int extra = 0; extra < 2; ++extra) {
    const bool short_of = std::any_of(met.begin(), met.end(),
                                      [&](const std::set<int>& m) { return m.size() < want; });
    if (!short_of) break;
    Round round = catch_up_round(nodes, met);
    if (round.empty()) break;
    record(round, met);
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<ScreenItem> screen_items(bool fake) {
  const std::map<std::string, std::vector<std::string>> allreduce = {
      {"impl", {"nccl"}}, {"dtype", {"bf16"}}, {"bytes", {"268435456"}}};
  std::vector<ScreenItem> items = {
      {1, "gemm", "gemm", {{"impl", {"cublas"}}, {"dtype", {"bf16"}}, {"size", {"8192"}}},
       "tflops_per_gpu", "TFLOP/s", ScreenScope::gpu, false},
      {1, "membw", "membw", {{"impl", {"copy"}}, {"bytes", {"1073741824"}}}, "GBps_per_gpu",
       "GB/s", ScreenScope::gpu, false},
      {1, "h2d", "h2d",
       {{"direction", {"h2d"}}, {"memory", {"pinned"}}, {"numa", {"local"}},
        {"bytes", {"268435456"}}},
       "GBps_per_gpu", "GB/s", ScreenScope::gpu, true},
      {2, "p2p", "p2p", {{"engine", {"ce"}}, {"direction", {"uni"}}, {"bytes", {"67108864"}}},
       "bw_matrix_GBps", "GB/s", ScreenScope::matrix, true},
      {2, "allreduce", "allreduce", allreduce, "busbw_GBps", "GB/s", ScreenScope::node, true},
      {3, "pair allreduce", "allreduce", allreduce, "busbw_GBps", "GB/s", ScreenScope::node, true},
  };
  if (!fake) return items;
  for (auto& item : items) {  // the same stages and labels on the CPU (docs/TESTING-HOOKS.md)
    item.workload = "selftest";
    item.params = {{"behavior", {"screen"}}};
    item.metric = item.scope == ScreenScope::gpu      ? "ops_per_s_per_gpu"
                  : item.scope == ScreenScope::matrix ? "bw_matrix_GBps"
                                                      : "ops_per_s";
    item.unit = item.scope == ScreenScope::matrix ? "GB/s" : "op/s";
  }
  return items;
}

namespace {

bool wanted(const ScreenOptions& o, int stage) {
  return std::find(o.stages.begin(), o.stages.end(), stage) != o.stages.end();
}

// The one point of `item`, as the sweep's planner would make it (validated parameters).
Params item_params(const ScreenItem& item) {
  SweepOptions s;
  s.workloads = {item.workload};
  s.gpu_counts = {2};
  s.param_overrides = item.params;
  s.profile = Profile::quick;
  const Plan plan = make_plan(s, 2);
  if (plan.groups.empty() || plan.groups.front().points.empty()) {
    throw UsageError(fmt::format("screen: {} plans no point", item.workload));
  }
  return plan.groups.front().points.front().params;
}

class Builder {
 public:
  Builder(const ScreenOptions& o, ScreenPlan& plan, std::size_t first)
      : o_(o), plan_(plan), index_(first) {}

  ScreenLaunch launch(const ScreenItem& item, const std::vector<int>& nodes) {
    ScreenLaunch l;
    l.item = item;
    l.nodes = nodes;
    PlannedGroup& g = l.group;
    g.index = groups_++;
    g.workload = item.workload;
    for (int d = 0; d < plan_.gpus_per_node; ++d) g.devices.push_back(d);
    g.purpose = "screen";
    Placement& p = g.placement;
    p.launcher = o_.launch.launcher;
    p.process_model =
        p.launcher == Launcher::local ? ProcessModel::threads : ProcessModel::processes;
    p.nodes = static_cast<int>(nodes.size());
    for (int n : nodes) p.hosts.push_back(plan_.hosts.at(static_cast<std::size_t>(n)));
    p.gpus_per_node = plan_.gpus_per_node;
    auto cached = params_.find(item.label);
    if (cached == params_.end()) cached = params_.emplace(item.label, item_params(item)).first;
    g.points.push_back({index_++, cached->second});
    const Workload* w = find_workload(item.workload);
    seconds_ = (o_.launch.launcher == Launcher::local ? 1.0 : 3.0) +
               (w != nullptr ? w->estimate_seconds_per_point() : 2.0);
    return l;
  }
  double seconds() const { return seconds_; }  // the last launch's estimate

 private:
  const ScreenOptions& o_;
  ScreenPlan& plan_;
  std::size_t index_;
  std::size_t groups_ = 0;
  std::map<std::string, Params> params_;
  double seconds_ = 0;
};

void note_once(ScreenPlan& plan, const std::string& note) {
  if (std::find(plan.notes.begin(), plan.notes.end(), note) == plan.notes.end()) {
    plan.notes.push_back(note);
  }
}

}  // namespace

ScreenPlan make_screen_plan(const ScreenOptions& options, const std::vector<std::string>& hosts,
                            int gpus_per_node, bool fake, const std::vector<int>& nodes,
                            std::size_t first_index) {
  ScreenPlan plan;
  plan.hosts = hosts;
  plan.gpus_per_node = gpus_per_node;
  plan.node_launches.resize(hosts.size());
  Builder build(options, plan, first_index);
  const bool local = options.launch.launcher == Launcher::local;
  const auto items = screen_items(fake);
  double node_s = 0;  // the nodes run at once: one node's time
  for (const auto& item : items) {
    if (item.stage > 2 || !wanted(options, item.stage)) continue;
    if (item.scope == ScreenScope::matrix && !local) {
      note_once(plan, "p2p matrix: needs one process with a thread per GPU, which only the local "
                      "launcher gives (screen one node with --launcher local for it)");
      continue;
    }
    if (item.stage == 2 && gpus_per_node < 2) {
      note_once(plan, fmt::format("{}: needs two GPUs on a node, there is one", item.label));
      continue;
    }
    for (int n : nodes) {
      plan.node_launches[static_cast<std::size_t>(n)].push_back(build.launch(item, {n}));
    }
    if (!nodes.empty()) node_s += build.seconds();
  }
  plan.estimated_s = node_s;
  if (!wanted(options, 3)) return plan;
  if (local || nodes.size() < 2) {
    note_once(plan, "stage 3 (between nodes): needs --launcher mpirun or srun and two nodes or "
                    "more");
    return plan;
  }
  const ScreenItem& pair = items.back();
  for (const auto& round : pair_schedule(static_cast<int>(nodes.size()))) {
    Round mapped;
    std::vector<ScreenLaunch> launches;
    for (const auto& [a, b] : round) {
      mapped.emplace_back(nodes[static_cast<std::size_t>(a)], nodes[static_cast<std::size_t>(b)]);
      launches.push_back(build.launch(pair, {mapped.back().first, mapped.back().second}));
    }
    plan.estimated_s += build.seconds();
    plan.rounds.push_back(std::move(mapped));
    plan.round_launches.push_back(std::move(launches));
  }
  ScreenItem whole = pair;
  whole.label = "fleet allreduce";
  plan.whole.push_back(build.launch(whole, nodes));
  plan.estimated_s += build.seconds();
  return plan;
}

std::string describe_screen_plan(const ScreenPlan& plan, const ScreenOptions& options) {
  std::size_t launches = plan.whole.size();
  for (const auto& l : plan.node_launches) launches += l.size();
  for (const auto& r : plan.round_launches) launches += r.size();
  std::string out = fmt::format(
      "Screen: {} node(s) x {} GPU(s), {} launch(es), estimated {:.0f} s (the nodes of a stage, "
      "and the pairs of a round, run at once; at most {} launches together)\n",
      plan.hosts.size(), plan.gpus_per_node, launches, plan.estimated_s, options.parallel);
  for (std::size_t n = 0; n < plan.node_launches.size(); ++n) {
    for (const auto& l : plan.node_launches[n]) {
      out += fmt::format("  stage {}  {:<16} on {}: {}\n", l.item.stage, l.item.label,
                         plan.hosts[n],
                         options.launch.launcher == Launcher::local
                             ? "a local worker, a thread per GPU"
                             : launch_command_line(options.launch, l.group.placement,
                                                   l.group.devices));
    }
  }
  for (std::size_t r = 0; r < plan.rounds.size(); ++r) {
    std::vector<std::string> pairs;
    for (const auto& [a, b] : plan.rounds[r]) {
      pairs.push_back(plan.hosts[static_cast<std::size_t>(a)] + "+" +
                      plan.hosts[static_cast<std::size_t>(b)]);
    }
    out += fmt::format("  stage 3  round {}: {}\n", r + 1, fmt::join(pairs, ", "));
  }
  for (const auto& l : plan.whole) {
    out += fmt::format("  stage 3  {} over {} node(s)\n", l.item.label, l.nodes.size());
  }
  for (const auto& note : plan.notes) out += "Note: " + note + "\n";
  return out;
}

int screen_exit_code(const ScreenSection& screen) {
  const bool any_up = std::any_of(screen.nodes.begin(), screen.nodes.end(),
                                  [](const ScreenNode& n) { return n.status == "ok"; });
  if (!any_up) return static_cast<int>(ExitCode::environment);
  return screen.findings.empty() ? 0 : 1;
}

}  // namespace mgbench
