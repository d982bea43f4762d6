// The end of a sweep: derived tables, files, sinks, exit code.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "mgbench/error.hpp"
#include "mgbench/history.hpp"
#include "mgbench/scaling.hpp"
#include "mgbench/sinks.hpp"
#include "mgbench/telemetry.hpp"
#include "mgbench/verdict.hpp"
#include "mgbench/sweep.hpp"
#include "mgbench/workload.hpp"

namespace mgbench {

namespace {
struct RegisteredSink {
  std::string name;
  int order;
  RunSinkFn fn;
};
std::vector<RegisteredSink>& sink_registry() {
  static std::vector<RegisteredSink> sinks;
  return sinks;
}
}  // namespace

bool register_run_sink(std::string name, int order, RunSinkFn fn) {
  auto& sinks = sink_registry();
  sinks.push_back({std::move(name), order, std::move(fn)});
  std::stable_sort(sinks.begin(), sinks.end(),
                   [](const RegisteredSink& a, const RegisteredSink& b) { return a.order < b.order; });
  return true;
}

void run_sinks(const RunResult& run, const SinkContext& ctx) {
  for (const auto& sink : sink_registry()) {
    try {
      sink.fn(run, ctx);
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", sink.name, e.what());
    }
  }
}

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

void add_summaries(RunResult& run) {
  for (const auto& w : workloads()) {
    if (!w.summarizer()) continue;
    std::vector<PointResult> mine;
    for (const auto& p : run.points) {
      if (p.workload == w.name()) mine.push_back(p);
    }
    if (mine.empty()) continue;
    try {
      run.summaries[w.name()] = w.summarizer()(mine);
    } catch (const std::exception& e) {
      spdlog::warn("summary of {} failed: {}", w.name(), e.what());
    }
  }
}

}  // namespace

int finish_sweep(const SweepOptions& options, RunResult& run, const std::string& out_dir) {
  add_summaries(run);
  try {
    const ScalingMode mode =
        options.scaling == ScalingModeOption::strong ? ScalingMode::strong : ScalingMode::weak;
    const auto series = compute_scaling(run.points, mode);
    run.scaling = scaling_to_json(series);
    std::vector<PointResult> single;
    for (const auto& p : run.points) {
      if (p.gpus == 1) single.push_back(p);
    }
    const auto outliers = options.baseline_each ? baseline_outliers(single) : std::vector<Json>{};
    if (options.baseline_each) run.summaries["baseline_each"] = outliers;
    run.verdicts = compute_verdicts(series, run.points, outliers);
  } catch (const std::exception& e) {
    spdlog::error("scaling analysis failed: {}", e.what());
  }
  try {
    run.telemetry_series = build_run_series(run.points);
  } catch (const std::exception& e) {
    spdlog::warn("telemetry series: {}", e.what());
  }

  // results.json first: whatever happens later, the numbers are on disk.
  const std::string results_path = out_dir + "/results.json";
  save_results(run, results_path);
  if (!options.json_path.empty()) save_results(run, options.json_path);
  run_sinks(run, SinkContext{options, out_dir});
  if (!options.no_history && !run.interrupted) {
    try {
      record_run(run, options.db_path.empty() ? default_history_path() : options.db_path);
    } catch (const std::exception& e) {
      // The results are already written; a broken database costs only the history entry.
      spdlog::error("history: {}", e.what());
    }
  }
  spdlog::info("results: {}", results_path);
  return sweep_exit_code(run);
}

}  // namespace mgbench
