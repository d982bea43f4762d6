// A CPU-only workload for testing the orchestrator's fault handling without a GPU.
// Registered only when MGBENCH_ENABLE_TEST_WORKLOADS=1 (never in normal runs); with
// MGBENCH_TEST_FAKE_DEVICES=N the device probe then reports N fake GPUs.
// Axis `behavior`: ok (fake samples), crash (abort), hang (sleep), garbage (writes junk on the
// result pipe, then ok), wrong (verification fails), slow (sleeps 300 ms, then ok).
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "mgbench/model/workload.hpp"

namespace mgbench {
namespace {

bool test_workloads_enabled() {
  const char* v = std::getenv("MGBENCH_ENABLE_TEST_WORKLOADS");
  return v && std::string(v) == "1";
}

void run_selftest_group(GroupContext& ctx) {
  for (const auto& planned : ctx.spec.points) {
    ctx.sink.point_started(planned.index);
    const std::string behavior = planned.params.value("behavior", "ok");
    if (behavior == "crash") std::abort();
    if (behavior == "hang") {
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (behavior == "garbage" && ::fcntl(3, F_GETFD) != -1) {
      const char junk[] = "this is not json\n{\"type\":\"point\",\"result\":{\"trunc\n";
      (void)!::write(3, junk, sizeof(junk) - 1);
    }
    if (behavior == "slow") std::this_thread::sleep_for(std::chrono::milliseconds(300));
    PointResult r;
    r.index = planned.index;
    r.workload = ctx.spec.workload;
    r.params = planned.params;
    r.gpus = static_cast<int>(ctx.spec.devices.size());
    r.devices = ctx.spec.devices;
    r.samples = {1.0e-3, 1.0e-3, 1.0e-3};
    r.stats = compute_statistics(r.samples);
    r.metrics = {{"ops_per_s", 1000.0 * r.gpus}};
    r.verification = {{"ok", behavior != "wrong"}};
    if (behavior == "wrong") {
      r.status = Status::wrong;
      r.message = "selftest: deliberately wrong";
    }
    r.started_at = utc_now_iso8601();
    ctx.sink.point_finished(r);
  }
}

// The table and charts every plain workload gets: op/s per point and vs the batch.
Presentation selftest_presentation() {
  return Presentation()
      .metric(MetricSpec("ops_per_s", "op/s", "op/s").format(ValueFormat::rate))
      .axis(AxisSpec("batch", "batch"))
      .table(TableSpec()
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::params())
                 .column(ColumnSpec::median_time())
                 .column(ColumnSpec::metric("ops_per_s", "op/s"))
                 .column(ColumnSpec::speedup())
                 .column(ColumnSpec::efficiency())
                 .tail())
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("rate", "ops_per_s"));
}

const bool registered =
    test_workloads_enabled() &&
    register_workload(Workload("selftest")
                          .summary("test-only: fake points and deliberate faults")
                          .axis(Axis::text("behavior", {"ok"})
                                    .allowed({"ok", "crash", "hang", "garbage", "wrong", "slow"}))
                          .axis(Axis::integer("batch", {"1"}))
                          .throughput("ops_per_s", "op/s")
                          .present(selftest_presentation())
                          .estimate_seconds_per_point(0.01)
                          .runner(run_selftest_group));

}  // namespace
}  // namespace mgbench
