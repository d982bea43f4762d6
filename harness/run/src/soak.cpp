// `mgbench soak`: the load runs in one worker process (the sweep's worker, one point per window,
// back to back); the orchestrator side collects each window as it streams in, watches XIDs and
// temperatures, stops early when it must, and keeps every window measured whatever happens.
#include "mgbench/run/soak.hpp"

#include <chrono>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/model/telemetry_keys.hpp"
#include "mgbench/platform/subprocess.hpp"
#include "mgbench/run/directory_lock.hpp"
#include "mgbench/run/orchestrator.hpp"
#include "mgbench/run/worker_protocol.hpp"
#include "soak_monitor.hpp"

namespace mgbench {

namespace {

SweepOptions as_sweep(const SoakOptions& o, const std::vector<int>& devices, int gpus) {
  SweepOptions s;
  s.workloads = {o.workload};
  s.devices = devices;
  s.gpu_counts = {gpus};
  s.param_overrides = o.param_overrides;
  s.settings = soak_window_settings(o.settings, o.window_s);
  s.out_dir = o.out_dir;
  s.json_path = o.json_path;
  s.no_report = o.no_report;
  s.no_history = o.no_history;
  s.db_path = o.db_path;
  s.verbosity = o.verbosity;
  s.skip_doctor = true;
  return s;
}

// The one point the soak repeats: the first point the sweep would plan for this device set.
Params load_params(const SoakOptions& o, const std::vector<int>& devices, int visible) {
  const int gpus = static_cast<int>(devices.size());
  const Plan plan = make_plan(as_sweep(o, devices, gpus), visible);
  for (const auto& g : plan.groups) {
    if (g.devices == devices && !g.points.empty()) {
      if (g.points.size() > 1) {
        logging::warn("{}: {} points planned, the soak repeats the first: {}", o.workload,
                      g.points.size(), describe_params(g.points.front().params));
      }
      return g.points.front().params;
    }
  }
  throw UsageError(fmt::format("{} plans no point on {} GPU(s)", o.workload, gpus));
}

std::vector<int> choose_devices(const SoakOptions& o, const DeviceInventory& inventory) {
  const int visible = static_cast<int>(inventory.devices.size());
  if (o.devices.empty()) {
    std::vector<int> all;
    for (int i = 0; i < visible; ++i) all.push_back(i);
    return all;
  }
  for (int d : o.devices) {
    if (d >= visible) {
      throw UsageError(fmt::format("--gpus {} does not exist: {} CUDA device(s) visible", d,
                                   visible));
    }
  }
  return o.devices;
}

struct SoakRun {
  std::vector<PointResult> points;
  std::vector<SoakWindow> windows;
  std::vector<SoakEvent> events;
  std::string stopped_early;  // why the soak ended before its duration
  bool interrupted = false;
  double measured_s = 0;  // from the worker's start to the last window's end
};

// The window of one point: each GPU's share of the headline throughput (by its own median
// time), and its telemetry.
SoakWindow window_of(const PointResult& p, double t0, double t1, const Json& telemetry,
                     const std::string& metric) {
  SoakWindow w;
  w.index = p.index;
  w.t_start_s = t0;
  w.t_end_s = t1;
  w.ok = p.status == Status::ok;
  const double total = p.metrics.value(metric, 0.0);
  const double share = p.gpus > 0 ? total / p.gpus : 0;
  for (std::size_t i = 0; i < p.devices.size(); ++i) {
    SoakGpuWindow g;
    g.device = p.devices[i];
    g.throughput = w.ok ? share : 0;
    for (const auto& r : p.ranks) {
      if (r.device == g.device && r.median_s > 0 && w.ok) {
        g.throughput = share * p.stats.median / r.median_s;
      }
    }
    for (const GpuTelemetry& t : gpu_telemetry(telemetry)) {
      if (t.device != g.device) continue;
      g.temp_c = t.temp_c.max;
      g.power_w = t.power_w.mean;
      g.sm_clock_mhz = t.sm_clock_mhz.mean;
      g.mem_clock_mhz = t.mem_clock_mhz.mean;
      g.throttle_fraction = t.throttle_fraction;
      g.throttle_reasons = t.throttle_reasons;
    }
    w.gpus.push_back(std::move(g));
  }
  return w;
}

// The first GPU of the window at or past its slowdown temperature ("" when none).
std::string too_hot(const SoakWindow& w, SoakMonitor& monitor) {
  for (const auto& g : w.gpus) {
    const auto limit = monitor.slowdown_c(g.device);
    if (g.temp_c && limit && *g.temp_c >= *limit) {
      return fmt::format("GPU {} reached {:.0f} °C in window {}, its slowdown threshold is "
                         "{:.0f} °C",
                         g.device, *g.temp_c, w.index, *limit);
    }
  }
  return "";
}

class WindowCollector {
 public:
  WindowCollector(SoakRun& run, SoakMonitor& monitor, const GroupSpec& spec, std::string metric,
                  double start_s)
      : run_(run), monitor_(monitor), spec_(spec), metric_(std::move(metric)), start_s_(start_s) {}

  void take(const PointResult& point) {
    const double t1 = monotonic_seconds() - start_s_;
    const double t0 = run_.windows.empty() ? std::max(0.0, t1 - point.wall_s)
                                           : run_.windows.back().t_end_s;
    // The test fake's telemetry, when there is one, replaces what the worker measured.
    Json telemetry = monitor_.window_telemetry(point.index, spec_.devices);
    if (telemetry.is_null()) telemetry = point.telemetry;
    run_.points.push_back(point);
    run_.windows.push_back(window_of(point, t0, t1, telemetry, metric_));
    run_.measured_s = t1;
    const std::string hot = too_hot(run_.windows.back(), monitor_);
    if (!hot.empty() && run_.stopped_early.empty()) run_.stopped_early = hot;
    logging::info("window {}: {:.4g} {} (at {:.1f} s)", point.index,
                  run_.windows.back().total_throughput(), metric_, t1);
  }
  // Time the next window would end at, from the last window's length.
  double next_end_s() const {
    const auto& w = run_.windows;
    if (w.empty()) return 0;
    const double last = w.size() > 1 ? w.back().t_end_s - w[w.size() - 2].t_end_s
                                     : w.back().t_end_s - w.back().t_start_s;
    return w.back().t_end_s + last;
  }

 private:
  SoakRun& run_;
  SoakMonitor& monitor_;
  const GroupSpec& spec_;
  std::string metric_;
  double start_s_;
};

// Runs the windows in a worker until the duration is used, an XID or temperature stops it, or
// the user interrupts; every window reported before that is kept.
SoakRun run_windows(const GroupSpec& spec, SoakMonitor& monitor, double duration_s,
                    const std::string& metric) {
  SoakRun run;
  const double start = monotonic_seconds();
  WindowCollector collect(run, monitor, spec, metric, start);
  WorkerProcess worker({"worker", "--result-fd", "3"},
                       Json{{"mode", "group"}, {"group", spec}}.dump());
  LineBuffer lines;
  bool done = false;
  std::string fatal;
  auto pump = [&](int timeout_ms) {
    std::string chunk;
    const bool open = worker.read_some(chunk, timeout_ms);
    lines.append(chunk.data(), chunk.size());
    for (const auto& line : lines.take_lines()) {
      const auto m = parse_worker_line(line);
      if (!m) continue;
      if (m->kind == WorkerMessageKind::point) collect.take(m->point);
      if (m->kind == WorkerMessageKind::fatal) fatal = m->text;
      if (m->kind == WorkerMessageKind::done) done = true;
    }
    return open;
  };
  double last_progress = start;
  std::size_t seen = 0;
  bool ended = false;  // the duration is used up
  while (pump(100)) {
    for (auto& e : monitor.poll(100, run.windows.size())) {
      if (run.stopped_early.empty()) run.stopped_early = e.message;
      run.events.push_back(std::move(e));
    }
    if (run.windows.size() != seen) {
      seen = run.windows.size();
      last_progress = monotonic_seconds();
      ended = collect.next_end_s() > duration_s;
    }
    if (interrupt_flag().load()) run.interrupted = true;
    if (run.interrupted || ended || !run.stopped_early.empty()) break;
    if (monotonic_seconds() - last_progress > spec.settings.group_timeout_s) {
      run.stopped_early = fmt::format("no window finished for {:.0f} s",
                                      spec.settings.group_timeout_s);
      break;
    }
  }
  worker.kill_group();
  const double deadline = monotonic_seconds() + kWorkerDrainSeconds;
  while (pump(200) && monotonic_seconds() < deadline) {
  }
  const ExitInfo exit = worker.wait();
  if (!done && !ended && !run.interrupted && run.stopped_early.empty()) {
    run.stopped_early = fatal.empty() ? "the worker ended: " + exit.describe()
                                      : fatal + " (worker " + exit.describe() + ")";
  }
  return run;
}

}  // namespace

namespace {

Json health_of(SoakMonitor& monitor, const SoakRun& run, const Json& before, const Json& after) {
  Json events = Json::array();
  for (const auto& e : run.events) {
    events.push_back({{"kind", e.kind}, {"device", e.device}, {"value", e.value},
                      {"message", e.message}});
  }
  Json health = compare_counters(before, after);
  health["monitor"] = monitor.describe();
  health["thresholds"] = monitor.thresholds();
  health["events"] = events;
  health["counters_before"] = before;
  health["counters_after"] = after;
  return health;
}

SoakHealth judge_health(const SoakRun& run, const Json& health) {
  SoakHealth h;
  for (const auto& e : run.events) h.xid_events += e.kind == "xid" ? 1 : 0;
  h.new_uncorrected_ecc = health.value("new_uncorrected_ecc", false);
  h.row_remap_trouble = health.value("row_remap_trouble", false);
  h.stopped_early = run.stopped_early;
  return h;
}

Json soak_section(const SoakOptions& o, const GroupSpec& spec, const SoakRun& run,
                  const Json& health, const SoakAnalysis& analysis, const Workload& w) {
  return Json{{"workload", o.workload},
              {"params", spec.points.front().params},
              {"devices", spec.devices},
              {"duration_s", o.duration_s},
              {"window_s", o.window_s},
              {"measured_s", run.measured_s},
              {"metric", w.throughput_metric()},
              {"unit", w.throughput_unit()},
              {"windows", run.windows},
              {"stopped_early", run.stopped_early.empty() ? Json() : Json(run.stopped_early)},
              {"interrupted", run.interrupted},
              {"thresholds", o.thresholds},
              {"health", health},
              {"analysis", analysis}};
}

std::string percent_or_dash(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f} %", *v * 100) : "-";
}

// The verdict as one summary row (shown by the presentation's "soak" SummarySpec).
Json verdict_row(const SoakAnalysis& a, const SoakRun& run) {
  std::string reasons;
  for (const auto& r : a.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
  return Json{{"verdict", a.stable ? "runs stably" : "not stable"},
              {"windows", std::to_string(run.windows.size())},
              {"measured", fmt::format("{:.0f} s", run.measured_s)},
              {"steady", a.time_to_steady_s ? fmt::format("{:.0f} s", *a.time_to_steady_s) : "never"},
              {"degradation", percent_or_dash(a.degradation)},
              {"spread", percent_or_dash(a.gpu_spread)},
              {"slowest", a.slowest_device ? std::to_string(*a.slowest_device) : "-"},
              {"hottest", a.hottest_device ? fmt::format("GPU {}: {:.0f} °C", *a.hottest_device,
                                                         a.hottest_temp_c.value_or(0))
                                           : "-"},
              {telemetry_keys::kThrottled, std::to_string(a.throttled_spans.size())},
              {"reasons", reasons.empty() ? "-" : reasons}};
}

// The workload's own presentation plus the soak's verdict table and two time-series charts.
Presentation soak_presentation(const Workload& w) {
  Presentation p = w.presentation();
  p.summary(SummarySpec("soak", "stability soak", "docs/SOAK.md defines each figure")
                .column("verdict", "verdict")
                .column("windows", "windows")
                .column("measured", "measured")
                .column("steady", "steady after")
                .column("degradation", "degradation")
                .column("spread", "GPU spread")
                .column("slowest", "slowest GPU")
                .column("hottest", "hottest")
                .column(telemetry_keys::kThrottled, "throttled spans")
                .column("reasons", "why not stable"));
  const std::string unit = w.throughput_unit();
  p.chart(ChartSpec::timeseries("soak-throughput", "throughput")
              .titled("throughput per GPU over time")
              .y_axis(unit.empty() ? "throughput" : "throughput (" + unit + ")"));
  const telemetry_keys::Gauge& temp = telemetry_keys::kTemp;
  p.chart(ChartSpec::timeseries("soak-temperature", temp.key)
              .titled(std::string(temp.name) + " per GPU over time")
              .y_axis(temp.axis));
  return p;
}

void print_verdict(const SoakAnalysis& a, const SoakRun& run, std::ostream& out) {
  out << fmt::format("soak: {} window(s) in {:.1f} s: {}\n", run.windows.size(), run.measured_s,
                     a.stable ? "runs stably" : "NOT stable");
  if (a.time_to_steady_s) out << fmt::format("  steady after {:.1f} s\n", *a.time_to_steady_s);
  if (a.degradation) out << fmt::format("  degradation {:.2f} %\n", *a.degradation * 100);
  if (a.gpu_spread) {
    out << fmt::format("  GPU spread {:.2f} % (slowest GPU {})\n", *a.gpu_spread * 100,
                       a.slowest_device.value_or(-1));
  }
  for (const auto& r : a.reasons) out << "  - " << r << '\n';
}

RunResult soak_run_result(const std::vector<std::string>& argv, const ProbeResult& probed,
                          const SweepOptions& sweep) {
  RunResult run = started_run(argv);
  run.environment = probed.environment;
  run.environment["inventory"] = probed.inventory;
  run.settings = sweep.settings;
  run.settings["isolation"] = "process";
  run.settings["mode"] = "soak";
  return run;
}

}  // namespace

int run_soak(const SoakOptions& options, const std::vector<std::string>& argv,
             const RunSinks& sinks) {
  const Workload* workload = find_workload(options.workload);
  if (!workload) throw UsageError("unknown workload '" + options.workload + "' (see mgbench list)");
  const int asked = std::max<int>(1, static_cast<int>(options.devices.size()));
  validate_sweep_arguments(as_sweep(options, options.devices, asked));
  const ProbeResult probed = probe(Isolation::process, false);
  const std::vector<int> devices = choose_devices(options, probed.inventory);
  const SweepOptions sweep = as_sweep(options, devices, static_cast<int>(devices.size()));
  GroupSpec spec;
  spec.workload = options.workload;
  spec.devices = devices;
  spec.settings = sweep.settings;
  spec.placement.gpus_per_node = static_cast<int>(devices.size());
  const Params params =
      load_params(options, devices, static_cast<int>(probed.inventory.devices.size()));
  // One point, repeated as the windows run: more rounds than the duration holds, since the
  // orchestrator stops the worker by time.
  spec.points.push_back({0, params});
  spec.rounds = soak_window_count(options.duration_s, options.window_s) + 2;
  std::vector<std::string> bus_ids;
  for (int d : devices) bus_ids.push_back(probed.inventory.devices[static_cast<std::size_t>(d)].pci_bus_id);

  RunResult result = soak_run_result(argv, probed, sweep);
  const std::string out_dir = options.out_dir.empty() ? default_out_dir() : options.out_dir;
  const DirectoryLock lock(out_dir);
  auto monitor = make_soak_monitor(devices, bus_ids);
  logging::info("soak: {} [{}] on GPU(s) {} for {:.4g} s in {:.4g} s windows; health: {}",
                options.workload, describe_params(params), fmt::join(devices, ","),
                options.duration_s, options.window_s, monitor->describe());
  const Json before = monitor->counters();
  install_interrupt_handlers();
  const SoakRun run = run_windows(spec, *monitor, options.duration_s, workload->throughput_metric());
  const Json health = health_of(*monitor, run, before, monitor->counters());
  const SoakAnalysis analysis =
      analyze_soak(run.windows, judge_health(run, health), options.thresholds);

  result.points = run.points;
  result.interrupted = run.interrupted;
  result.finished_at = utc_now_iso8601();
  result.presentation[options.workload] = soak_presentation(*workload);
  result.soak = soak_section(options, spec, run, health, analysis, *workload);
  // A workload with its own run summary replaces this row in finish_sweep (docs/SOAK.md).
  result.summaries[options.workload] = Json{{"soak", Json::array({verdict_row(analysis, run)})}};
  const int code = finish_sweep(sweep, result, out_dir, sinks);
  print_verdict(analysis, run, std::cout);
  if (code != 0) return code;
  return analysis.stable ? 0 : static_cast<int>(ExitCode::environment);
}

}  // namespace mgbench
