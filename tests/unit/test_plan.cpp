// Plan expansion: groups per GPU count, points from axes, defaults and overrides.
#include <optional>
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
  CHECK(plan.groups[0].points[0].params.text("dtype") == "c");
  CHECK(plan.groups[0].points[2].params.integer("batch") == 128);
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
  CHECK(plan.groups[0].points[0].params.integer("batch") == 8);
  CHECK(plan.groups[0].points[1].params.integer("batch") == 16);
}

TEST_CASE("a dry run without a GPU needs --gpus, with it, devices are assumed") {
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

namespace {

// One ok result per planned point, as a worker would report it: step time from a fixed
// global batch (256 samples take 0.2 s on one GPU, a little longer than 1/N on N).
std::vector<mgbench::PointResult> results_of(const mgbench::Plan& plan) {
  std::vector<mgbench::PointResult> results;
  for (const auto& g : plan.groups) {
    for (const auto& p : g.points) {
      mgbench::PointResult r;
      r.index = p.index;
      r.workload = g.workload;
      r.params = p.params;
      r.gpus = static_cast<int>(g.devices.size());
      r.devices = g.devices;
      r.status = mgbench::Status::ok;
      const double global = static_cast<double>(p.params.integer("batch") * r.gpus);
      r.stats.median = 0.2 * global / 256.0 * (1.0 + 0.05 * (r.gpus - 1)) / r.gpus;
      r.stats.n = 10;
      r.metrics["x"] = global / r.stats.median;
      results.push_back(r);
    }
  }
  return results;
}

std::optional<mgbench::ThroughputMetric> test_lookup(const std::string&) {
  return mgbench::ThroughputMetric{"x", "units"};
}

}  // namespace

TEST_CASE("strong mode with --gpus 1,2,4 divides each global batch and yields full series") {
  auto o = options_for_test_workload();
  o.gpu_counts = {1, 2, 4};
  o.dtypes = {"a"};
  o.batch_sizes = {"256", "64"};
  o.scaling = mgbench::ScalingMode::strong;
  const auto plan = mgbench::make_plan(o, 4);
  REQUIRE(plan.groups.size() == 3);
  CHECK(plan.notes.empty());
  for (const auto& g : plan.groups) {
    const int n = static_cast<int>(g.devices.size());
    REQUIRE(g.points.size() == 2);
    CHECK(g.points[0].params.integer("batch") == 256 / n);
    CHECK(g.points[1].params.integer("batch") == 64 / n);
  }
  const auto series =
      mgbench::compute_scaling(results_of(plan), mgbench::ScalingMode::strong, test_lookup);
  REQUIRE(series.size() == 2);
  for (const auto& s : series) {
    CAPTURE(s.params.dump());
    CHECK(s.mode == "strong");
    REQUIRE(s.rows.size() == 3);
    CHECK(s.rows[2].gpus == 4);
  }
}

TEST_CASE("strong mode leaves out a global batch the GPU count does not divide, with a note") {
  auto o = options_for_test_workload();
  o.gpu_counts = {1, 3};
  o.dtypes = {"a"};
  o.batch_sizes = {"96", "64", "2"};
  o.scaling = mgbench::ScalingMode::strong;
  const auto plan = mgbench::make_plan(o, 3);
  REQUIRE(plan.groups.size() == 2);
  REQUIRE(plan.groups[1].points.size() == 1);  // only 96 = 3 x 32
  CHECK(plan.groups[1].points[0].params.integer("batch") == 32);
  REQUIRE(plan.notes.size() == 2);
  CHECK(plan.notes[0].find("global batch 64 on 3 GPUs") != std::string::npos);
  CHECK(plan.notes[1].find("global batch 2 on 3 GPUs") != std::string::npos);
  const auto series =
      mgbench::compute_scaling(results_of(plan), mgbench::ScalingMode::strong, test_lookup);
  REQUIRE(series.size() == 3);  // 96 on 1 and 3 GPUs; 64 and 2 on one GPU only
  std::size_t two_rows = 0;
  for (const auto& s : series) two_rows += s.rows.size() == 2 ? 1 : 0;
  CHECK(two_rows == 1);
}

TEST_CASE("weak mode keeps the per-GPU batch on every GPU count") {
  auto o = options_for_test_workload();
  o.gpu_counts = {1, 3};
  o.dtypes = {"a"};
  o.batch_sizes = {"64"};
  const auto plan = mgbench::make_plan(o, 3);
  REQUIRE(plan.groups.size() == 2);
  CHECK(plan.groups[1].points.at(0).params.integer("batch") == 64);
  CHECK(plan.notes.empty());
}

TEST_CASE("option --baseline each with --gpus 2,4 measures GPU 0 alone too") {
  auto o = options_for_test_workload();
  o.gpu_counts = {2, 4};
  o.baseline_each = true;
  const auto plan = mgbench::make_plan(o, 4);
  std::set<int> alone;
  for (const auto& g : plan.groups) {
    if (g.purpose == "baseline") alone.insert(g.devices.at(0));
  }
  CHECK(alone == std::set<int>{0, 1, 2, 3});
}

namespace {

// A workload whose "wide" points need at least 2 GPUs (Workload::fits).
const bool registered_fits = mgbench::register_workload(
    mgbench::Workload("zz_test_fits")
        .summary("test-only workload")
        .axis(mgbench::Axis::text("kind", {"narrow", "wide"}))
        .fits([](const mgbench::Params& p, int gpus, int) {
          return p.text("kind") == "wide" && gpus < 2 ? "wide needs 2 GPUs" : "";
        })
        .throughput("x", "units"));

}  // namespace

TEST_CASE("points that cannot run on a GPU count are left out of its group, with a note") {
  REQUIRE(registered_fits);
  mgbench::SweepOptions o;
  o.workloads = {"zz_test_fits"};
  o.gpu_counts = {1, 2};
  const auto plan = mgbench::make_plan(o, 2);
  REQUIRE(plan.groups.size() == 2);
  REQUIRE(plan.groups[0].points.size() == 1);
  CHECK(plan.groups[0].points[0].params.text("kind") == "narrow");
  CHECK(plan.groups[1].points.size() == 2);
  CHECK(plan.total_points == 3);
  bool noted = false;
  for (const auto& n : plan.notes) {
    noted = noted || n == "zz_test_fits on 1 GPU: 1 point left out: wide needs 2 GPUs";
  }
  CHECK(noted);
}
