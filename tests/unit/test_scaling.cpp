// Scaling math (weak, strong, Karp-Flatt, marginal) and the baseline-each outlier rule, on
// hand-computed tables.
#include <optional>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/analysis/scaling.hpp"

using mgbench::compute_scaling;
using mgbench::Json;
using mgbench::Params;
using mgbench::PointResult;
using mgbench::ScalingMode;
using mgbench::ScalingSeries;
using mgbench::Status;

namespace {

// Test workloads: "gemm" (TFLOP/s), "train" (samples/s), "plain" (no throughput metric).
std::optional<mgbench::ThroughputMetric> lookup(const std::string& workload) {
  if (workload == "gemm") return mgbench::ThroughputMetric{"tflops_aggregate", "TFLOP/s"};
  if (workload == "train") return mgbench::ThroughputMetric{"samples_per_s", "samples/s"};
  return std::nullopt;
}

PointResult point(std::size_t index, const std::string& workload, Params params, int gpus,
                  double throughput, double median_s, Status status = Status::ok) {
  PointResult p;
  p.index = index;
  p.workload = workload;
  p.params = std::move(params);
  p.gpus = gpus;
  for (int d = 0; d < gpus; ++d) p.devices.push_back(d);
  p.status = status;
  p.stats.median = median_s;
  p.stats.n = 10;
  const auto metric = lookup(workload);
  if (metric) p.metrics[metric->name] = throughput;
  return p;
}

const Params kGemmParams{{"dtype", "bf16"}, {"m", 8192}};

// Weak table: X = 100, 190, 360, 680 TFLOP/s on 1, 2, 4, 8 GPUs.
std::vector<PointResult> weak_table() {
  return {point(0, "gemm", kGemmParams, 1, 100.0, 0.0100),
          point(1, "gemm", kGemmParams, 2, 190.0, 0.0105),
          point(2, "gemm", kGemmParams, 4, 360.0, 0.0111),
          point(3, "gemm", kGemmParams, 8, 680.0, 0.0118)};
}

Params train_params(int batch) { return Params{{"batch", batch}, {"precision", "bf16"}}; }

// Strong table, global batch 256: per-GPU batch 256/128/64/32, step time 0.200/0.105/0.056/
// 0.032 s, X = 256 / T samples/s.
std::vector<PointResult> strong_table() {
  return {point(0, "train", train_params(256), 1, 1280.0, 0.200),
          point(1, "train", train_params(128), 2, 2438.0952381, 0.105),
          point(2, "train", train_params(64), 4, 4571.4285714, 0.056),
          point(3, "train", train_params(32), 8, 8000.0, 0.032)};
}

const ScalingSeries& only(const std::vector<ScalingSeries>& series) {
  REQUIRE(series.size() == 1);
  return series.front();
}

}  // namespace

TEST_CASE("weak scaling: speedup X(N)/X(1) and efficiency S/N") {
  const auto series = compute_scaling(weak_table(), ScalingMode::weak, lookup);
  const ScalingSeries& s = only(series);
  CHECK(s.workload == "gemm");
  CHECK(s.params == kGemmParams);
  CHECK(s.metric == "tflops_aggregate");
  CHECK(s.unit == "TFLOP/s");
  CHECK(s.mode == "weak");
  REQUIRE(s.rows.size() == 4);
  const int gpus[] = {1, 2, 4, 8};
  const double speedup[] = {1.0, 1.9, 3.6, 6.8};
  const double efficiency[] = {1.0, 0.95, 0.90, 0.85};
  for (int i = 0; i < 4; ++i) {
    CHECK(s.rows[i].gpus == gpus[i]);
    CHECK(s.rows[i].speedup == Approx(speedup[i]));
    CHECK(s.rows[i].efficiency == Approx(efficiency[i]));
  }
  CHECK(s.rows[2].throughput == 360.0);
  CHECK(s.rows[2].time_s == 0.0111);
  CHECK(s.rows[3].point_index == 3);
}

TEST_CASE("weak scaling: Gustafson's serial fraction for N > 1, no Karp-Flatt") {
  const ScalingSeries s = only(compute_scaling(weak_table(), ScalingMode::weak, lookup));
  CHECK_FALSE(s.rows[0].gustafson.has_value());
  // Scaled speedup S = N - s (N - 1): s = (N - S) / (N - 1).
  CHECK(s.rows[1].gustafson.value() == Approx(0.1));           // (2 - 1.9) / 1
  CHECK(s.rows[2].gustafson.value() == Approx(0.1333333333));  // (4 - 3.6) / 3
  CHECK(s.rows[3].gustafson.value() == Approx(0.1714285714));  // (8 - 6.8) / 7
  // Karp-Flatt assumes a fixed total workload, which weak scaling does not have.
  for (const auto& r : s.rows) CHECK_FALSE(r.karp_flatt.has_value());
}

TEST_CASE("weak scaling: marginal efficiency X(N) / (2 X(N/2))") {
  const ScalingSeries s = only(compute_scaling(weak_table(), ScalingMode::weak, lookup));
  CHECK_FALSE(s.rows[0].marginal_efficiency.has_value());
  CHECK(s.rows[1].marginal_efficiency.value() == Approx(0.95));         // 190 / 200
  CHECK(s.rows[2].marginal_efficiency.value() == Approx(0.9473684211));  // 360 / 380
  CHECK(s.rows[3].marginal_efficiency.value() == Approx(0.9444444444));  // 680 / 720
}

TEST_CASE("marginal efficiency needs N/2 in the series") {
  // GPU counts 1, 3, 4, 6: 3 is odd, 4 lacks 2, 6 has 3.
  const std::vector<PointResult> points = {point(0, "gemm", kGemmParams, 1, 100.0, 0.01),
                                           point(1, "gemm", kGemmParams, 3, 270.0, 0.01),
                                           point(2, "gemm", kGemmParams, 4, 350.0, 0.01),
                                           point(3, "gemm", kGemmParams, 6, 510.0, 0.01)};
  const ScalingSeries s = only(compute_scaling(points, ScalingMode::weak, lookup));
  REQUIRE(s.rows.size() == 4);
  CHECK_FALSE(s.rows[1].marginal_efficiency.has_value());
  CHECK_FALSE(s.rows[2].marginal_efficiency.has_value());
  CHECK(s.rows[3].marginal_efficiency.value() == Approx(510.0 / 540.0));  // 0.9444
  CHECK(s.rows[3].efficiency == Approx(0.85));                           // 5.1 / 6
}

TEST_CASE("strong scaling: speedup T(1)/T(N), efficiency T(1)/(N T(N))") {
  const ScalingSeries s = only(compute_scaling(strong_table(), ScalingMode::strong, lookup));
  CHECK(s.mode == "strong");
  REQUIRE(s.rows.size() == 4);
  const double speedup[] = {1.0, 1.9047619048, 3.5714285714, 6.25};
  const double efficiency[] = {1.0, 0.9523809524, 0.8928571429, 0.78125};
  for (int i = 0; i < 4; ++i) {
    CHECK(s.rows[i].speedup == Approx(speedup[i]));
    CHECK(s.rows[i].efficiency == Approx(efficiency[i]));
  }
  CHECK(s.rows[3].time_s == 0.032);
}

TEST_CASE("strong scaling: Karp-Flatt and marginal efficiency") {
  const ScalingSeries s = only(compute_scaling(strong_table(), ScalingMode::strong, lookup));
  // 1/S = T(N)/T(1): (0.525 - 0.5)/0.5, (0.28 - 0.25)/0.75, (0.16 - 0.125)/0.875
  CHECK(s.rows[1].karp_flatt.value() == Approx(0.05));
  CHECK(s.rows[2].karp_flatt.value() == Approx(0.04));
  CHECK(s.rows[3].karp_flatt.value() == Approx(0.04));
  // X(N)/(2 X(N/2)) = T(N/2) / (2 T(N)): 0.2/0.21, 0.105/0.112, 0.056/0.064
  CHECK(s.rows[1].marginal_efficiency.value() == Approx(0.9523809524));
  CHECK(s.rows[2].marginal_efficiency.value() == Approx(0.9375));
  CHECK(s.rows[3].marginal_efficiency.value() == Approx(0.875));
}

TEST_CASE("strong scaling matches points by global batch = batch x gpus") {
  const ScalingSeries s = only(compute_scaling(strong_table(), ScalingMode::strong, lookup));
  CHECK(s.params == Params{{"global_batch", 256}, {"precision", "bf16"}});
  CHECK(s.rows[1].point_index == 1);  // batch 128 on 2 GPUs
  CHECK(s.rows[3].point_index == 3);  // batch 32 on 8 GPUs
}

TEST_CASE("strong scaling: a global batch without a 1-GPU point has no series") {
  std::vector<PointResult> points = strong_table();
  points.push_back(point(4, "train", train_params(256), 2, 2400.0, 0.21));  // global 512
  points.push_back(point(5, "train", train_params(256), 4, 4500.0, 0.23));  // global 1024
  const auto series = compute_scaling(points, ScalingMode::strong, lookup);
  REQUIRE(series.size() == 1);
  CHECK(series[0].params.integer("global_batch") == 256);
}

TEST_CASE("weak scaling keeps per-GPU batches apart") {
  // Only batch 256 has a 1-GPU point; batches 128, 64 and 32 have no baseline.
  const ScalingSeries s = only(compute_scaling(strong_table(), ScalingMode::weak, lookup));
  CHECK(s.params == train_params(256));
  CHECK(s.rows.size() == 1);
}

TEST_CASE("strong mode analyses workloads without a batch parameter as weak scaling") {
  const ScalingSeries s = only(compute_scaling(weak_table(), ScalingMode::strong, lookup));
  CHECK(s.mode == "weak");
  CHECK(s.params == kGemmParams);
  CHECK(s.rows[3].speedup == Approx(6.8));  // X(8)/X(1), not T(1)/T(8)
}

TEST_CASE("a group without a 1-GPU point gets no series") {
  std::vector<PointResult> points = weak_table();
  points.erase(points.begin());
  CHECK(compute_scaling(points, ScalingMode::weak, lookup).empty());
}

TEST_CASE("a 1-GPU point alone is a one-row series at speedup 1") {
  const ScalingSeries s =
      only(compute_scaling({point(0, "gemm", kGemmParams, 1, 100.0, 0.01)}, ScalingMode::weak,
                           lookup));
  REQUIRE(s.rows.size() == 1);
  CHECK(s.rows[0].speedup == 1.0);
  CHECK(s.rows[0].efficiency == 1.0);
}

TEST_CASE("points that are not ok are left out of the series") {
  std::vector<PointResult> points = weak_table();
  points[3].status = Status::oom;
  points[2].status = Status::failed;
  const ScalingSeries s = only(compute_scaling(points, ScalingMode::weak, lookup));
  REQUIRE(s.rows.size() == 2);
  CHECK(s.rows.back().gpus == 2);
}

TEST_CASE("a 1-GPU baseline without a result: the next GPU count is the baseline, and why") {
  std::vector<PointResult> points = weak_table();
  points[0].status = Status::wrong;
  const ScalingSeries s = only(compute_scaling(points, ScalingMode::weak, lookup));
  CHECK(s.baseline_gpus == 2);
  CHECK(s.no_baseline == "the 1-GPU point gave a wrong result");
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[0].gpus == 2);
  CHECK(s.rows[0].speedup == Approx(1.0));
  // Against 2 GPUs: S(8) = 680 / 190 = 3.579 for 4x the GPUs, E = 0.895.
  CHECK(s.rows[2].speedup == Approx(680.0 / 190.0));
  CHECK(s.rows[2].efficiency == Approx(680.0 / 190.0 / 4.0));
  // n = N / 2 in the serial fraction too: (4 - 3.579) / 3.
  CHECK(s.rows[2].gustafson.value() == Approx((4.0 - 680.0 / 190.0) / 3.0));
  points[0].status = Status::timeout;
  CHECK(only(compute_scaling(points, ScalingMode::weak, lookup)).no_baseline ==
        "the 1-GPU point timed out");
}

TEST_CASE("workloads without a throughput metric are skipped") {
  std::vector<PointResult> points = {point(0, "plain", kGemmParams, 1, 0, 0.01),
                                     point(1, "plain", kGemmParams, 2, 0, 0.01)};
  CHECK(compute_scaling(points, ScalingMode::weak, lookup).empty());
}

TEST_CASE("a point missing the throughput metric is left out") {
  std::vector<PointResult> points = weak_table();
  points[2].metrics = Json::object();
  const ScalingSeries s = only(compute_scaling(points, ScalingMode::weak, lookup));
  REQUIRE(s.rows.size() == 3);
  CHECK(s.rows[2].gpus == 8);
  CHECK_FALSE(s.rows[2].marginal_efficiency.has_value());  // 4 is missing
}

TEST_CASE("two GPUs alone: the baseline is the upper middle, the faster one") {
  std::vector<PointResult> points = weak_table();
  PointResult later = point(9, "gemm", kGemmParams, 1, 50.0, 0.02);  // e.g. --baseline each
  later.devices = {3};
  points.insert(points.begin(), later);
  const ScalingSeries s = only(compute_scaling(points, ScalingMode::weak, lookup));
  CHECK(s.rows[0].point_index == 0);
  CHECK(s.rows[3].speedup == Approx(6.8));
  CHECK(s.baseline == "the median of 2 GPUs measured alone (GPU 0)");
}

TEST_CASE("baseline each: the median GPU alone is the baseline, not the first one") {
  std::vector<PointResult> points = weak_table();  // GPU 0 alone: 100
  const double alone[] = {98.0, 85.0, 99.0, 101.0};  // GPUs 1..4 alone
  for (int d = 1; d <= 4; ++d) {
    PointResult p = point(10 + static_cast<std::size_t>(d), "gemm", kGemmParams, 1,
                          alone[d - 1], 0.01);
    p.devices = {d};
    points.push_back(p);
  }
  // Sorted: 85 (GPU 2), 98 (1), 99 (3), 100 (0), 101 (4): the middle is GPU 3 at 99.
  const ScalingSeries s = only(compute_scaling(points, ScalingMode::weak, lookup));
  CHECK(s.baseline == "the median of 5 GPUs measured alone (GPU 3)");
  CHECK(s.rows[0].point_index == 13);
  CHECK(s.rows[0].throughput == 99.0);
  CHECK(s.rows[3].speedup == Approx(680.0 / 99.0));
}

TEST_CASE("series are grouped by parameters and sorted by workload then parameters") {
  std::vector<PointResult> points = weak_table();
  const Params fp16{{"dtype", "fp16"}, {"m", 8192}};
  points.push_back(point(4, "gemm", fp16, 1, 110.0, 0.01));
  points.push_back(point(5, "gemm", fp16, 2, 209.0, 0.01));
  points.push_back(point(6, "train", train_params(64), 1, 500.0, 0.128));
  const auto series = compute_scaling(points, ScalingMode::weak, lookup);
  REQUIRE(series.size() == 3);
  CHECK(series[0].params.text("dtype") == "bf16");
  CHECK(series[1].params.text("dtype") == "fp16");
  CHECK(series[1].rows[1].efficiency == Approx(0.95));  // 209 / 110 / 2
  CHECK(series[2].workload == "train");
}

TEST_CASE("scaling series round-trip through JSON with null for absent values") {
  const ScalingSeries s = only(compute_scaling(weak_table(), ScalingMode::weak, lookup));
  const Json j = std::vector<ScalingSeries>{s};
  REQUIRE(j.is_array());
  CHECK(j[0].at("rows")[0].at("karp_flatt").is_null());
  CHECK(j[0].at("rows")[0].at("gustafson").is_null());
  CHECK(j[0].at("rows")[0].at("marginal_efficiency").is_null());
  CHECK(j[0].at("rows")[3].at("efficiency").get<double>() == Approx(0.85));
  const ScalingSeries back = j[0].get<ScalingSeries>();
  CHECK(back.workload == s.workload);
  CHECK(back.params == s.params);
  CHECK(back.mode == "weak");
  REQUIRE(back.rows.size() == 4);
  CHECK_FALSE(back.rows[0].gustafson.has_value());
  CHECK(back.rows[3].gustafson.value() == Approx(0.1714285714));
  CHECK(back.rows[3].point_index == 3);
}

TEST_CASE("scaling mode parses weak and strong and rejects anything else") {
  CHECK(mgbench::scaling_mode_from_string("weak") == ScalingMode::weak);
  CHECK(mgbench::scaling_mode_from_string("strong") == ScalingMode::strong);
  CHECK(std::string(mgbench::to_string(ScalingMode::strong)) == "strong");
  CHECK_THROWS_AS(mgbench::scaling_mode_from_string("Strong"), mgbench::UsageError);
}

// ---- baseline-each outlier rule -----------------------------------------------------------------

namespace {

PointResult alone(std::size_t index, int device, double throughput,
                  const Params& params = kGemmParams) {
  PointResult p = point(index, "gemm", params, 1, throughput, 0.01);
  p.devices = {device};
  return p;
}

// Devices 0..3 at 100, 97, 92, 94.5 TFLOP/s: deficits 0, 3 %, 8 %, 5.5 %.
std::vector<PointResult> four_devices() {
  return {alone(0, 0, 100.0), alone(1, 1, 97.0), alone(2, 2, 92.0), alone(3, 3, 94.5)};
}

}  // namespace

TEST_CASE("baseline outliers: devices more than 5 % below the best are flagged") {
  const auto rows = mgbench::baseline_outliers(four_devices(), 0.05, lookup);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("device") == 2);
  CHECK(rows[0].at("deficit").get<double>() == Approx(0.08));
  CHECK(rows[0].at("throughput").get<double>() == 92.0);
  CHECK(rows[0].at("best_device") == 0);
  CHECK(rows[0].at("best").get<double>() == 100.0);
  CHECK(rows[0].at("workload") == "gemm");
  CHECK(rows[0].at("params").dump() == kGemmParams.dump());
  CHECK(rows[1].at("device") == 3);
  CHECK(rows[1].at("deficit").get<double>() == Approx(0.055));
}

TEST_CASE("baseline outliers: the threshold is a parameter") {
  CHECK(mgbench::baseline_outliers(four_devices(), 0.10, lookup).empty());
  CHECK(mgbench::baseline_outliers(four_devices(), 0.02, lookup).size() == 3);
}

TEST_CASE("baseline outliers: a device measured twice counts with its best throughput") {
  std::vector<PointResult> points = four_devices();
  points.push_back(alone(4, 2, 99.0));  // device 2 again, now within 1 %
  const auto rows = mgbench::baseline_outliers(points, 0.05, lookup);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].at("device") == 3);
}

TEST_CASE("baseline outliers: one device alone has nothing to compare with") {
  CHECK(mgbench::baseline_outliers({alone(0, 0, 100.0), alone(1, 0, 80.0)}, 0.05, lookup)
            .empty());
}

TEST_CASE("baseline outliers: parameter sets are compared separately") {
  const Params fp16{{"dtype", "fp16"}, {"m", 8192}};
  // Device 1 is slow only relative to device 0 at the same parameters.
  const std::vector<PointResult> points = {alone(0, 0, 100.0), alone(1, 1, 99.0),
                                           alone(2, 0, 200.0, fp16), alone(3, 1, 150.0, fp16)};
  const auto rows = mgbench::baseline_outliers(points, 0.05, lookup);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].at("params").dump() == fp16.dump());
  CHECK(rows[0].at("deficit").get<double>() == Approx(0.25));
}

TEST_CASE("baseline outliers: multi-GPU and failed points are ignored") {
  std::vector<PointResult> points = four_devices();
  points[2].status = Status::failed;  // device 2 failed: not an outlier by throughput
  PointResult multi = point(7, "gemm", kGemmParams, 2, 10.0, 0.01);
  points.push_back(multi);
  const auto rows = mgbench::baseline_outliers(points, 0.05, lookup);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].at("device") == 3);
}

TEST_CASE("the run's presentation gives the throughput metric, never the registry") {
  mgbench::RunResult run;
  run.points = {point(0, "gemm", kGemmParams, 1, 100.0, 0.01),
                point(1, "gemm", kGemmParams, 2, 190.0, 0.01),
                point(2, "gemm", kGemmParams, 1, 1.0, 0.1)};
  run.points[0].workload = run.points[1].workload = "declared";  // metrics as for "gemm"
  run.points[2].workload = "undeclared";
  run.presentation["declared"] = mgbench::Presentation().headline("tflops_aggregate", "TFLOP/s");
  const auto lookup_of_run = mgbench::presentation_throughput(run);
  REQUIRE(lookup_of_run("declared").has_value());
  CHECK(lookup_of_run("declared")->unit == "TFLOP/s");
  CHECK_FALSE(lookup_of_run("undeclared").has_value());
  const auto series = compute_scaling(run.points, ScalingMode::weak, lookup_of_run);
  REQUIRE(series.size() == 1);
  CHECK(series[0].workload == "declared");
  CHECK(series[0].rows[1].efficiency == Approx(0.95));
}

TEST_CASE("a run without presentation takes the headline from its scaling series") {
  mgbench::RunResult run;
  run.points = {point(0, "old", kGemmParams, 1, 100.0, 0.01)};
  ScalingSeries stored;
  stored.workload = "old";
  stored.metric = "tflops_aggregate";
  stored.unit = "TFLOP/s";
  run.scaling = {stored};
  const auto found = mgbench::presentation_throughput(run)("old");
  REQUIRE(found.has_value());
  CHECK(found->name == "tflops_aggregate");
}
