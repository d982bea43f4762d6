// What a sweep writes, not only how many points and the exit code: every planned point once,
// with its parameters, devices, status, samples, statistics, metric and verification, in a
// results.json whose plan and scaling tables match; a wrong point is `wrong` with its message.
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "support.hpp"
#include "sweep_support.hpp"

using mgbench::Status;
using mgbench::test::kQuiet;
using mgbench::test::kSelftestEnv;
using mgbench::test::run_mgbench;

TEST_CASE("a selftest sweep writes every point with its content") {
  const std::string out = mgbench::test::temp_dir("content");
  const auto r = run_mgbench(
      "sweep --workloads selftest --param behavior=ok,wrong --param batch=1,2 --gpus 1,2 --out " +
          out + kQuiet,
      kSelftestEnv);
  CHECK(r.exit_code == 3);  // the wrong points
  const auto run = mgbench::load_results(out + "/results.json");
  REQUIRE(run.points.size() == 8);
  CHECK(run.plan.at("groups").size() == 2);
  std::map<std::tuple<std::string, int, int>, int> seen;
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    const auto& p = run.points[i];
    INFO("point " << i << ": " << p.params.dump());
    CHECK(p.index == i);
    CHECK(p.workload == "selftest");
    const std::string behavior = p.params.text("behavior");
    const auto batch = static_cast<int>(p.params.integer("batch"));
    ++seen[{behavior, batch, p.gpus}];
    REQUIRE(p.devices.size() == static_cast<std::size_t>(p.gpus));
    for (int d = 0; d < p.gpus; ++d) CHECK(p.devices[static_cast<std::size_t>(d)] == d);
    CHECK(p.samples == std::vector<double>{1e-3, 1e-3, 1e-3});
    CHECK(p.stats.n == 3);
    CHECK(p.stats.median == Approx(1e-3));
    CHECK(p.metrics.at("ops_per_s").get<double>() == Approx(1000.0 * p.gpus));
    CHECK_FALSE(p.started_at.empty());
    if (behavior == "ok") {
      CHECK(p.status == Status::ok);
      CHECK(p.message.empty());
      CHECK(p.verification.at("ok") == true);
    } else {
      CHECK(p.status == Status::wrong);
      CHECK(p.message == "selftest: deliberately wrong");
      CHECK(p.verification.at("ok") == false);
    }
  }
  CHECK(seen.size() == 8);  // each (behavior, batch, GPU count) exactly once
  CHECK_FALSE(run.interrupted);
  CHECK(run.presentation.count("selftest") == 1);
  // The scaling tables cover the ok points at both GPU counts.
  CHECK_FALSE(run.scaling.empty());
  std::filesystem::remove_all(out);
}
