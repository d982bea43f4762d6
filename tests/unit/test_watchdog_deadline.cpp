// The NCCL watchdog fires well before the orchestrator's no-progress kill, for the settings
// the sweep's own option parser produces; and a timed sample queues only a few NCCL ops
// behind the start gate.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/watchdog_deadline.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"

namespace {

using mgbench::bench::ops_per_sample;
using mgbench::bench::watchdog_deadline_s;

mgbench::RunSettings settings_from(std::vector<std::string> args) {
  args.insert(args.begin(), "sweep");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return mgbench::parse_sweep_options(static_cast<int>(argv.size()), argv.data()).settings;
}

// Windows from an idle microsecond op up to a 30 s verification.
const std::vector<double> kWindows = {0.0, 1e-6, 0.002, 0.5, 5.0, 30.0, 1e4};

}  // namespace

TEST_CASE("the armed NCCL deadline is below the orchestrator's progress timeout by default") {
  const mgbench::RunSettings s = settings_from({});
  REQUIRE(s.group_timeout_s >= 300);  // the orchestrator's no-progress kill
  for (double w : kWindows) {
    CAPTURE(w);
    CHECK(watchdog_deadline_s(s, w) <= 0.25 * s.group_timeout_s);
  }
  // A timed sample of a few ms is aborted within tens of seconds, not minutes.
  CHECK(watchdog_deadline_s(s, 0.002) < 20.0);
}

TEST_CASE("the armed NCCL deadline stays below any --group-timeout the user gives") {
  for (const char* timeout : {"3600", "60", "10", "2", "0.5"}) {
    const mgbench::RunSettings s = settings_from({"--group-timeout", timeout});
    for (double w : kWindows) {
      CAPTURE(timeout, w);
      const double d = watchdog_deadline_s(s, w);
      CHECK(d > 0);
      CHECK(d < s.group_timeout_s);
    }
  }
}

TEST_CASE("a healthy window never trips the deadline when the group timeout leaves room") {
  mgbench::RunSettings s;
  s.group_timeout_s = 3600;
  s.gate_timeout_s = 10;
  for (double w : {0.002, 1.0, 10.0}) {
    CAPTURE(w);
    // The gate may wait gate_timeout for the last rank; the window itself may run long.
    CHECK(watchdog_deadline_s(s, w) >= s.gate_timeout_s + 2 * w);
  }
}

TEST_CASE("a timed sample queues at most a few NCCL ops behind the gate") {
  mgbench::RunSettings s;
  s.target_sample_s = 0.002;
  CHECK(ops_per_sample(s, 1e-6, true) == mgbench::bench::kMaxNcclOpsPerSample);
  CHECK(ops_per_sample(s, 1e-6, false) == mgbench::bench::kMaxOpsPerSample);
  CHECK(mgbench::bench::kMaxNcclOpsPerSample <= 8);
  CHECK(ops_per_sample(s, 0.0005, true) == 4);
  CHECK(ops_per_sample(s, 1.0, true) == 1);
  CHECK(ops_per_sample(s, 0.0, false) == mgbench::bench::kMaxOpsPerSample);
}
