// `mgbench compare` logic: point matching, each verdict rule, thresholds from baseline noise,
// exit codes, the environment diff, efficiency side by side, and bad results files.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "support.hpp"

namespace {

using mgbench::Json;
using mgbench::PointResult;
using mgbench::RunResult;
using mgbench::Verdict;

// Deterministic samples around `median_s` with a relative spread of +-`spread`.
std::vector<double> samples_around(double median_s, double spread, int n, std::uint32_t seed) {
  std::vector<double> out;
  std::uint32_t state = seed * 2654435761u + 12345u;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const double u = (static_cast<double>(state >> 8) / static_cast<double>(1u << 24)) * 2.0 - 1.0;
    out.push_back(median_s * (1.0 + spread * u));
  }
  return out;
}

PointResult make_point(const std::string& workload, int size, int gpus, double median_s,
                       std::uint32_t seed, int n = 30) {
  PointResult p;
  p.index = static_cast<std::size_t>(seed);
  p.workload = workload;
  p.params = mgbench::Params{{"size", size}};
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.samples = samples_around(median_s, 0.002, n, seed);
  p.stats.n = p.samples.size();
  std::vector<double> sorted = p.samples;
  std::sort(sorted.begin(), sorted.end());
  p.stats.median = sorted.size() % 2
                       ? sorted[sorted.size() / 2]
                       : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  return p;
}

RunResult make_run(double factor, std::uint32_t seed_offset = 0) {
  RunResult run;
  run.host = "node1";
  run.started_at = "2025-01-01T00:00:00.000Z";
  run.environment =
      Json{{"versions", {{"driver", "570.86.15"}, {"cuda_runtime", "12.8"}}},
           {"gpus", Json::array({Json{{"name", "NVIDIA H200"}, {"vbios", "96.00.74"}},
                                 Json{{"name", "NVIDIA H200"}, {"vbios", "96.00.74"}}})}};
  run.points.push_back(make_point("synthetic", 1024, 1, 1e-3 * factor, 1 + seed_offset));
  run.points.push_back(make_point("synthetic", 2048, 1, 4e-3 * factor, 2 + seed_offset));
  return run;
}

const mgbench::PointComparison& only_point(const mgbench::Comparison& cmp, int size) {
  for (const auto& p : cmp.points) {
    if (p.params.integer("size") == size) return p;
  }
  FAIL("no point with size " << size);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("compare: identical configurations are the same and exit 0", "[compare]") {
  const auto cmp = mgbench::compare_runs(make_run(1.0, 0), make_run(1.0, 100));
  REQUIRE(cmp.points.size() == 2);
  CHECK(cmp.count(Verdict::same) == 2);
  CHECK(mgbench::comparison_exit_code(cmp) == 0);
}

TEST_CASE("compare: a 10 % slowdown is slower and exits 1", "[compare]") {
  const auto cmp = mgbench::compare_runs(make_run(1.0), make_run(1.10, 100));
  const auto& p = only_point(cmp, 1024);
  CHECK(p.verdict == Verdict::slower);
  CHECK(p.change == Approx(0.10).margin(0.005));
  REQUIRE(p.test.has_value());
  CHECK(p.test->p_value < 1e-6);
  CHECK(mgbench::comparison_exit_code(cmp) == 1);
}

TEST_CASE("compare: a 10 % speed-up is faster and exits 0", "[compare]") {
  const auto cmp = mgbench::compare_runs(make_run(1.0), make_run(0.90, 100));
  CHECK(cmp.count(Verdict::faster) == 2);
  CHECK(mgbench::comparison_exit_code(cmp) == 0);
}

TEST_CASE("compare: a significant effect below the threshold is the same", "[compare]") {
  const auto cmp = mgbench::compare_runs(make_run(1.0), make_run(1.01, 100));
  const auto& p = only_point(cmp, 1024);
  REQUIRE(p.test.has_value());
  CHECK(p.test->p_value < 0.05);
  CHECK(p.verdict == Verdict::same);
}

TEST_CASE("compare: a large effect without significance is the same", "[compare]") {
  RunResult base, next;
  base.points.push_back(make_point("synthetic", 1024, 1, 1e-3, 1, 3));
  next.points.push_back(make_point("synthetic", 1024, 1, 1.2e-3, 2, 3));
  const auto cmp = mgbench::compare_runs(base, next);
  REQUIRE(cmp.points.size() == 1);
  CHECK(cmp.points[0].change > 0.15);
  CHECK(cmp.points[0].test->p_value >= 0.05);  // 3 vs 3: the smallest exact p is 0.1
  CHECK(cmp.points[0].verdict == Verdict::same);
}

TEST_CASE("compare: the threshold option moves the cut", "[compare]") {
  mgbench::CompareOptions options;
  options.threshold = 0.15;
  const auto cmp = mgbench::compare_runs(make_run(1.0), make_run(1.10, 100), options);
  CHECK(cmp.count(Verdict::same) == 2);
  CHECK(mgbench::comparison_exit_code(cmp) == 0);
}

TEST_CASE("compare: a point flagged noisy in either run is noisy, never slower", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.5, 100);
  base.points[0].noisy = true;
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(only_point(cmp, 1024).verdict == Verdict::noisy);
  CHECK(only_point(cmp, 2048).verdict == Verdict::slower);
}

TEST_CASE("compare: a thermally throttled point is noisy", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.5, 100);
  next.points[0].telemetry = Json{
      {"gpus",
       Json::array({Json{
           {"device", 0}, {"throttle_fraction", 0.01}, {"throttle_reasons", {"hw_thermal"}}}})}};
  const auto cmp = mgbench::compare_runs(base, next);
  const auto& p = only_point(cmp, 1024);
  CHECK(p.verdict == Verdict::noisy);
  CHECK(p.reason.find("hw_thermal") != std::string::npos);
}

TEST_CASE("compare: a throttle fraction above 5 % makes the point noisy", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.5, 100);
  base.points[0].telemetry =
      Json{{"gpus", Json::array({Json{{"device", 0}, {"throttle_fraction", 0.2}}})}};
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(only_point(cmp, 1024).verdict == Verdict::noisy);
}

TEST_CASE("compare: time at the software power cap alone does not make a point noisy",
          "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.5, 100);
  base.points[0].telemetry = Json{
      {"gpus",
       Json::array({Json{
           {"device", 0}, {"throttle_fraction", 0.6}, {"throttle_reasons", {"sw_power_cap"}}}})}};
  CHECK(only_point(mgbench::compare_runs(base, next), 1024).verdict == Verdict::slower);
  mgbench::CompareOptions strict;
  strict.power_cap_throttles = true;
  CHECK(only_point(mgbench::compare_runs(base, next, strict), 1024).verdict == Verdict::noisy);
}

TEST_CASE("compare: points without raw samples are noisy", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.5, 100);
  next.points[0].samples.clear();
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(only_point(cmp, 1024).verdict == Verdict::noisy);
  CHECK_FALSE(only_point(cmp, 1024).test.has_value());
}

TEST_CASE("compare: a throughput metric is compared with higher is better", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.10, 100);
  for (auto& p : base.points) p.metrics = Json{{"items_per_s", 1.0 / p.stats.median}};
  for (auto& p : next.points) p.metrics = Json{{"items_per_s", 1.0 / p.stats.median}};
  mgbench::CompareOptions options;
  options.metrics["synthetic"] = "items_per_s";
  const auto cmp = mgbench::compare_runs(base, next, options);
  const auto& p = only_point(cmp, 1024);
  CHECK(p.quantity.metric == "items_per_s");
  CHECK(p.quantity.higher_is_better);
  CHECK(p.change == Approx(1.0 / 1.10 - 1.0).margin(0.005));
  CHECK(p.verdict == Verdict::slower);
}

TEST_CASE("compare: a metric missing on one side falls back to time", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.10, 100);
  for (auto& p : base.points) p.metrics = Json{{"items_per_s", 1.0 / p.stats.median}};
  mgbench::CompareOptions options;
  options.metrics["synthetic"] = "items_per_s";
  const auto cmp = mgbench::compare_runs(base, next, options);  // p refers into it
  const auto& p = only_point(cmp, 1024);
  CHECK(p.quantity.metric.empty());
  CHECK(p.verdict == Verdict::slower);
}

TEST_CASE("compare: unmatched points are reported on both sides", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.0, 100);
  base.points.push_back(make_point("synthetic", 4096, 1, 1e-2, 7));
  next.points.push_back(make_point("synthetic", 1024, 2, 1e-3, 8));  // other GPU count
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(cmp.points.size() == 2);
  REQUIRE(cmp.only_in_base.size() == 1);
  CHECK(cmp.only_in_base[0].params.integer("size") == 4096);
  REQUIRE(cmp.only_in_new.size() == 1);
  CHECK(cmp.only_in_new[0].gpus == 2);
}

namespace {
// The exit code compare_runs throws with (-1 when it does not throw).
int thrown_code(const RunResult& base, const RunResult& next) {
  try {
    mgbench::compare_runs(base, next);
  } catch (const mgbench::Error& e) {
    return static_cast<int>(e.code());
  }
  return -1;
}
}  // namespace

TEST_CASE("compare: nothing matched is inconclusive (exit 5)", "[compare]") {
  RunResult base = make_run(1.0), next;
  next.points.push_back(make_point("other", 1, 1, 1e-3, 3));
  CHECK(thrown_code(base, next) == 5);
}

TEST_CASE("compare: points not ok in a run are listed, not judged", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.0, 100);
  next.points[1].status = mgbench::Status::failed;
  next.points[1].message = "worker crashed";
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(cmp.points.size() == 1);
  REQUIRE(cmp.not_compared.size() == 1);
  CHECK(cmp.not_compared[0].new_status == mgbench::Status::failed);
  CHECK(cmp.not_compared[0].message == "worker crashed");
}

TEST_CASE("compare: no point ok in both runs is inconclusive (exit 5)", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.0, 100);
  for (auto& p : next.points) p.status = mgbench::Status::failed;
  CHECK(thrown_code(base, next) == 5);
}

TEST_CASE("compare: every point noisy is inconclusive (exit 5), not a pass", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.0, 100);
  for (auto& p : next.points) p.noisy = true;
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(cmp.count(mgbench::Verdict::noisy) == static_cast<int>(cmp.points.size()));
  CHECK(mgbench::comparison_exit_code(cmp) == 5);
  CHECK(mgbench::inconclusive_reason(cmp).find("noisy") != std::string::npos);
  CHECK(mgbench::comparison_to_json(cmp)["summary"]["exit_code"] == 5);
}

TEST_CASE("compare: no regression is called across different test hooks", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.5, 100);  // clearly slower
  REQUIRE(mgbench::comparison_exit_code(mgbench::compare_runs(base, next)) == 1);
  next.environment["test_hooks"] = Json{{"MGBENCH_TEST_SLOWDOWN", "0.5"}};
  const auto cmp = mgbench::compare_runs(base, next);
  CHECK(cmp.any_slower());
  CHECK(cmp.hooks_differ.find("MGBENCH_TEST_SLOWDOWN") != std::string::npos);
  CHECK(mgbench::comparison_exit_code(cmp) == 5);
  CHECK(mgbench::inconclusive_reason(cmp).find("test hooks") != std::string::npos);
  // The same hooks on both sides: the gate judges as usual.
  base.environment["test_hooks"] = next.environment["test_hooks"];
  CHECK(mgbench::comparison_exit_code(mgbench::compare_runs(base, next)) == 1);
}

TEST_CASE("compare: a zero metric falls back to time", "[compare]") {
  RunResult base = make_run(1.0), next = make_run(1.10, 100);
  for (auto& p : base.points) p.metrics = Json{{"busbw", 0.0}};
  for (auto& p : next.points) p.metrics = Json{{"busbw", 0.0}};
  mgbench::CompareOptions options;
  options.metrics["synthetic"] = "busbw";
  const auto cmp = mgbench::compare_runs(base, next, options);  // p refers into it
  const auto& p = only_point(cmp, 1024);
  CHECK(p.quantity.metric.empty());
  CHECK(p.verdict == Verdict::slower);
}

TEST_CASE("compare: repeated configurations are matched by device", "[compare]") {
  RunResult base, next;
  for (int device = 0; device < 2; ++device) {
    PointResult b = make_point("synthetic", 1024, 1, device == 0 ? 1e-3 : 2e-3, 10 + device);
    PointResult n = make_point("synthetic", 1024, 1, device == 0 ? 1e-3 : 2e-3, 20 + device);
    b.devices = {device};
    n.devices = {device};
    base.points.push_back(b);
    next.points.insert(next.points.begin(), n);  // other order in the new run
  }
  const auto cmp = mgbench::compare_runs(base, next);
  REQUIRE(cmp.points.size() == 2);
  CHECK(cmp.count(Verdict::same) == 2);
  CHECK(cmp.points[0].base_devices == cmp.points[0].new_devices);
}

TEST_CASE("compare: baseline noise estimate is the relative stdev of the medians", "[compare]") {
  RunResult a, b;
  a.points.push_back(make_point("synthetic", 1024, 1, 1.0e-3, 1));
  b.points.push_back(make_point("synthetic", 1024, 1, 1.1e-3, 2));
  a.points[0].stats.median = 1.0e-3;
  b.points[0].stats.median = 1.1e-3;
  const auto noise = mgbench::estimate_noise({&a, &b});
  REQUIRE(noise.size() == 1);
  const auto& n = noise.begin()->second;
  CHECK(n.runs == 2);
  // stdev(1.0, 1.1) = 0.0707107, mean 1.05.
  CHECK(n.relative == Approx(0.0707107 / 1.05).epsilon(1e-5));
}

TEST_CASE("compare: the threshold grows with the baseline noise", "[compare]") {
  const RunResult base = make_run(1.0), next = make_run(1.10, 100);
  const RunResult b1 = make_run(1.05, 200), b2 = make_run(0.95, 300);
  const auto noise = mgbench::estimate_noise({&base, &b1, &b2});
  const auto cmp = mgbench::compare_runs(base, next, {}, &noise);
  const auto& p = only_point(cmp, 1024);
  REQUIRE(p.noise.has_value());
  CHECK(p.noise->runs == 3);
  CHECK(p.threshold == Approx(3.0 * p.noise->relative));
  CHECK(p.threshold > 0.10);
  CHECK(p.verdict == Verdict::same);
}

TEST_CASE("compare: the threshold never drops below the option with quiet baselines", "[compare]") {
  const RunResult base = make_run(1.0), b1 = make_run(1.0, 200);
  const auto noise = mgbench::estimate_noise({&base, &b1});
  const auto cmp = mgbench::compare_runs(base, make_run(1.10, 100), {}, &noise);
  CHECK(only_point(cmp, 1024).threshold == Approx(0.03));
  CHECK(only_point(cmp, 1024).verdict == Verdict::slower);
}

TEST_CASE("compare: the environment diff lists the driver change first", "[compare]") {
  const Json before = {{"versions", {{"driver", "570.86.15"}, {"nccl_loaded", "2.21.5"}}},
                       {"host", {{"kernel", "6.1"}}}};
  const Json after = {{"versions", {{"driver", "580.65.06"}, {"nccl_loaded", "2.21.5"}}},
                      {"host", {{"kernel", "6.8"}}}};
  const auto changes = mgbench::diff_environment(before, after);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].path == "versions.driver");
  CHECK(changes[0].before == "570.86.15");
  CHECK(changes[0].after == "580.65.06");
  CHECK(changes[1].path == "host.kernel");
}

TEST_CASE("compare: the environment diff ignores volatile fields", "[compare]") {
  const Json before = {
      {"gpus", Json::array({Json{{"uuid", "GPU-1"},
                                 {"serial", "A"},
                                 {"clocks_mhz", {{"sm", 345}, {"sm_max", 1980}}},
                                 {"pcie", {{"gen_current", 1}, {"gen_max", 5}}}}})},
      {"host", {{"hostname", "node1"}}}};
  const Json after = {{"gpus", Json::array({Json{{"uuid", "GPU-2"},
                                                 {"serial", "B"},
                                                 {"clocks_mhz", {{"sm", 1980}, {"sm_max", 1980}}},
                                                 {"pcie", {{"gen_current", 5}, {"gen_max", 5}}}}})},
                      {"host", {{"hostname", "node2"}}}};
  CHECK(mgbench::diff_environment(before, after).empty());
  mgbench::CompareOptions with_host;
  with_host.env_hostname = true;
  const auto changes = mgbench::diff_environment(before, after, with_host);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == "host.hostname");
}

TEST_CASE("compare: the environment diff folds a change on every GPU", "[compare]") {
  const RunResult a = make_run(1.0);
  RunResult b = make_run(1.0);
  for (auto& gpu : b.environment["gpus"]) gpu["vbios"] = "96.00.89";
  const auto changes = mgbench::diff_runs(a, b);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == "gpus[*].vbios");
  CHECK(changes[0].count == 2);
  CHECK(changes[0].after == "96.00.89");
}

TEST_CASE("compare: the environment diff reports keys present on one side", "[compare]") {
  const auto changes = mgbench::diff_environment(Json{{"env", Json::object()}},
                                                 Json{{"env", {{"NCCL_ALGO", "Ring"}}}});
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == "env.NCCL_ALGO");
  CHECK(changes[0].before == "(absent)");
  CHECK(changes[0].after == "Ring");
}

TEST_CASE("compare: a different fingerprint hash is flagged", "[compare]") {
  RunResult a = make_run(1.0), b = make_run(1.0, 100);
  a.environment["fingerprint_hash"] = "aaaa";
  b.environment["fingerprint_hash"] = "bbbb";
  CHECK(mgbench::compare_runs(a, b).fingerprint_differs);
}

TEST_CASE("compare: efficiency from the scaling series, side by side", "[compare]") {
  RunResult a = make_run(1.0), b = make_run(1.0, 100);
  a.points.push_back(make_point("synthetic", 1024, 2, 1e-3, 5));
  b.points.push_back(make_point("synthetic", 1024, 2, 1e-3, 6));
  const auto series = [](double efficiency_at_2) {
    mgbench::ScalingSeries s;
    s.workload = "synthetic";
    s.params = {{"size", 1024}};
    s.metric = "throughput";
    mgbench::ScalingRow one, two;
    two.gpus = 2;
    two.efficiency = efficiency_at_2;
    s.rows = {one, two};
    return std::vector<mgbench::ScalingSeries>{s};
  };
  a.scaling = series(0.95);
  b.scaling = series(0.80);
  const auto cmp = mgbench::compare_runs(a, b);
  REQUIRE(cmp.efficiency.size() == 1);
  CHECK(cmp.efficiency[0].gpus == 2);
  CHECK(*cmp.efficiency[0].base == Approx(0.95));
  CHECK(*cmp.efficiency[0].next == Approx(0.80));
}

TEST_CASE("compare: the JSON form carries verdicts and the exit code", "[compare]") {
  const auto cmp = mgbench::compare_runs(make_run(1.0), make_run(1.10, 100));
  const Json j = mgbench::comparison_to_json(cmp);
  CHECK(j.at("summary").at("slower") == 2);
  CHECK(j.at("summary").at("exit_code") == 1);
  CHECK(j.at("points").at(0).at("verdict") == "slower");
  CHECK(j.at("points").at(0).at("test").at("p_value").get<double>() < 0.05);
}

TEST_CASE("compare: a truncated results file is a one-line usage error", "[compare]") {
  const std::string dir = mgbench::test::temp_dir("cmp-truncated");
  const std::string path = dir + "/run.json";
  const std::string text = mgbench::Json(make_run(1.0)).dump();
  std::ofstream(path) << text.substr(0, text.size() / 2);
  try {
    mgbench::load_results(path);
    FAIL("no error");
  } catch (const mgbench::UsageError& e) {
    const std::string what = e.what();
    CHECK(what.find(path) != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: a results file of another schema version is a usage error", "[compare]") {
  const std::string dir = mgbench::test::temp_dir("cmp-schema");
  const std::string path = dir + "/run.json";
  mgbench::Json doc = make_run(1.0);
  doc["schema_version"] = mgbench::kSchemaVersion + 1;
  std::ofstream(path) << doc.dump();
  CHECK_THROWS_AS(mgbench::load_results(path), mgbench::UsageError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: points that ran different own-kernel versions are listed, same versions are not",
          "[compare]") {
  RunResult base = make_run(1.0, 0), next = make_run(1.0, 100);
  base.points[0].extra["implementation"] = Json{{"name", "sm90a_wgmma"}, {"version", 1}};
  next.points[0].extra["implementation"] = Json{{"name", "sm90a_wgmma"}, {"version", 2}};
  base.points[1].extra["implementation"] = Json{{"name", "mma_sync"}, {"version", 2}};
  next.points[1].extra["implementation"] = Json{{"name", "mma_sync"}, {"version", 2}};
  const auto cmp = mgbench::compare_runs(base, next);
  REQUIRE(cmp.implementation_changes.size() == 1);
  CHECK(cmp.implementation_changes[0].find("sm90a_wgmma v1 -> sm90a_wgmma v2") !=
        std::string::npos);
  CHECK(mgbench::comparison_to_json(cmp)["implementation_changes"].size() == 1);
  std::ostringstream text;
  mgbench::reports::render_comparison(text, cmp);
  CHECK(text.str().find("not evidence of a driver change") != std::string::npos);

  next.points[0].extra["implementation"]["version"] = 1;
  CHECK(mgbench::compare_runs(base, next).implementation_changes.empty());
}
