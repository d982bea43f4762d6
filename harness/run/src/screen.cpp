// `mgbench screen` (screen.hpp, docs/SCREEN.md): probe every node, run the stages through the
// orchestrator (the nodes of a stage, and the pairs of a round, at once), judge the figures
// (analysis/fleet.hpp) and finish as a sweep does: results.json, sinks, history.
#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/run/launch_probe.hpp"
#include "mgbench/run/directory_lock.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/store/history.hpp"
#include "screen_detail.hpp"

namespace mgbench {

namespace {

using screen_detail::gpu_model_of;
using screen_detail::launch_figures;
using screen_detail::node_facts;

// Runs fn(0..count-1) on at most `width` threads; rethrows the first error after all ended.
void parallel_for(std::size_t count, int width, const std::function<void(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  const std::size_t n = std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, width)));
  for (std::size_t t = 0; t < n; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

// The fleet as its probes found it.
struct Fleet {
  std::vector<ScreenNode> nodes;
  std::vector<std::string> hosts;
  int gpus_per_node = 0;
  bool fake = false;
  ProbeResult first;  // the first node that answered: the run's environment and doctor

  std::vector<int> up() const {
    std::vector<int> out;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].status == "ok") out.push_back(static_cast<int>(i));
    }
    return out;
  }
};

// The hosts to screen: --hosts/--hostfile, the allocation's nodes under srun, else this host.
std::vector<HostSlots> fleet_hosts(const ScreenOptions& o) {
  if (o.launch.launcher == Launcher::local) return {{host_name(), 0}};
  if (!o.launch.hosts.empty()) return o.launch.hosts;
  const ProbeResult all = probe_launched(o.launch, false, kProbeTimeoutSeconds);
  std::vector<HostSlots> hosts;
  for (const auto& n : all.nodes) hosts.push_back({n.host, 0});
  if (hosts.empty()) hosts.push_back({host_name(), 0});
  return hosts;
}

// Every node probed on its own (at once), so that one that does not answer is a finding.
std::vector<std::pair<ProbeResult, std::string>> probe_nodes(const ScreenOptions& o,
                                                             const std::vector<HostSlots>& hosts) {
  std::vector<std::pair<ProbeResult, std::string>> out(hosts.size());
  parallel_for(hosts.size(), o.parallel, [&](std::size_t i) {
    try {
      if (o.launch.launcher == Launcher::local) {
        out[i].first = probe(Isolation::process, true);
      } else {
        LaunchOptions one = o.launch;
        one.hosts = {hosts[i]};
        out[i].first = probe_launched(one, true, kProbeTimeoutSeconds);
      }
    } catch (const Error& e) {
      out[i].second = one_line(e.what());
    }
  });
  return out;
}

Fleet probe_fleet(const ScreenOptions& o) {
  std::vector<HostSlots> hosts = fleet_hosts(o);
  auto probed = probe_nodes(o, hosts);
  // Two names of one machine are one node (unless the test hook makes one machine several).
  if (!test_hooks::read(test_hooks::kRanksPerNode)) {
    std::vector<NodeReport> reports;
    for (const auto& [p, error] : probed) {
      reports.push_back(p.nodes.empty() || !error.empty() ? NodeReport{} : p.nodes.front());
    }
    std::vector<std::string> warnings;
    const auto kept = distinct_hosts(hosts, reports, &warnings);
    for (const auto& w : warnings) logging::warn("{}", w);
    decltype(probed) kept_probes;
    for (const auto& h : kept) {
      const auto at = std::find_if(hosts.begin(), hosts.end(),
                                   [&](const HostSlots& x) { return x.host == h.host; });
      kept_probes.push_back(probed[static_cast<std::size_t>(at - hosts.begin())]);
    }
    hosts = kept;
    probed = std::move(kept_probes);
  }
  Fleet fleet;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const auto& [p, error] = probed[i];
    ScreenNode n;
    n.host = hosts[i].host;
    n.gpus = static_cast<int>(p.inventory.devices.size());
    n.gpu_model = gpu_model_of(p.environment);
    n.facts = node_facts(p.environment, p.doctor);
    if (!error.empty()) {
      n.status = "failed";
      n.message = "probe: " + error;
    } else if (fleet.first.environment.empty()) {
      fleet.first = p;
      fleet.fake = p.environment.value("fake_devices", false);
      fleet.gpus_per_node = planned_gpus_per_node(o.launch, n.gpus);
    }
    fleet.hosts.push_back(n.host);
    fleet.nodes.push_back(std::move(n));
  }
  for (auto& n : fleet.nodes) {
    if (n.status == "ok" && n.gpus < fleet.gpus_per_node) {
      n.status = "failed";
      n.message = fmt::format("probe: {} GPU(s) visible, the screen takes {} per node", n.gpus,
                              fleet.gpus_per_node);
    }
  }
  return fleet;
}

SweepOptions as_sweep(const ScreenOptions& o) {
  SweepOptions s;
  s.settings = o.settings;
  s.launch = o.launch;
  s.out_dir = o.out_dir;
  s.json_path = o.json_path;
  s.no_report = o.no_report;
  s.no_history = o.no_history;
  s.db_path = o.db_path;
  s.verbosity = -1;  // the orchestrators run side by side: no progress lines of theirs
  s.skip_doctor = true;
  return s;
}

// One launch through the orchestrator: its point, whatever happened to it.
PointResult run_launch(const SweepOptions& sweep, const ScreenLaunch& launch) {
  Plan plan;
  plan.groups.push_back(launch.group);
  plan.total_points = 1;
  Orchestrator orchestrator(sweep, plan, nullptr, {});
  orchestrator.run();
  const auto results = orchestrator.results();
  if (results.empty()) {
    return unfinished_point(launch.group, launch.group.points.front(), Status::skipped,
                            "not run");
  }
  PointResult p = results.front();
  // The selftest's fake fleet and one-node groups name no host: the plan's are the truth.
  p.placement.hosts = launch.group.placement.hosts;
  return p;
}

bool node_failure(Status s) { return s == Status::failed || s == Status::timeout || s == Status::wrong; }

// What the stages collect.
struct Collected {
  std::mutex mutex;
  std::vector<PointResult> points;
  std::vector<ScreenFigure> figures;
  std::vector<std::string> notes;

  void add(const ScreenLaunch& launch, const PointResult& p, const std::vector<ScreenNode>& nodes) {
    auto figures_of = launch_figures(launch, p, nodes);
    const std::lock_guard<std::mutex> lock(mutex);
    points.push_back(p);
    for (auto& f : figures_of) figures.push_back(std::move(f));
    if (p.status == Status::waived || p.status == Status::oom) {
      notes.push_back(fmt::format("{} on {}: {}: {}", launch.item.label,
                                  fmt::join(launch.group.placement.hosts, "+"),
                                  to_string(p.status), one_line(p.message)));
    }
  }
};

// Stages 1 and 2: every node's launches in turn, the nodes at once; a node whose launch fails,
// hangs or computes wrong results stops there and is marked failed.
void run_node_stages(const ScreenOptions& o, const SweepOptions& sweep, const ScreenPlan& plan,
                     Fleet& fleet, Collected& c) {
  std::mutex mutex;
  parallel_for(plan.node_launches.size(), o.parallel, [&](std::size_t n) {
    for (const auto& launch : plan.node_launches[n]) {
      if (interrupt_flag().load()) return;
      const PointResult p = run_launch(sweep, launch);
      c.add(launch, p, fleet.nodes);
      logging::debug("stage {}: {} on {}: {}", launch.item.stage, launch.item.label,
                     fleet.hosts[n], to_string(p.status));
      if (node_failure(p.status)) {
        const std::lock_guard<std::mutex> lock(mutex);
        fleet.nodes[n].status = "failed";
        fleet.nodes[n].message = fmt::format("stage {} ({}): {}: {}", launch.item.stage,
                                             launch.item.label, to_string(p.status),
                                             one_line(p.message));
        return;
      }
    }
  });
}

// Stage 3 on the nodes still standing: the rounds in turn, the pairs of a round at once, then
// every node together.
void run_pair_stage(const ScreenOptions& o, const SweepOptions& sweep, ScreenPlan& plan,
                    const Fleet& fleet, Collected& c) {
  for (const auto& round : plan.round_launches) {
    if (interrupt_flag().load()) return;
    parallel_for(round.size(), o.parallel, [&](std::size_t i) {
      c.add(round[i], run_launch(sweep, round[i]), fleet.nodes);
    });
  }
  for (const auto& whole : plan.whole) {
    if (interrupt_flag().load()) return;
    const PointResult p = run_launch(sweep, whole);
    c.add(whole, p, fleet.nodes);
    if (p.status != Status::ok) {
      const std::lock_guard<std::mutex> lock(c.mutex);
      c.notes.push_back(fmt::format("{}: {}: {}", whole.item.label, to_string(p.status),
                                    one_line(p.message)));
    }
  }
}

// Every launch of the screen as one plan (results.json's "plan").
Plan combined_plan(const std::vector<const ScreenPlan*>& parts) {
  Plan plan;
  auto take = [&](const ScreenLaunch& l) {
    PlannedGroup g = l.group;
    g.index = plan.groups.size();
    plan.groups.push_back(std::move(g));
    plan.total_points += 1;
  };
  for (const ScreenPlan* part : parts) {
    for (const auto& node : part->node_launches) std::for_each(node.begin(), node.end(), take);
    for (const auto& round : part->round_launches) std::for_each(round.begin(), round.end(), take);
    std::for_each(part->whole.begin(), part->whole.end(), take);
    plan.estimated_s += part->estimated_s;
    plan.gpus_per_node = part->gpus_per_node;
  }
  return plan;
}

RunResult screen_run_result(const std::vector<std::string>& argv, const Fleet& fleet,
                            const ScreenOptions& o) {
  RunResult run = started_run(argv);
  run.run_id = make_run_id();
  run.environment =
      fleet.first.environment.is_object() ? fleet.first.environment : Json::object();
  record_test_hooks(run.environment);
  run.environment["inventory"] = fleet.first.inventory;
  run.doctor = fleet.first.doctor;
  run.settings = o.settings;
  run.settings["isolation"] = "process";
  run.settings["mode"] = "screen";
  run.settings["launcher"] = to_string(o.launch.launcher);
  return run;
}

ScreenOptions with_stages(ScreenOptions o, const std::vector<int>& stages) {
  std::vector<int> kept;
  for (int s : o.stages) {
    if (std::find(stages.begin(), stages.end(), s) != stages.end()) kept.push_back(s);
  }
  o.stages = kept;
  return o;
}

ScreenSection make_section(const ScreenOptions& o, const Fleet& fleet, const ScreenPlan& nodes,
                           const ScreenPlan& pairs, Collected& c) {
  ScreenSection s;
  s.nodes = fleet.nodes;
  s.gpus_per_node = fleet.gpus_per_node;
  s.stages = o.stages;
  s.rounds = pairs.rounds;
  s.thresholds = o.thresholds;
  std::sort(c.figures.begin(), c.figures.end(), [](const ScreenFigure& a, const ScreenFigure& b) {
    return std::tie(a.point, a.gpu, a.peer) < std::tie(b.point, b.gpu, b.peer);
  });
  s.figures = c.figures;
  for (const std::vector<std::string>* notes :
       std::vector<const std::vector<std::string>*>{&nodes.notes, &pairs.notes, &c.notes}) {
    s.notes.insert(s.notes.end(), notes->begin(), notes->end());
  }
  s.estimated_s = nodes.estimated_s + pairs.estimated_s;
  return s;
}

// No node answered its probe: nothing can be screened (exit 4, one line).
void require_a_node(const Fleet& fleet) {
  if (!fleet.up().empty()) return;
  const ScreenNode& n = fleet.nodes.front();
  throw EnvironmentError(fmt::format("screen: no node can be screened ({}: {}{})", n.host,
                                     n.message,
                                     fleet.nodes.size() > 1 ? ", and every other node too" : ""));
}

}  // namespace

int run_screen(const ScreenOptions& options, const std::vector<std::string>& argv,
               const RunSinks& sinks) {
  check_launcher_available(options.launch.launcher, !options.dry_run);
  const double start = monotonic_seconds();
  Fleet fleet = probe_fleet(options);
  require_a_node(fleet);
  const auto wants = [&](int stage) {
    return std::find(options.stages.begin(), options.stages.end(), stage) != options.stages.end();
  };
  const ScreenPlan plan = make_screen_plan(with_stages(options, {1, 2}), fleet.hosts,
                                           fleet.gpus_per_node, fleet.fake, fleet.up());
  if (options.dry_run) {
    std::cout << describe_screen_plan(make_screen_plan(options, fleet.hosts, fleet.gpus_per_node,
                                                       fleet.fake, fleet.up()),
                                      options);
    for (const auto& n : fleet.nodes) {
      if (n.status != "ok") std::cout << "Note: " << n.host << " left out: " << n.message << "\n";
    }
    return 0;
  }
  RunResult run = screen_run_result(argv, fleet, options);
  const std::string out_dir = options.out_dir.empty() ? default_out_dir() : options.out_dir;
  const DirectoryLock lock(out_dir);
  install_interrupt_handlers();
  logging::info("screen: {} node(s) x {} GPU(s), estimated {:.0f} s; results in {}",
                fleet.nodes.size(), fleet.gpus_per_node, plan.estimated_s, out_dir);
  const SweepOptions sweep = as_sweep(options);
  Collected collected;
  run_node_stages(options, sweep, plan, fleet, collected);
  std::size_t next = 0;
  for (const auto& n : plan.node_launches) next += n.size();
  ScreenPlan pairs;
  if (wants(3) && !interrupt_flag().load()) {
    pairs = make_screen_plan(with_stages(options, {3}), fleet.hosts, fleet.gpus_per_node,
                             fleet.fake, fleet.up(), next);
    run_pair_stage(options, sweep, pairs, fleet, collected);
  }
  ScreenSection section = make_section(options, fleet, plan, pairs, collected);
  std::sort(collected.points.begin(), collected.points.end(),
            [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
  section.findings = find_fleet_outliers(section, collected.points);
  section.measured_s = monotonic_seconds() - start;
  run.points = std::move(collected.points);
  run.interrupted = interrupt_flag().load();
  run.finished_at = utc_now_iso8601();
  run.plan = plan_to_json(combined_plan({&plan, &pairs}));
  run.screen = section;
  const bool ok = finish_run(sweep, run, out_dir, sinks);
  if (run.interrupted) return static_cast<int>(ExitCode::interrupted);
  return ok ? screen_exit_code(section) : static_cast<int>(ExitCode::environment);
}

}  // namespace mgbench
