// Non-finite numbers: rejected where points are made (the point becomes `failed` with the
// reason), never sorted, and a file with `null` where a number was written still loads.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "catch_compat.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/non_finite.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"
#include "support.hpp"

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

mgbench::PointResult ok_point() {
  mgbench::PointResult p;
  p.workload = "w";
  p.samples = {1e-3, 2e-3, 3e-3};
  p.stats = mgbench::compute_statistics(p.samples, 10);
  p.metrics = {{"ops_per_s", 1000.0}};
  return p;
}

}  // namespace

TEST_CASE("non-finite: a NaN sample makes the point failed with the reason") {
  auto p = ok_point();
  p.samples[1] = kNan;
  mgbench::reject_non_finite(p);
  CHECK(p.status == mgbench::Status::failed);
  CHECK(p.message.find("sample 1 is not finite") != std::string::npos);
  CHECK(p.samples.empty());
  // The rejected point survives the JSON round trip (before: NaN was written as null and the
  // point could not be read back).
  const auto back = mgbench::Json::parse(mgbench::dump_json(mgbench::Json(p))).get<mgbench::PointResult>();
  CHECK(back.status == mgbench::Status::failed);
}

TEST_CASE("non-finite: an infinite metric makes the point failed and is dropped") {
  auto p = ok_point();
  p.metrics["samples_per_s"] = kInf;
  mgbench::reject_non_finite(p);
  CHECK(p.status == mgbench::Status::failed);
  CHECK(p.message.find("metric 'samples_per_s'") != std::string::npos);
  CHECK_FALSE(p.metrics.contains("samples_per_s"));
  CHECK(p.metrics.contains("ops_per_s"));
}

TEST_CASE("non-finite: a finite point is left alone") {
  auto p = ok_point();
  mgbench::reject_non_finite(p);
  CHECK(p.status == mgbench::Status::ok);
  CHECK(p.samples.size() == 3);
}

TEST_CASE("non-finite: readers accept null as NaN (a file written by an older version)") {
  auto j = mgbench::Json(ok_point());
  j["samples"][1] = nullptr;
  j["stats"]["rel_stdev"] = nullptr;
  j["wall_s"] = nullptr;
  mgbench::PointResult p;
  REQUIRE_NOTHROW(p = j.get<mgbench::PointResult>());
  CHECK(std::isnan(p.samples[1]));
  CHECK(std::isnan(p.stats.rel_stdev));
}

TEST_CASE("statistics: NaN and infinite samples never reach the sort") {
  const auto s = mgbench::compute_statistics({3.0, kNan, 1.0, kInf, 2.0}, 50);
  CHECK(s.n == 3);
  CHECK(s.min == 1.0);
  CHECK(s.median == 2.0);
  CHECK(s.max == 3.0);
  CHECK(mgbench::median_of({kNan, 5.0, kNan}) == 5.0);
}

TEST_CASE("statistics: spread around a zero mean gives a finite relative stdev") {
  const auto s = mgbench::compute_statistics({-1.0, 1.0}, 10);
  CHECK(std::isfinite(s.rel_stdev));  // was +inf, written as null
  CHECK(s.rel_stdev > 1e300);
  CHECK(std::isfinite(mgbench::relative_stdev({-2.0, 2.0})));
}

TEST_CASE("encoding: a non-UTF-8 host name and path are written, not thrown on") {
  const std::string dir = mgbench::test::temp_dir("encoding");
  mgbench::RunResult run;
  run.host = "node\xff\xfe-1";
  run.argv = {"mgbench", "sweep", "--out", dir + "/out-\xff"};
  run.points.push_back(ok_point());
  const std::string path = dir + "/results.json";
  REQUIRE_NOTHROW(mgbench::save_results(run, path));
  const auto back = mgbench::load_results(path);
  CHECK(back.host == "node\xEF\xBF\xBD\xEF\xBF\xBD-1");
  CHECK(back.points.size() == 1);
  std::filesystem::remove_all(dir);
}
