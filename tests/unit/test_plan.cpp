// Plan expansion: groups per GPU count, points from axes, defaults and overrides.
#include <set>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/model/workload.hpp"

namespace {

// A workload only the tests see: two axes, cartesian product.
const bool registered = mgbench::register_workload(
    mgbench::Workload("zz_test_plan")
        .summary("test-only workload")
        .axis(mgbench::Axis::text("dtype", {"a", "b"}).allowed({"a", "b", "c"}).quick({"a"}))
        .axis(mgbench::Axis::integer("batch", {"8", "16"}))
        .throughput("x", "units"));

mgbench::SweepOptions options_for_test_workload() {
  mgbench::SweepOptions o;
  o.workloads = {"zz_test_plan"};
  return o;
}

}  // namespace

TEST_CASE("a plan has one group per GPU count with the cartesian product of axis values") {
  REQUIRE(registered);
  auto o = options_for_test_workload();
  o.gpu_counts = {1, 2, 4};
  const auto plan = mgbench::make_plan(o, 4);
  REQUIRE(plan.groups.size() == 3);
  CHECK(plan.groups[0].devices == std::vector<int>{0});
  CHECK(plan.groups[2].devices == std::vector<int>{0, 1, 2, 3});
  CHECK(plan.groups[1].points.size() == 4);
  CHECK(plan.total_points == 12);
  std::set<std::size_t> indices;
  for (const auto& g : plan.groups) {
    for (const auto& p : g.points) indices.insert(p.index);
  }
  CHECK(indices.size() == 12);  // every point has its own index
}

TEST_CASE("option --devices picks the physical GPUs in the given order") {
  auto o = options_for_test_workload();
  o.devices = {3, 1};
  o.gpu_counts = {2};
  const auto plan = mgbench::make_plan(o, 4);
  REQUIRE(plan.groups.size() == 1);
  CHECK(plan.groups[0].devices == std::vector<int>{3, 1});
}

TEST_CASE("profile, --dtypes, --batch-sizes and --param change the axis values") {
  auto o = options_for_test_workload();
  o.gpu_counts = {1};
  o.profile = mgbench::Profile::quick;
  CHECK(mgbench::make_plan(o, 1).total_points == 2);  // quick: dtype a only
  o.profile = mgbench::Profile::standard;
  o.dtypes = {"c"};
  o.batch_sizes = {"32", "64", "128"};
  const auto plan = mgbench::make_plan(o, 1);
  REQUIRE(plan.total_points == 3);
  CHECK(plan.groups[0].points[0].params["dtype"] == "c");
  CHECK(plan.groups[0].points[2].params["batch"] == 128);
  o.param_overrides["batch"] = {"7"};
  CHECK(mgbench::make_plan(o, 1).total_points == 1);
}

TEST_CASE("option --baseline each adds a 1-GPU group on every other selected GPU") {
  auto o = options_for_test_workload();
  o.gpu_counts = {1, 4};
  o.baseline_each = true;
  const auto plan = mgbench::make_plan(o, 4);
  int baseline = 0;
  std::set<int> devices;
  for (const auto& g : plan.groups) {
    if (g.purpose == "baseline") {
      ++baseline;
      devices.insert(g.devices.at(0));
    }
  }
  CHECK(baseline == 3);
  CHECK(devices == std::set<int>{1, 2, 3});
}

TEST_CASE("option --batch-sizes auto doubles the batch from the default start") {
  auto o = options_for_test_workload();
  o.gpu_counts = {1};
  o.dtypes = {"a"};
  o.batch_auto = true;
  const auto plan = mgbench::make_plan(o, 1);
  REQUIRE(plan.total_points >= 10);
  CHECK(plan.groups[0].points[0].params["batch"] == 8);
  CHECK(plan.groups[0].points[1].params["batch"] == 16);
}

TEST_CASE("a dry run without a GPU needs --gpus; with it, devices are assumed") {
  auto o = options_for_test_workload();
  CHECK_THROWS_AS(mgbench::make_plan(o, -1), mgbench::UsageError);
  o.gpu_counts = {1, 2, 4, 8};
  const auto plan = mgbench::make_plan(o, -1);
  CHECK(plan.groups.back().devices.size() == 8);
  CHECK_THROWS_AS(mgbench::make_plan(o, 0), mgbench::EnvironmentError);
}

TEST_CASE("sizes parse with binary units and reject garbage") {
  CHECK(mgbench::parse_size("4096", "x") == 4096);
  CHECK(mgbench::parse_size("64K", "x") == 65536);
  CHECK(mgbench::parse_size("1G", "x") == (1ULL << 30));
  CHECK(mgbench::parse_size("16MiB", "x") == (16ULL << 20));
  CHECK_THROWS_AS(mgbench::parse_size("12Q", "x"), mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::parse_size("-1", "x"), mgbench::UsageError);
  CHECK(mgbench::format_bytes(1ULL << 30) == "1 GiB");
  CHECK(mgbench::format_bytes(8) == "8 B");
}
