#pragma once
// Result sinks: what happens to a finished run besides results.json (console tables, CSV,
// Markdown/HTML reports). reports/ registers its sinks here at link time, so the harness
// never includes reports/ (dependency direction kernels <- benchmarks -> harness <- reports).
#include <functional>
#include <string>

#include "mgbench/macros.hpp"
#include "mgbench/plan.hpp"
#include "mgbench/results.hpp"

namespace mgbench {

struct SinkContext {
  const SweepOptions& options;
  std::string out_dir;
};

using RunSinkFn = std::function<void(const RunResult& run, const SinkContext& ctx)>;

// Lower `order` runs first. Returns true (for static registration).
bool register_run_sink(std::string name, int order, RunSinkFn fn);
// Runs every sink; a failing sink is logged and does not stop the others.
void run_sinks(const RunResult& run, const SinkContext& ctx);

}  // namespace mgbench

#define MGBENCH_REGISTER_RUN_SINK(name, order, fn)                                 \
  static const bool MGBENCH_CONCAT(mgbench_sink_registered_, __LINE__) = \
      ::mgbench::register_run_sink(name, order, fn)
