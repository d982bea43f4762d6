// `mgbench sweep` once its options are parsed: probe, plan, run every group through the
// orchestrator, then the end of the sweep: derived tables, files, sinks, exit code.

#include <filesystem>
#include <functional>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/store/history.hpp"
#include "mgbench/analysis/peaks.hpp"
#include "mgbench/analysis/scaling.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "mgbench/analysis/verdict.hpp"
#include "mgbench/run/sweep.hpp"
#include "mgbench/run/device_choice.hpp"
#include "mgbench/model/redact.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/launch_probe.hpp"
#include "mgbench/run/directory_lock.hpp"
#include "mgbench/run/journal.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/version.hpp"

namespace mgbench {

int sweep_exit_code(const RunResult& run) {
  if (run.interrupted) return static_cast<int>(ExitCode::interrupted);
  bool wrong = false, failed = false;
  for (const auto& p : run.points) {
    wrong = wrong || p.status == Status::wrong;
    failed = failed || p.status == Status::failed || p.status == Status::timeout;
  }
  if (wrong) return static_cast<int>(ExitCode::wrong);
  if (failed) return static_cast<int>(ExitCode::environment);
  return 0;
}

namespace {

// One step after the points ran. Its failure is logged in one line and makes the sweep exit 4;
// the steps after it still run, and results.json is written regardless.
bool guarded(const std::string& what, const std::function<void()>& step) {
  try {
    step();
    return true;
  } catch (const std::exception& e) {
    logging::error("{}: {}", what, e.what());
    return false;
  }
}

bool add_summaries(RunResult& run) {
  bool ok = true;
  for (const auto& w : workloads()) {
    if (!w.summarizer()) continue;
    std::vector<PointResult> mine;
    for (const auto& p : run.points) {
      if (p.workload == w.name()) mine.push_back(p);
    }
    if (mine.empty()) continue;
    ok = guarded("summary of " + w.name(),
                 [&] { run.summaries[w.name()] = w.summarizer()(mine); }) && ok;
  }
  return ok;
}

// The presentation of every workload that has points: results.json says how to show itself.
void add_presentation(RunResult& run) {
  for (const auto& p : run.points) {
    if (run.presentation.count(p.workload) != 0) continue;
    if (const Workload* w = find_workload(p.workload)) {
      run.presentation.emplace(p.workload, w->presentation());
    }
  }
}

}  // namespace

void refresh_derived(RunResult& run) {
  for (const auto& p : run.points) {
    if (find_workload(p.workload) != nullptr) run.presentation.erase(p.workload);
  }
  add_presentation(run);
  (void)add_summaries(run);  // a summary that fails keeps the stored one (logged)
  // Scaling and verdicts follow the build too, in the mode the sweep ran with (a malformed
  // setting keeps the stored analysis, logged).
  (void)guarded("scaling analysis", [&] {
    const Json& settings = run.settings.is_object() ? run.settings : Json::object();
    const auto each_it = settings.find("baseline_each");
    const bool each = each_it != settings.end() && each_it->is_boolean() && each_it->get<bool>();
    RunResult copy = run;
    analyse_run(copy, scaling_mode_of(run), each);
    run.scaling = std::move(copy.scaling);
    run.verdicts = std::move(copy.verdicts);
    run.summaries = std::move(copy.summaries);
  });
  (void)guarded("% of peak", [&] { run.peaks = compute_peaks(run); });
}

RunResult started_run(const std::vector<std::string>& argv) {
  RunResult run;
  run.tool = Json{{"name", "mgbench"},
                  {"version", MGBENCH_VERSION_STRING},
                  {"git_revision", MGBENCH_GIT_REVISION}};
  run.argv = argv;
  run.started_at = utc_now_iso8601();
  run.host = host_name();
  return run;
}

bool finish_run(const SweepOptions& options, RunResult& run, const std::string& out_dir,
                const RunSinks& sinks) {
  add_presentation(run);
  bool ok = add_summaries(run);
  ok = guarded("scaling analysis",
                [&] { analyse_run(run, options.scaling, options.baseline_each); }) &&
       ok;
  ok = guarded("% of peak", [&] { run.peaks = compute_peaks(run); }) && ok;
  ok = guarded("telemetry series", [&] { run.telemetry_series = build_run_series(run.points); }) &&
       ok;
  // results.json first: whatever happens later, the numbers are on disk. With --redact every
  // file meant for sharing is written from the redacted copy; the local history keeps the run.
  const RunResult shared = options.redact ? redact_run(run) : RunResult{};
  const RunResult& written = options.redact ? shared : run;
  const std::string results_path = out_dir + "/results.json";
  save_results(written, results_path);
  if (!options.json_path.empty()) {
    ok = guarded("--json", [&] { save_results(written, options.json_path); }) && ok;
  }
  for (const auto& sink : sinks) {
    ok = guarded(sink.name, [&] { sink.write(written, out_dir); }) && ok;
  }
  if (!options.no_history && !run.interrupted) {
    const std::string db = options.db_path.empty() ? default_history_path() : options.db_path;
    ok = guarded("history", [&] { record_run(run, db); }) && ok;
  }
  logging::info("results: {}", results_path);
  return ok;
}

int finish_sweep(const SweepOptions& options, RunResult& run, const std::string& out_dir,
                 const RunSinks& sinks) {
  const bool ok = finish_run(options, run, out_dir, sinks);
  const int code = sweep_exit_code(run);
  return code != 0 || ok ? code : static_cast<int>(ExitCode::environment);
}

void record_test_hooks(Json& environment) {
  const auto hooks = test_hooks::active();
  if (hooks.empty()) return;
  std::string list;
  for (const auto& [name, value] : hooks) list += (list.empty() ? "" : ", ") + name + "=" + value;
  logging::warn("test hooks active ({}): these results are not real measurements", list);
  environment["test_hooks"] = hooks;
  environment["fingerprint_hash"] = fingerprint_hash(environment);
}

namespace {

void print_plan(const Plan& plan, const LaunchOptions& launch, std::ostream& out) {
  out << fmt::format("Plan: {} group(s), {} point(s), GPU counts {}, devices {}, estimated {:.0f} s\n",
                     plan.groups.size(), plan.total_points, fmt::join(plan.gpu_counts, ","),
                     fmt::join(plan.devices, ","), plan.estimated_s);
  for (const auto& g : plan.groups) {
    // Joined first, then padded: a width on the join would pad every device number.
    const std::string devices = fmt::format("{}", fmt::join(g.devices, ","));
    out << fmt::format("  group {:>3}  {:<12} GPUs {:<16} {:>4} point(s){}\n", g.index,
                       g.workload, devices, g.points.size(),
                       g.purpose == "baseline" ? "  (baseline each)" : "");
    if (group_launcher(launch.launcher).processes_per_gpu()) {
      out << fmt::format("      {} node(s) x {} GPU(s){}: {}\n", g.placement.nodes,
                         g.placement.gpus_per_node,
                         g.placement.hosts.empty()
                             ? std::string()
                             : fmt::format(" on {}", fmt::join(g.placement.hosts, ",")),
                         launch_command_line(launch, g.placement, g.devices));
    }
    for (const auto& p : g.points) {
      out << fmt::format("      #{:<5} {}\n", p.index, describe_params(p.params));
    }
  }
  for (const auto& note : plan.notes) out << "Note: " << note << "\n";
}

// The fingerprint's `nvidia-smi topo -m` style matrix (rows by device ordinal); empty when
// the probe had no NVML.
TopologyLabels topology_of(const ProbeResult& probed) {
  const Json& env = probed.environment;
  if (!env.is_object() || !env.contains("topology")) return {};
  const Json& matrix = env["topology"].value("matrix", Json::array());
  TopologyLabels labels;
  for (const auto& row : matrix) {
    if (!row.is_array()) return {};
    std::vector<std::string> r;
    for (const auto& cell : row) r.push_back(cell.is_string() ? cell.get<std::string>() : "?");
    labels.push_back(std::move(r));
  }
  return labels;
}

// The probe: a local worker, or with mpirun or srun one rank on each node (the orchestrator may
// be a login node without a GPU; it loads no CUDA). The nodes' reports take the aliases out of
// the host list and are compared like `doctor --hosts` compares hosts.
ProbeResult probe_for_sweep(SweepOptions& options) {
  const bool doctor = !options.skip_doctor && !options.dry_run;
  if (!group_launcher(options.launch.launcher).processes_per_gpu()) {
    return probe(options.isolation, doctor);
  }
  // As long as a local probe may take: not --group-timeout, which can be seconds.
  ProbeResult probed = probe_launched(options.launch, doctor, kProbeTimeoutSeconds);
  std::vector<std::string> warnings;
  options.launch.hosts = distinct_hosts(options.launch.hosts, probed.nodes, &warnings);
  for (const auto& w : warnings) logging::warn("{}", w);
  check_local_node_size(options.launch, probed.nodes);
  if (doctor) {
    const auto checks = node_checks(probed.nodes);
    for (const auto& c : checks) {
      if (c.status == CheckStatus::fail || c.status == CheckStatus::warn) {
        logging::warn("the nodes differ: {}: {}", c.name, c.finding);
      }
    }
    add_checks(probed.doctor, checks);
  }
  const NodeReport first = probed.nodes.empty() ? NodeReport{} : probed.nodes.front();
  const int per_node = planned_gpus_per_node(options.launch, first.gpus_seen);
  if (first.node_gpus > first.gpus_seen && per_node < first.node_gpus) {
    logging::warn("a task on {} sees {} of the node's {} GPUs (per-task GPU binding or "
                  "CUDA_VISIBLE_DEVICES): the plan takes {} per node; --gpus-per-node sets it",
                  first.host, first.gpus_seen, first.node_gpus, per_node);
  }
  return probed;
}

}  // namespace

int run_sweep(const SweepOptions& given, const std::vector<std::string>& argv,
              std::map<std::size_t, PointResult> finished, const RunSinks& sinks) {
  // Arguments first: a bad workload, dtype or parameter is named before any device is probed.
  validate_sweep_arguments(given);
  apply_nvls(given);  // before the probe: the environment it records is the workers'
  check_launcher_available(given.launch.launcher, !given.dry_run);
  SweepOptions options = given;  // the host list loses the aliases the probe finds
  // Devices: a dry run with --gpus needs no GPU at all.
  ProbeResult probed;
  int visible = -1;
  if (!(options.dry_run && !options.gpu_counts.empty())) {
    probed = probe_for_sweep(options);
    visible = static_cast<int>(probed.inventory.devices.size());
  }
  Plan plan = make_plan(options, visible);
  if (options.devices.empty() && visible > 1) apply_topology(plan, topology_of(probed));
  const bool resuming = !options.resume_dir.empty();
  if (resuming) check_resumed_points(plan, finished);
  if (options.dry_run) {
    print_plan(plan, options.launch, std::cout);
    return 0;
  }
  for (const auto& note : plan.notes) logging::warn("{}", note);

  RunResult run = started_run(argv);
  run.run_id = options.run_id.empty() ? make_run_id() : options.run_id;
  run.environment = probed.environment.is_object() ? probed.environment : Json::object();
  record_test_hooks(run.environment);
  run.environment["inventory"] = probed.inventory;
  run.doctor = probed.doctor;
  run.settings = options.settings;
  run.settings["isolation"] = options.isolation == Isolation::process ? "process" : "none";
  run.settings["scaling"] = to_string(options.scaling);
  run.settings["baseline_each"] = options.baseline_each;
  run.settings["launcher"] = to_string(options.launch.launcher);
  if (options.price_per_gpu_hour > 0) {
    run.settings["price_per_gpu_hour"] = options.price_per_gpu_hour;
  }
  run.plan = plan_to_json(plan);

  const std::string out_dir = options.out_dir.empty() ? default_out_dir() : options.out_dir;
  const DirectoryLock lock(out_dir);  // held until the sweep ends: one sweep per directory
  Journal journal(out_dir + "/journal.jsonl",
                  Json{{"argv", argv}, {"run_id", run.run_id}, {"started_at", run.started_at},
                       {"tool", run.tool}, {"plan", run.plan},
                       {"plan_options", plan_options_to_json(given)},
                       {"test_hooks", test_hooks::active()}},
                  sweep_journal_mode(out_dir, resuming, options.force));
  logging::info("{} point(s) in {} group(s); results in {}", plan.total_points, plan.groups.size(),
                out_dir);

  install_interrupt_handlers();
  Orchestrator orchestrator(options, plan, &journal, std::move(finished));
  orchestrator.run();
  run.points = orchestrator.results();
  run.interrupted = orchestrator.interrupted();
  run.finished_at = utc_now_iso8601();
  const bool journal_closed = journal.close();
  const int code = finish_sweep(options, run, out_dir, sinks);
  if (!orchestrator.launch_error().empty()) {
    // A launch did not start: the sweep stopped there (one line; --resume continues it).
    logging::error("{}", orchestrator.launch_error());
    const int interrupted = static_cast<int>(ExitCode::interrupted);
    return code == interrupted ? code : static_cast<int>(ExitCode::environment);
  }
  if (journal_closed && orchestrator.journal_error().empty()) return code;
  // The journal could not be written: results.json holds what ran; exit 4 (one line logged).
  if (orchestrator.journal_error().empty()) logging::error("{}", journal.error());
  return code == static_cast<int>(ExitCode::interrupted) ? code
                                                         : static_cast<int>(ExitCode::environment);
}

}  // namespace mgbench
