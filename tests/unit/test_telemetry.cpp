// Telemetry summary math on synthetic samples: gauges, throttle fraction, energy, down-sampling,
// the run-level series and the energy metrics.
#include <cmath>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/point_view.hpp"
#include "mgbench/platform/telemetry.hpp"

using namespace mgbench;

namespace {

GpuSample sample(double power, double temp, double clock, std::uint64_t reasons) {
  GpuSample s;
  s.power_w = power;
  s.temp_c = temp;
  s.sm_clock_mhz = clock;
  s.mem_clock_mhz = 2619;
  s.util_pct = 100;
  s.mem_used_bytes = 1e9;
  s.reasons = reasons;
  return s;
}

// `n` samples; every sample whose index is below `throttled` has the power cap set.
GpuTrace trace_with(std::size_t n, std::size_t throttled) {
  GpuTrace t;
  t.device = 3;
  t.pci_bus_id = "0000:19:00.0";
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t reasons =
        i < throttled ? clock_event::kSwPowerCap | clock_event::kGpuIdle : clock_event::kGpuIdle;
    t.samples.push_back(sample(600 + static_cast<double>(i), 60, 1980, reasons));
  }
  return t;
}

}  // namespace

TEST_CASE("gauge summary gives min, mean, max and median, skipping missing values") {
  const auto s = summarize_gauge({3, 1, kNoValue, 2, 4});
  REQUIRE(s.has_value());
  REQUIRE(s->n == 4);
  REQUIRE(s->min == 1);
  REQUIRE(s->max == 4);
  REQUIRE(s->mean == Approx(2.5));
  REQUIRE(s->median == Approx(2.5));
}

TEST_CASE("gauge median of an odd count is the middle value") {
  REQUIRE(summarize_gauge({9, 1, 5})->median == 5);
}

TEST_CASE("gauge summary of no value is empty") {
  REQUIRE_FALSE(summarize_gauge({kNoValue, kNoValue}).has_value());
  REQUIRE_FALSE(summarize_gauge({}).has_value());
}

TEST_CASE("throttle fraction counts samples with a throttle reason") {
  const GpuTrace t = trace_with(10, 3);
  REQUIRE(*throttle_fraction(t, 1.0) == Approx(0.3));
}

TEST_CASE("idle and application-clock reasons do not count as throttled") {
  GpuTrace t = trace_with(10, 0);
  for (auto& s : t.samples) *s.reasons |= clock_event::kApplicationsClocks;
  REQUIRE(*throttle_fraction(t, 1.0) == 0.0);
}

TEST_CASE("throttle fraction falls back to the violation counters for short points") {
  GpuTrace t = trace_with(2, 0);
  t.begin.power_violation_s = 10.0;
  t.end.power_violation_s = 10.2;
  t.begin.thermal_violation_s = 5.0;
  t.end.thermal_violation_s = 5.1;
  REQUIRE(*throttle_fraction(t, 1.0) == Approx(0.3));
}

TEST_CASE("throttle fraction from counters is clamped to 1") {
  GpuTrace t;
  t.begin.power_violation_s = 0;
  t.end.power_violation_s = 2;
  t.begin.thermal_violation_s = 0;
  t.end.thermal_violation_s = 2;
  REQUIRE(*throttle_fraction(t, 1.0) == 1.0);
}

TEST_CASE("throttle fraction is unknown without reasons or counters") {
  GpuTrace t;
  t.samples.push_back(GpuSample{});
  REQUIRE_FALSE(throttle_fraction(t, 1.0).has_value());
}

TEST_CASE("bucket ranges cover every item with at most max buckets") {
  const auto ranges = bucket_ranges(1000, 200);
  REQUIRE(ranges.size() == 200);
  REQUIRE(ranges.front().first == 0);
  REQUIRE(ranges.back().second == 1000);
  for (std::size_t i = 1; i < ranges.size(); ++i) {
    REQUIRE(ranges[i].first == ranges[i - 1].second);
    REQUIRE(ranges[i].second - ranges[i].first == 5);
  }
}

TEST_CASE("bucket ranges keep every item when there are few") {
  const auto ranges = bucket_ranges(7, 200);
  REQUIRE(ranges.size() == 7);
  REQUIRE(ranges[6] == std::make_pair<std::size_t, std::size_t>(6, 7));
  REQUIRE(bucket_ranges(0, 200).empty());
}

TEST_CASE("GPU summary uses the energy counter for points of a second or more") {
  GpuTrace t = trace_with(20, 0);
  t.begin.energy_j = 100;
  t.end.energy_j = 400;
  const Json g = summarize_gpu(t, 2.0);
  REQUIRE(g["energy_j"].get<double>() == Approx(300));
  REQUIRE(g["avg_power_w"].get<double>() == Approx(150));
  REQUIRE(g["energy_source"] == "counter");
}

TEST_CASE("GPU summary integrates sampled power for short points") {
  GpuTrace t = trace_with(3, 0);  // 600, 601, 602 W
  t.begin.energy_j = 100;
  t.end.energy_j = 100;  // the counter did not tick yet
  const Json g = summarize_gpu(t, 0.5);
  REQUIRE(g["avg_power_w"].get<double>() == Approx(601));
  REQUIRE(g["energy_j"].get<double>() == Approx(300.5));
  REQUIRE(g["energy_source"] == "samples");
}

TEST_CASE("GPU summary has the gauge statistics and the counter deltas") {
  GpuTrace t = trace_with(4, 1);
  t.begin.pcie_tx_bytes = 1000;
  t.end.pcie_tx_bytes = 5000;
  t.begin.nvlink_rx_bytes = 1 << 20;
  t.end.nvlink_rx_bytes = 3 << 20;
  t.begin.ecc_uncorrected = 2;
  t.end.ecc_uncorrected = 2;
  const Json g = summarize_gpu(t, 1.0);
  REQUIRE(g["device"] == 3);
  REQUIRE(g["pci_bus_id"] == "0000:19:00.0");
  REQUIRE(g["samples"] == 4);
  REQUIRE(g["power_w"]["min"].get<double>() == 600);
  REQUIRE(g["power_w"]["max"].get<double>() == 603);
  REQUIRE(g["sm_clock_mhz"]["median"].get<double>() == 1980);
  REQUIRE(g["temp_c"]["mean"].get<double>() == 60);
  REQUIRE(g["pcie_tx_bytes"] == 4000);
  REQUIRE(g["nvlink_rx_bytes"] == 2 << 20);
  REQUIRE(g["ecc_uncorrected_delta"] == 0);
  REQUIRE(g["throttle_fraction"].get<double>() == Approx(0.25));
}

// The model's reader finds every figure where the sampler wrote it.
TEST_CASE("the model reads back what the GPU summary wrote") {
  GpuTrace t = trace_with(4, 1);  // 600..603 W, the first sample power-capped
  t.samples[3].temp_c = 64;
  t.samples[0].sm_clock_mhz = 1500;
  t.begin.energy_j = 100;
  t.end.energy_j = 400;
  t.begin.power_violation_s = 1;
  t.end.power_violation_s = 1.5;
  t.begin.thermal_violation_s = 2;
  t.end.thermal_violation_s = 2;
  Json summary = Json{{"gpus", Json::array({summarize_gpu(t, 2.0)})}};
  summary["gpus"][0]["node"] = 1;
  summary["gpus"][0]["host"] = "n1";
  const std::vector<GpuTelemetry> gpus = gpu_telemetry(summary);
  REQUIRE(gpus.size() == 1);
  const GpuTelemetry& g = gpus[0];
  CHECK(g.device == 3);
  CHECK(g.node == 1);
  CHECK(g.host == "n1");
  CHECK(g.power_w.min == Approx(600));
  CHECK(g.power_w.mean == Approx(601.5));
  CHECK(g.power_w.max == Approx(603));
  CHECK(g.temp_c.max == Approx(64));
  CHECK(g.sm_clock_mhz.min == Approx(1500));
  CHECK(g.sm_clock_mhz.median == Approx(1980));
  CHECK(g.mem_clock_mhz.mean == Approx(2619));
  CHECK(g.avg_power_w == Approx(150));  // the counter's, not the samples' mean
  CHECK(g.energy_j == Approx(300));
  CHECK(g.throttle_fraction == Approx(0.25));
  CHECK(g.throttle_power_s == Approx(0.5));
  CHECK(g.throttle_thermal_s == Approx(0));
  CHECK(g.has_throttle_reasons);
  CHECK(g.throttle_reasons == std::vector<std::string>{"sw_power_cap"});
}

TEST_CASE("the model's reader: what is missing stays unknown, a plain number is every statistic") {
  const Json summary{{"gpus",
                      Json::array({Json{{"device", 0}, {"power_w", {{"mean", 500.0}}}},
                                   Json{{"device", 1}, {"temp_c", 71.0}, {"throttle_reasons", 1}},
                                   "not a GPU"})}};
  const std::vector<GpuTelemetry> gpus = gpu_telemetry(summary);
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].avg_power_w == Approx(500));  // no avg_power_w: the samples' mean
  CHECK_FALSE(gpus[0].power_w.max);
  CHECK_FALSE(gpus[0].temp_c.max);
  CHECK_FALSE(gpus[0].throttle_power_s);
  CHECK_FALSE(gpus[0].has_throttle_reasons);
  CHECK(gpus[1].temp_c.min == Approx(71));
  CHECK(gpus[1].temp_c.max == Approx(71));
  CHECK_FALSE(gpus[1].avg_power_w);
  CHECK_FALSE(gpus[1].has_throttle_reasons);  // not a list
  CHECK(gpu_telemetry(Json{{"gpus", "none"}}).empty());
}

TEST_CASE("GPU summary omits what NVML could not give") {
  GpuTrace t = trace_with(3, 0);
  const Json g = summarize_gpu(t, 1.0);
  REQUIRE_FALSE(g.contains("mem_temp_c"));
  REQUIRE_FALSE(g.contains("pcie_tx_bytes"));
  REQUIRE_FALSE(g.contains("nvlink_tx_bytes"));
  REQUIRE_FALSE(g.contains("ecc_uncorrected_delta"));
  REQUIRE_FALSE(g.contains("throttle_time_s"));
}

TEST_CASE("reasons seen leave out gpu_idle") {
  GpuTrace t = trace_with(5, 2);
  t.samples[4].reasons = *t.samples[4].reasons | clock_event::kHwThermal;
  const Json g = summarize_gpu(t, 1.0);
  REQUIRE(g["throttle_reasons"] == Json::array({"sw_power_cap", "hw_thermal"}));
}

TEST_CASE("point series is down-sampled to the maximum with bucket means") {
  GpuTrace t = trace_with(1000, 0);
  t.samples[0].reasons = clock_event::kSwPowerCap;
  std::vector<double> ticks;
  for (int i = 0; i < 1000; ++i) ticks.push_back(0.1 * i);
  const Json p = summarize_point(0.1, 100.0, 1.7e9, ticks, {t}, 200);
  REQUIRE(p["interval_s"].get<double>() == Approx(0.1));
  const Json& series = p["series"];
  REQUIRE(series["t_s"].size() == 200);
  REQUIRE(series["per_gpu"].size() == 1);
  const Json& g = series["per_gpu"][0];
  REQUIRE(g["device"] == 3);
  REQUIRE(g["power_w"].size() == 200);
  REQUIRE(g["power_w"][0].get<double>() == Approx(602));  // mean of 600..604
  REQUIRE(g["throttled"][0] == 1);
  REQUIRE(g["throttled"][1] == 0);
  REQUIRE(series["t_s"][0].get<double>() == Approx(0.2));
}

TEST_CASE("series entries are null where a gauge is missing") {
  GpuTrace t;
  t.samples.resize(2);
  const Json p = summarize_point(0.1, 0.2, kNoValue, {0.0, 0.1}, {t});
  REQUIRE(p["series"]["per_gpu"][0]["power_w"][0].is_null());
  REQUIRE(p["series"]["per_gpu"][0]["throttled"][1].is_null());
  REQUIRE_FALSE(p.contains("t0_unix_s"));
}

TEST_CASE("run series is null when no point has telemetry") {
  PointResult a, b;
  b.telemetry = Json();
  REQUIRE(build_run_series({a, b}).is_null());
}

TEST_CASE("run series places points on one time axis by their start time") {
  GpuTrace t = trace_with(4, 0);
  PointResult a, b;
  a.index = 0;
  a.workload = "gemm";
  a.telemetry = summarize_point(0.1, 0.4, 1000.0, {0, 0.1, 0.2, 0.3}, {t});
  b.index = 1;
  b.workload = "gemm";
  b.telemetry = summarize_point(0.1, 0.4, 1010.0, {0, 0.1, 0.2, 0.3}, {t});
  const Json s = build_run_series({b, a});
  REQUIRE(s["t_s"].size() == 8);
  REQUIRE(s["t_s"][0].get<double>() == Approx(0.0));
  REQUIRE(s["t_s"][4].get<double>() == Approx(10.0));
  REQUIRE(s["per_gpu"][0]["device"] == 3);
  REQUIRE(s["points"][1]["t_start_s"].get<double>() == Approx(10.0));
  REQUIRE(s["points"][1]["index"] == 1);
}

TEST_CASE("run series is down-sampled to max_points") {
  GpuTrace t = trace_with(300, 0);
  std::vector<double> ticks;
  for (int i = 0; i < 300; ++i) ticks.push_back(0.1 * i);
  PointResult a;
  a.telemetry = summarize_point(0.1, 30.0, 5.0, ticks, {t}, 300);
  const Json s = build_run_series({a}, 100);
  REQUIRE(s["t_s"].size() == 100);
  REQUIRE(s["per_gpu"][0]["power_w"].size() == 100);
}

TEST_CASE("energy metrics: throughput per watt over all the point's GPUs") {
  PointResult p;
  p.metrics = Json{{"tflops", 100.0}};
  p.telemetry = Json{{"gpus", Json::array({Json{{"avg_power_w", 200.0}, {"energy_j", 400.0}},
                                            Json{{"avg_power_w", 300.0}, {"energy_j", 600.0}}})}};
  add_energy_metrics(p, "tflops");
  REQUIRE(p.metrics["tflops_per_watt"].get<double>() == Approx(0.2));
  REQUIRE(p.metrics["energy_j"].get<double>() == Approx(1000));
}

TEST_CASE("energy metrics leave a point without telemetry alone") {
  PointResult p;
  p.metrics = Json{{"tflops", 100.0}};
  add_energy_metrics(p, "tflops");
  REQUIRE(p.metrics == Json{{"tflops", 100.0}});
}
