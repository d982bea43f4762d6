// The sweep's progress line: position, time left and the last headline figure.
#include <cmath>
#include <limits>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/progress.hpp"

namespace {

const bool registered = mgbench::register_workload(
    mgbench::Workload("zz_test_progress")
        .summary("test-only workload")
        .axis(mgbench::Axis::integer("batch", {"1"}))
        .throughput("busbw_GBps", "GB/s"));

mgbench::PointResult point(double value, mgbench::Status status = mgbench::Status::ok) {
  mgbench::PointResult p;
  p.workload = "zz_test_progress";
  p.status = status;
  p.metrics = {{"busbw_GBps", value}};
  return p;
}

}  // namespace

TEST_CASE("the progress line shows the point, the time left and the last figure") {
  mgbench::ProgressState s{3, 12, "gemm x2 dtype=bf16", 40.2, "612.3 TFLOP/s"};
  CHECK(mgbench::progress_line(s) == "[3/12] gemm x2 dtype=bf16  ETA 40 s  last 612.3 TFLOP/s");
  s.eta_s = -1;
  s.last_figure.clear();
  CHECK(mgbench::progress_line(s) == "[3/12] gemm x2 dtype=bf16");
}

TEST_CASE("the ETA is the rate so far times what is left, the plan's estimate before that") {
  CHECK(mgbench::progress_eta_s(0, 0, 10, 120) == 120);
  CHECK(mgbench::progress_eta_s(30, 3, 9, 120) == Approx(90));
  CHECK(mgbench::progress_eta_s(30, 3, 0, 120) == 0);
}

TEST_CASE("durations read in seconds, minutes, then hours and minutes") {
  CHECK(mgbench::format_duration(0) == "0 s");
  CHECK(mgbench::format_duration(59.4) == "59 s");
  CHECK(mgbench::format_duration(-3) == "0 s");
  CHECK(mgbench::format_duration(600) == "10 min");
  CHECK(mgbench::format_duration(3599) == "60 min");
  CHECK(mgbench::format_duration(3600 + 5 * 60) == "1 h 05 min");
}

TEST_CASE("the headline figure is the workload's throughput metric with its unit") {
  REQUIRE(registered);
  CHECK(mgbench::headline_figure(point(123.456)) == "123.5 GB/s");
  CHECK(mgbench::headline_figure(point(0.5, mgbench::Status::failed)) == "failed");
  CHECK(mgbench::headline_figure(point(std::numeric_limits<double>::quiet_NaN())).empty());
  mgbench::PointResult unknown = point(1.0);
  unknown.workload = "no_such_workload";
  CHECK(mgbench::headline_figure(unknown).empty());
  mgbench::PointResult missing = point(1.0);
  missing.metrics = mgbench::Json::object();
  CHECK(mgbench::headline_figure(missing).empty());
}
