// Timing methods, cache modes and rotation sizing, noise classification, impossible-value
// flags, and compare's refusal of differently measured points: all without a GPU.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"

namespace {

using mgbench::CacheMode;
using mgbench::Json;
using mgbench::PointResult;
using mgbench::TimingMethod;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kL2 = 60 * kMiB;

// n samples around `median` with a uniform relative spread of +-`spread` (deterministic).
std::vector<double> oscillating(double median, double spread, int n, std::uint32_t seed) {
  std::vector<double> out;
  std::uint32_t state = seed * 2654435761u + 7u;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const double u = static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
    out.push_back(median * (1.0 + spread * u));
  }
  return out;
}

Json power_capped_telemetry() {
  return Json{{"gpus", Json::array({Json{{"device", 0},
                                         {"throttle_fraction", 0.9},
                                         {"throttle_reasons", Json::array({"sw_power_cap"})}}})}};
}

// The datasheet's dense peak of `dtype` as "% of peak" uses it; 0 when unknown.
double datasheet(const mgbench::HardwareLimits& hw, const std::string& dtype) {
  return mgbench::peak_of(mgbench::LimitKind::tflops, Json{{"dtype", dtype}}, "dtype", "", hw,
                          false)
      .value;
}

mgbench::HardwareLimits h200() {
  mgbench::HardwareLimits hw;
  hw.hbm_GBps = mgbench::hbm_peak_GBps(6144, 3201000);
  hw.gpu_name = "NVIDIA H200";
  hw.cc_major = 9;
  hw.cc_minor = 0;
  return hw;
}

}  // namespace

TEST_CASE("timing methods and cache modes parse, print and default", "[measurement]") {
  for (const std::string& name : mgbench::timing_names()) {
    CHECK(mgbench::to_string(mgbench::timing_from_string(name)) == name);
  }
  for (const std::string& name : mgbench::cache_names()) {
    CHECK(mgbench::to_string(mgbench::cache_from_string(name)) == name);
  }
  CHECK_THROWS_AS(mgbench::timing_from_string("wallclock"), mgbench::UsageError);
  CHECK_THROWS_AS(mgbench::cache_from_string("warm"), mgbench::UsageError);
  CHECK(mgbench::timing_of(Json{{"bytes", 8}}, TimingMethod::host) == TimingMethod::host);
  CHECK(mgbench::timing_of(Json{{"timing", "graph"}}, TimingMethod::host) == TimingMethod::graph);
  CHECK(mgbench::cache_of(Json{{"cache", "hot"}}, CacheMode::cold) == CacheMode::hot);
  CHECK(mgbench::cache_of(Json::object(), CacheMode::cold) == CacheMode::cold);
}

TEST_CASE("a hot rotation is one set, a cold one exceeds twice L2 with the fewest sets",
          "[measurement]") {
  const auto hot = mgbench::plan_rotation(CacheMode::hot, 16 * kMiB, kL2, 100000 * kMiB);
  CHECK(hot.sets == 1);
  CHECK(hot.total_bytes == 16 * kMiB);
  const auto cold = mgbench::plan_rotation(CacheMode::cold, 16 * kMiB, kL2, 100000 * kMiB);
  CHECK(cold.sets == 8);  // 8 x 16 MiB = 128 MiB > 120 MiB; 7 sets would be 112 MiB
  CHECK(cold.total_bytes == 128 * kMiB);
  CHECK(cold.exceeds_l2);
  CHECK(cold.limited_by.empty());
  const auto big = mgbench::plan_rotation(CacheMode::cold, 256 * kMiB, kL2, 100000 * kMiB);
  CHECK(big.sets == 1);
  CHECK(big.exceeds_l2);
}

TEST_CASE("a cold rotation is bounded by memory and by the set cap, and says so", "[measurement]") {
  const auto by_memory = mgbench::plan_rotation(CacheMode::cold, 16 * kMiB, kL2, 40 * kMiB);
  CHECK(by_memory.sets == 2);
  CHECK_FALSE(by_memory.exceeds_l2);
  CHECK(by_memory.limited_by == "memory");
  const auto by_cap = mgbench::plan_rotation(CacheMode::cold, 256, kL2, 100000 * kMiB);
  CHECK(by_cap.sets == mgbench::kMaxRotationSets);
  CHECK(by_cap.limited_by == "set cap");
  const auto unknown_l2 = mgbench::plan_rotation(CacheMode::cold, 256, 0, 100000 * kMiB);
  CHECK(unknown_l2.sets == 1);
  const Json j = mgbench::rotation_json(by_memory);
  CHECK(j["sets"] == 2);
  CHECK(j["limited_by"] == "memory");
}

TEST_CASE("measurement axes multiply points by every chosen value", "[measurement]") {
  mgbench::AxisValues values;
  values["timing"] = {"device", "host", "graph"};
  values["cache"] = {"hot", "cold"};
  const auto points = mgbench::with_measurement_axes({Json{{"size", 1}}, Json{{"size", 2}}}, values);
  CHECK(points.size() == 12);
  CHECK(mgbench::with_measurement_axes({Json{{"size", 1}}}, {}).size() == 1);
  CHECK(mgbench::timing_axis("host").standard_values == std::vector<std::string>{"host"});
  CHECK_THROWS_AS(mgbench::cache_axis("cold").parse_value("lukewarm"), mgbench::UsageError);
}

TEST_CASE("timing, cache, flags and spread round-trip through results.json", "[measurement]") {
  PointResult p;
  p.workload = "allreduce";
  p.devices = {0};
  p.measured = {mgbench::TimingMethod::graph, mgbench::CacheMode::cold};
  p.flags = {{"impossible", "algbw_GBps", "x"}};
  p.spread = mgbench::Spread{0.03, 0.001, true, "power cap", ""};
  Json j = p;
  CHECK(j.at("flags") == Json::parse(R"([{"kind":"impossible","metric":"algbw_GBps","reason":"x"}])"));
  CHECK(j.at("spread") == Json::parse(
      R"({"rel_stdev":0.03,"median_ci_half_width":0.001,"oscillating":true,"cause":"power cap"})"));
  const PointResult back = j.get<PointResult>();
  CHECK(back.measured.timing == mgbench::TimingMethod::graph);
  CHECK(back.measured.cache == mgbench::CacheMode::cold);
  REQUIRE(back.flags.size() == 1);
  CHECK(back.flags[0].kind == "impossible");
  CHECK(back.flags[0].metric == "algbw_GBps");
  CHECK(back.flags[0].reason == "x");
  REQUIRE(back.spread.has_value());
  CHECK(back.spread->rel_stdev == 0.03);
  CHECK(back.spread->median_ci_half_width == 0.001);
  CHECK(back.spread->oscillating);
  CHECK(back.spread->cause == "power cap");
  CHECK(back.spread->reason.empty());
  Json wrong = j;
  wrong["spread"]["rel_stdev"] = -1;
  CHECK_THROWS_AS(wrong.get<PointResult>(), mgbench::UsageError);
  wrong = j;
  wrong["flags"][0]["reason"] = 7;
  CHECK_THROWS_AS(wrong.get<PointResult>(), mgbench::UsageError);
  wrong = j;
  wrong["flags"] = Json::array({"impossible"});
  CHECK_THROWS_AS(wrong.get<PointResult>(), mgbench::UsageError);
  wrong = j;
  wrong["spread"] = nullptr;
  CHECK_FALSE(wrong.get<PointResult>().spread.has_value());
  j["timing"] = "stopwatch";
  CHECK_THROWS_AS(j.get<PointResult>(), mgbench::UsageError);
  Json old = p;
  old.erase("timing");
  old.erase("cache");
  CHECK_FALSE(old.get<PointResult>().measured.timing.has_value());
  CHECK_FALSE(old.get<PointResult>().measured.cache.has_value());
}

TEST_CASE("a steady power-capped GEMM oscillates 3 % per sample but is not noisy",
          "[measurement][noise]") {
  // Median repeating to 0.01 % across runs, samples spread about 3 %: 600 samples of 2 ms.
  const auto samples = oscillating(2e-3, 0.05, 600, 11);
  const mgbench::Statistics s = mgbench::compute_statistics(samples);
  REQUIRE(s.rel_stdev > 0.025);
  const auto a = mgbench::assess_noise(s, 0.005, power_capped_telemetry());
  CHECK_FALSE(a.noisy);
  CHECK(a.oscillating);
  CHECK(a.cause == "power cap");
  CHECK(a.reason.find("oscillate") != std::string::npos);
  CHECK(a.reason.find("power cap") != std::string::npos);
  const Json j = mgbench::spread_of(a);
  CHECK(j["oscillating"] == true);
  CHECK(j["cause"] == "power cap");
  CHECK(j["rel_stdev"] == s.rel_stdev);
  // The stopping rule converges on it instead of running to max time.
  mgbench::StoppingCriteria c;
  c.min_time_s = 0.1;
  CHECK(mgbench::evaluate_stop(c, samples, 1.3) == mgbench::StopDecision::converged);
}

TEST_CASE("a point whose median is uncertain is noisy, and the reason says why",
          "[measurement][noise]") {
  const auto samples = oscillating(2e-3, 0.3, 12, 5);
  const mgbench::Statistics s = mgbench::compute_statistics(samples);
  const auto a = mgbench::assess_noise(s, 0.005, Json());
  CHECK(a.noisy);
  CHECK_FALSE(a.oscillating);
  CHECK(a.ci_half_width > 0.005);
  CHECK(a.reason.find("median uncertain") != std::string::npos);
  CHECK(a.reason.find("12 samples") != std::string::npos);
  CHECK(mgbench::quality_note(mgbench::spread_of(a), {}).rfind("noisy, ", 0) == 0);
}

TEST_CASE("tight samples are neither noisy nor oscillating", "[measurement][noise]") {
  const auto s = mgbench::compute_statistics(oscillating(1e-3, 0.001, 50, 3));
  const auto a = mgbench::assess_noise(s, 0.005, power_capped_telemetry());
  CHECK_FALSE(a.noisy);
  CHECK_FALSE(a.oscillating);
  CHECK(a.reason.empty());
  CHECK(a.cause.empty());
}

TEST_CASE("the median's order-statistic CI narrows with more samples", "[measurement][noise]") {
  CHECK(mgbench::median_ci_half_width(oscillating(1.0, 0.05, 20, 1)) >
        mgbench::median_ci_half_width(oscillating(1.0, 0.05, 2000, 1)));
  CHECK(mgbench::median_ci_half_width({1.0}) > 1.0);
}

TEST_CASE("HBM peak comes from bus width x memory clock", "[measurement][limits]") {
  CHECK(mgbench::hbm_peak_GBps(6144, 3201000) == Approx(4916.7).epsilon(1e-4));
  CHECK(mgbench::hbm_peak_GBps(0, 3201000) == 0.0);
}

TEST_CASE("algbw above HBM's copy limit is flagged impossible, below it is not",
          "[measurement][limits]") {
  const std::vector<mgbench::LimitCheck> checks{{"algbw_GBps", mgbench::LimitKind::copy, "dtype"}};
  // The 16 MiB all-reduce served from L2: 2523 GB/s against a copy limit of about 2458.
  const auto flags = mgbench::impossible_values(Json{{"algbw_GBps", 2523.0}}, Json::object(),
                                                checks, h200());
  REQUIRE(flags.size() == 1);
  CHECK(flags[0].kind == "impossible");
  CHECK(flags[0].metric == "algbw_GBps");
  CHECK(flags[0].reason.find("copy limit") != std::string::npos);
  CHECK(mgbench::impossible_values(Json{{"algbw_GBps", 2000.0}}, Json::object(), checks, h200())
            .empty());
  CHECK(mgbench::impossible_values(Json{{"algbw_GBps", 1e9}}, Json::object(), checks,
                                   mgbench::HardwareLimits{})
            .empty());  // unknown hardware: no check
  CHECK(mgbench::metric_flagged(flags, "algbw_GBps"));
  CHECK_FALSE(mgbench::metric_flagged(flags, "busbw_GBps"));
  CHECK(mgbench::quality_note(std::nullopt, flags).rfind("impossible: ", 0) == 0);
}

TEST_CASE("TFLOP/s above the datasheet peak of the dtype is flagged on a known GPU only",
          "[measurement][limits]") {
  const std::vector<mgbench::LimitCheck> checks{{"tflops_per_gpu", mgbench::LimitKind::tflops, "dtype"}};
  const Json bf16{{"dtype", "bf16"}};
  CHECK(mgbench::impossible_values(Json{{"tflops_per_gpu", 1000.0}}, bf16, checks, h200()).size() == 1);
  CHECK(mgbench::impossible_values(Json{{"tflops_per_gpu", 678.0}}, bf16, checks, h200()).empty());
  CHECK(mgbench::impossible_values(Json{{"tflops_per_gpu", 70.0}}, Json{{"dtype", "fp32"}}, checks,
                                   h200()).size() == 1);
  CHECK(datasheet(h200(), "fp8") == Approx(1978.9));
  CHECK(datasheet(h200(), "tf32") == Approx(494.7));
  mgbench::HardwareLimits a100 = h200();
  a100.gpu_name = "NVIDIA A100-SXM4-80GB";
  a100.cc_major = 8;
  CHECK(datasheet(a100, "bf16") == Approx(312.0));  // from the model table
  CHECK(mgbench::impossible_values(Json{{"tflops_per_gpu", 320.0}}, bf16, checks, a100).size() == 1);
  CHECK(datasheet(a100, "fp8") == 0.0);  // no fp8 on Ampere: no check
  mgbench::HardwareLimits other = h200();
  other.gpu_name = "NVIDIA Future GPU";
  CHECK(datasheet(other, "bf16") == 0.0);
  CHECK(mgbench::impossible_values(Json{{"tflops_per_gpu", 5000.0}}, bf16, checks, other).empty());
  // The NVL card's datasheet peaks are rated below its highest clock: no flag above them.
  mgbench::HardwareLimits nvl = h200();
  nvl.gpu_name = "NVIDIA H200 NVL";
  CHECK(datasheet(nvl, "bf16") == Approx(835.5));
  CHECK(mgbench::impossible_values(Json{{"tflops_per_gpu", 853.0}}, bf16, checks, nvl).empty());
}

namespace {

PointResult allreduce_point(const std::string& timing, const std::string& cache, double median) {
  PointResult p;
  p.workload = "allreduce";
  p.params = mgbench::Params{{"bytes", 8}, {"timing", timing}, {"cache", cache}};
  p.gpus = 1;
  p.devices = {0};
  p.measured = {mgbench::timing_from_string(timing), mgbench::cache_from_string(cache)};
  p.samples = oscillating(median, 0.001, 30, 9);
  p.stats = mgbench::compute_statistics(p.samples);
  return p;
}

// train_step has no timing or cache axis: its points record how they were measured.
PointResult train_point(const std::string& recorded_timing, int batch) {
  PointResult p;
  p.workload = "train_step";
  p.params = mgbench::Params{{"batch", batch}, {"dtype", "bf16"}};
  p.gpus = 1;
  p.devices = {0};
  if (!recorded_timing.empty()) {
    p.measured = {mgbench::timing_from_string(recorded_timing), mgbench::CacheMode::hot};
  }
  for (int i = 0; i < 20; ++i) p.samples.push_back(0.1 * (1.0 + 0.0005 * (i % 3)));
  p.stats = mgbench::compute_statistics(p.samples);
  return p;
}

mgbench::RunResult run_of(std::vector<PointResult> points) {
  mgbench::RunResult run;
  run.points = std::move(points);
  return run;
}

}  // namespace

TEST_CASE("compare refuses points measured by different timing methods, one line each",
          "[measurement][compare]") {
  const auto base = run_of({allreduce_point("device", "cold", 2e-6), allreduce_point("host", "cold", 6e-6)});
  const auto next = run_of({allreduce_point("host", "cold", 6e-6), allreduce_point("device", "hot", 2e-6)});
  const mgbench::Comparison cmp = mgbench::compare_runs(base, next);
  CHECK(cmp.points.size() == 1);  // host/cold matches host/cold
  REQUIRE(cmp.not_compared.size() == 1);
  CHECK(cmp.not_compared[0].message.find("measured differently") != std::string::npos);
  CHECK(cmp.not_compared[0].message.find("cache cold (base) vs hot (new)") != std::string::npos);
  CHECK(cmp.only_in_base.empty());
  CHECK(cmp.only_in_new.empty());
}

TEST_CASE("compare of runs that differ only in timing method is inconclusive, saying why",
          "[measurement][compare]") {
  const auto base = run_of({allreduce_point("device", "cold", 2e-6)});
  const auto next = run_of({allreduce_point("host", "cold", 6e-6)});
  try {
    (void)mgbench::compare_runs(base, next);
    FAIL("expected an inconclusive comparison");
  } catch (const mgbench::Error& e) {
    CHECK(e.code() == mgbench::ExitCode::inconclusive);
    CHECK(std::string(e.what()).find("timing device (base) vs host (new)") != std::string::npos);
  }
}

TEST_CASE("compare treats points of older files as device-timed on a hot cache",
          "[measurement][compare]") {
  PointResult old = allreduce_point("device", "hot", 2e-6);
  old.params.erase("timing");
  old.params.erase("cache");
  old.measured = {};
  const auto cmp = mgbench::compare_runs(run_of({old}), run_of({allreduce_point("device", "hot", 2e-6)}));
  CHECK(cmp.points.size() == 1);
  CHECK(cmp.not_compared.empty());
}

TEST_CASE("compare pairs train_step points timed host-side on a hot cache, and refuses older "
          "device-timed ones",
          "[measurement][compare]") {
  const auto same = mgbench::compare_runs(run_of({train_point("host", 4096)}),
                                          run_of({train_point("host", 4096)}));
  CHECK(same.points.size() == 1);
  CHECK(same.not_compared.empty());
  // Runs from before train_step was host-timed: gated, device-side (recorded, or not recorded
  // at all, which compare reads as device): measured differently, one line each.
  for (const std::string recorded : {"device", ""}) {
    CAPTURE(recorded);
    const auto cmp = mgbench::compare_runs(
        run_of({train_point(recorded, 4096), train_point("host", 8192)}),
        run_of({train_point("host", 4096), train_point("host", 8192)}));
    CHECK(cmp.points.size() == 1);
    REQUIRE(cmp.not_compared.size() == 1);
    CHECK(cmp.not_compared[0].message.find("timing device (base) vs host (new)") !=
          std::string::npos);
    CHECK(cmp.only_in_base.empty());
    CHECK(cmp.only_in_new.empty());
  }
}
