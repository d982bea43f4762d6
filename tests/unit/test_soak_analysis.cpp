// The soak analysis: rolling medians, steady state, degradation, per-GPU spread, throttled
// spans and the verdict; the duration parser and the health counters of `mgbench soak`.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/analysis/soak_analysis.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/run/soak.hpp"

using mgbench::SoakGpuWindow;
using mgbench::SoakHealth;
using mgbench::SoakWindow;

namespace {

// Windows of `length` seconds; GPU g of window i runs at rates[i] * scale[g].
std::vector<SoakWindow> windows_of(const std::vector<double>& rates, double length = 10,
                                   const std::vector<double>& scale = {1.0, 1.0}) {
  std::vector<SoakWindow> out;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    SoakWindow w;
    w.index = i;
    w.t_start_s = static_cast<double>(i) * length;
    w.t_end_s = w.t_start_s + length;
    for (std::size_t g = 0; g < scale.size(); ++g) {
      SoakGpuWindow gw;
      gw.device = static_cast<int>(g);
      gw.throughput = rates[i] * scale[g];
      gw.temp_c = 60.0 + static_cast<double>(g);
      gw.throttle_fraction = 0;
      w.gpus.push_back(gw);
    }
    out.push_back(w);
  }
  return out;
}

std::vector<double> flat(std::size_t n, double v) { return std::vector<double>(n, v); }

}  // namespace

TEST_CASE("rolling medians take n consecutive values") {
  const auto r = mgbench::rolling_medians({1, 5, 3, 4, 2}, 3);
  REQUIRE(r.size() == 3);
  CHECK(r[0] == 3);
  CHECK(r[1] == 4);
  CHECK(r[2] == 3);
  CHECK(mgbench::rolling_medians({1, 2}, 3).empty());
}

TEST_CASE("steady state starts where every later rolling median stays within the tolerance") {
  // A warm-up ramp, then a plateau at 100.
  const std::vector<double> v = {80, 90, 95, 100, 100, 101, 99, 100, 100};
  const auto s = mgbench::steady_index(v, 3, 0.03);
  REQUIRE(s);
  CHECK(*s == 2);  // median(95,100,100) = 100
  CHECK_FALSE(mgbench::steady_index({100, 90, 80, 70, 60, 50}, 3, 0.03));
  CHECK_FALSE(mgbench::steady_index({100, 100}, 3, 0.03));
}

TEST_CASE("a flat soak runs stably: steady at once, no degradation, no spread") {
  const auto a = mgbench::analyze_soak(windows_of(flat(30, 100)), SoakHealth{});
  CHECK(a.stable);
  CHECK(a.reasons.empty());
  REQUIRE(a.steady_window);
  CHECK(*a.steady_window == 0);
  REQUIRE(a.time_to_steady_s);
  CHECK(*a.time_to_steady_s == 0);
  REQUIRE(a.degradation);
  CHECK(*a.degradation == Approx(0.0).margin(1e-12));
  REQUIRE(a.gpu_spread);
  CHECK(*a.gpu_spread == Approx(0.0).margin(1e-12));
  REQUIRE(a.hottest_device);
  CHECK(*a.hottest_device == 1);
  CHECK(a.temp_spread_c.value_or(-1) == Approx(1.0));
}

TEST_CASE("degradation compares the first steady minute with the last one") {
  // 30 windows of 10 s: 100 for the first 24, then a 10 % sag in the last minute.
  std::vector<double> v = flat(24, 100);
  for (int i = 0; i < 6; ++i) v.push_back(90);
  const auto a = mgbench::analyze_soak(windows_of(v), SoakHealth{});
  REQUIRE(a.degradation);
  CHECK(*a.degradation == Approx(0.10));
  CHECK_FALSE(a.stable);
}

TEST_CASE("a slow card is named by the per-GPU spread") {
  const auto a = mgbench::analyze_soak(windows_of(flat(12, 100), 10, {1.0, 0.9}), SoakHealth{});
  REQUIRE(a.gpu_spread);
  CHECK(*a.gpu_spread == Approx(0.10));
  CHECK(a.slowest_device.value_or(-1) == 1);
  CHECK_FALSE(a.stable);
  bool named = false;
  for (const auto& r : a.reasons) named = named || r.find("GPU 1") != std::string::npos;
  CHECK(named);
}

TEST_CASE("throttled windows join into spans, only severe reasons fail the verdict") {
  auto w = windows_of(flat(10, 100));
  for (std::size_t i : {3u, 4u, 7u}) {
    w[i].gpus[0].throttle_fraction = 1.0;
    w[i].gpus[0].throttle_reasons = {"sw_power_cap"};
  }
  auto a = mgbench::analyze_soak(w, SoakHealth{});
  REQUIRE(a.throttled_spans.size() == 2);
  CHECK(a.throttled_spans[0].t_start_s == 30);
  CHECK(a.throttled_spans[0].t_end_s == 50);
  CHECK(a.throttled_spans[0].devices == std::vector<int>{0});
  CHECK(a.throttled_spans[1].reasons == std::vector<std::string>{"sw_power_cap"});
  CHECK(a.stable);  // power capping is normal under full load
  w[7].gpus[0].throttle_reasons = {"hw_thermal"};
  a = mgbench::analyze_soak(w, SoakHealth{});
  CHECK(a.severe_throttle_fraction == Approx(0.05));
  CHECK_FALSE(a.stable);
}

TEST_CASE("health findings and failed windows each fail the verdict with a reason") {
  SoakHealth h;
  h.xid_events = 1;
  h.new_uncorrected_ecc = true;
  h.row_remap_trouble = true;
  h.stopped_early = "XID 79 on GPU 0";
  auto w = windows_of(flat(10, 100));
  w[5].ok = false;
  const auto a = mgbench::analyze_soak(w, h);
  CHECK_FALSE(a.stable);
  CHECK(a.reasons.size() == 5);
}

TEST_CASE("too few windows, or never steady, is not stable") {
  const auto few = mgbench::analyze_soak(windows_of({100, 100}), SoakHealth{});
  CHECK_FALSE(few.stable);
  const auto drift = mgbench::analyze_soak(windows_of({100, 90, 80, 70, 60, 50}), SoakHealth{});
  CHECK_FALSE(drift.steady_window);
  CHECK_FALSE(drift.stable);
  REQUIRE(drift.degradation);  // still measured, over the whole soak
  CHECK(*drift.degradation > 0.3);
}

TEST_CASE("the analysis serialises with the verdict in words") {
  mgbench::Json j = mgbench::analyze_soak(windows_of(flat(5, 100)), SoakHealth{});
  CHECK(j["verdict"] == "runs stably");
  CHECK(j["stable"] == true);
  CHECK(j["throttled_spans"].is_array());
  mgbench::Json w = windows_of({100})[0];
  CHECK(w["throughput"].get<double>() == 200);
  CHECK(w["gpus"][0]["power_w"].is_null());
}

TEST_CASE("soak durations: 10m, 9m30s, 90s, 1h, plain seconds, bad ones are usage errors") {
  CHECK(mgbench::parse_duration("10m", "--duration") == 600);
  CHECK(mgbench::parse_duration("9m30s", "--duration") == 570);
  CHECK(mgbench::parse_duration("90s", "--duration") == 90);
  CHECK(mgbench::parse_duration("1h", "--duration") == 3600);
  CHECK(mgbench::parse_duration("600", "--duration") == 600);
  CHECK(mgbench::parse_duration("0.5s", "--window") == 0.5);
  for (const char* bad : {"", "m", "10x", "9m30", "-5s", "0s", "1.2.3s", "s10"}) {
    CHECK_THROWS_AS(mgbench::parse_duration(bad, "--duration"), mgbench::UsageError);
  }
}

TEST_CASE("soak windows sample for exactly the window and keep the sweep's noise target") {
  const mgbench::RunSettings base;
  const auto s = mgbench::soak_window_settings(base, 10);
  CHECK(s.stopping.min_time_s == 10);
  CHECK(s.stopping.max_time_s == 10);
  CHECK(s.stopping.max_noise == base.stopping.max_noise);  // noisy = an uncertain median
  CHECK(s.group_timeout_s >= 100);
  // Perfectly steady samples never end a window early; a whole window ends it.
  const std::vector<double> part(180, 0.05);  // 9 s of the 10
  CHECK(mgbench::evaluate_stop(s.stopping, part, 9.2) == mgbench::StopDecision::keep_going);
  const std::vector<double> whole(201, 0.05);
  CHECK(mgbench::evaluate_stop(s.stopping, whole, 10.1) == mgbench::StopDecision::converged);
}

TEST_CASE("health counters: grown uncorrected ECC and row-remap trouble are found") {
  const mgbench::Json before = mgbench::Json::parse(
      R"([{"device":0,"ecc_uncorrected_volatile":0,"ecc_uncorrected_aggregate":2,
           "remapped_rows":{"corrected":1,"uncorrected":0,"pending":false,"failure":false}}])");
  auto after = before;
  auto h = mgbench::compare_counters(before, after);
  CHECK_FALSE(h["new_uncorrected_ecc"].get<bool>());
  CHECK_FALSE(h["row_remap_trouble"].get<bool>());
  after[0]["ecc_uncorrected_volatile"] = 1;
  CHECK(mgbench::compare_counters(before, after)["new_uncorrected_ecc"].get<bool>());
  after = before;
  after[0]["remapped_rows"]["pending"] = true;
  CHECK(mgbench::compare_counters(before, after)["row_remap_trouble"].get<bool>());
  after = before;
  after[0]["remapped_rows"]["uncorrected"] = 1;
  CHECK(mgbench::compare_counters(before, after)["row_remap_trouble"].get<bool>());
  // Unknown counters (no NVML) find nothing.
  const mgbench::Json blind = mgbench::Json::parse(R"([{"device":0}])");
  CHECK_FALSE(mgbench::compare_counters(blind, blind)["new_uncorrected_ecc"].get<bool>());
}
