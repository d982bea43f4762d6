// The report's per-point telemetry summary (reports/sections.hpp), read through the model's typed
// view of a point's telemetry (model/point_view.hpp): the slowest GPU's clock and device, the
// median clock, the mean power, the hottest GPU, the largest throttled share, the summed energy.
#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/reports/sections.hpp"

using mgbench::Json;
using mgbench::PointResult;

namespace {

Json gpu(int device, double clock, double power, Json temp, double throttled, double energy) {
  return Json{{"device", device},
              {"sm_clock_mhz", {{"median", clock}}},
              {"power_w", {{"mean", power}}},
              {"temp_c", std::move(temp)},
              {"throttle_fraction", throttled},
              {"energy_j", energy}};
}

}  // namespace

TEST_CASE("telemetry summary: slowest GPU, median clock, mean power, hottest, energy summed") {
  PointResult p;
  p.telemetry = Json{{"gpus",
                      {gpu(0, 1980, 600, {{"max", 70.0}}, 0.0, 10.0),
                       gpu(1, 1755, 500, 74.0, 0.25, 20.0),  // a plain number for temp_c
                       gpu(2, 1900, 700, {{"max", 72.0}}, 0.5, 30.0)}}};
  const auto s = mgbench::reports::telemetry_summary(p);
  REQUIRE(s.slowest_sm_clock_mhz);
  CHECK(*s.slowest_sm_clock_mhz == 1755);  // the middle GPU, not the first or last
  REQUIRE(s.slowest_sm_device);
  CHECK(*s.slowest_sm_device == 1);
  CHECK(s.sm_clock_mhz == Approx(1900));  // the median of three
  CHECK(s.avg_power_w == Approx(600));
  CHECK(s.max_temp_c == Approx(74));
  CHECK(s.throttle_fraction == Approx(0.5));  // the last GPU's
  CHECK(s.energy_j == Approx(60));
  // An even count takes the mean of the middle two; avg_power_w wins over power_w.mean.
  p.telemetry["gpus"].erase(2);
  p.telemetry["gpus"][0]["avg_power_w"] = 650.0;
  const auto two = mgbench::reports::telemetry_summary(p);
  CHECK(two.sm_clock_mhz == Approx((1980.0 + 1755.0) / 2));
  CHECK(two.avg_power_w == Approx(575));
}

TEST_CASE("telemetry summary: nothing recorded gives nothing") {
  PointResult p;
  const auto none = mgbench::reports::telemetry_summary(p);
  CHECK_FALSE(none.avg_power_w);
  CHECK_FALSE(none.slowest_sm_clock_mhz);
  p.telemetry = Json{{"gpus", {Json{{"device", 0}}}}};
  const auto bare = mgbench::reports::telemetry_summary(p);
  CHECK_FALSE(bare.sm_clock_mhz);
  CHECK_FALSE(bare.energy_j);
  CHECK_FALSE(bare.max_temp_c);
}
