// `--batch-sizes auto`: per-GPU batch auto-growth until OOM or the maximum.
#include <cstdint>
#include <optional>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/run/batch_planner.hpp"
#include "mgbench/core/error.hpp"

using mgbench::BatchAutoPlanner;
using mgbench::Status;

namespace {

// Runs the planner, answering `ok` below `fits_below` and `outcome` from there on; returns
// the batches tried.
std::vector<std::int64_t> drive(BatchAutoPlanner& planner, std::int64_t fits_below,
                                Status outcome = Status::oom) {
  std::vector<std::int64_t> tried;
  while (auto batch = planner.next()) {
    tried.push_back(*batch);
    const bool fits = *batch < fits_below;
    planner.record(*batch, fits ? Status::ok : outcome,
                   fits ? std::optional<double>(1e6 * static_cast<double>(*batch))
                        : std::nullopt);
    REQUIRE(tried.size() < 100);
  }
  return tried;
}

}  // namespace

TEST_CASE("batch planner: doubles the batch after every ok point") {
  BatchAutoPlanner planner(8, 1024);
  REQUIRE(planner.next() == std::optional<std::int64_t>(8));
  planner.record(8, Status::ok, 1.0e9);
  REQUIRE(planner.next() == std::optional<std::int64_t>(16));
  planner.record(16, Status::ok, 2.0e9);
  CHECK(planner.next() == std::optional<std::int64_t>(32));
  CHECK_FALSE(planner.done());
}

TEST_CASE("batch planner: next() repeats the pending batch until it is recorded") {
  BatchAutoPlanner planner(8, 1024);
  CHECK(planner.next() == std::optional<std::int64_t>(8));
  CHECK(planner.next() == std::optional<std::int64_t>(8));
}

TEST_CASE("batch planner: stops at the first oom and keeps the largest batch that fit") {
  BatchAutoPlanner planner(8, 4096);
  CHECK(drive(planner, 200) == std::vector<std::int64_t>{8, 16, 32, 64, 128, 256});
  CHECK(planner.done());
  CHECK_FALSE(planner.next().has_value());
  CHECK(planner.largest_fit() == 128);
  CHECK(planner.oom_batch() == std::optional<std::int64_t>(256));
  CHECK(planner.stop_reason() == "oom");
}

TEST_CASE("batch planner: stops at the maximum, trying the maximum itself last") {
  BatchAutoPlanner planner(8, 100);
  CHECK(drive(planner, 1000) == std::vector<std::int64_t>{8, 16, 32, 64, 100});
  CHECK(planner.largest_fit() == 100);
  CHECK_FALSE(planner.oom_batch().has_value());
  CHECK(planner.stop_reason() == "max");
}

TEST_CASE("batch planner: a maximum on the doubling path is reached exactly") {
  BatchAutoPlanner planner(8, 32);
  CHECK(drive(planner, 1000) == std::vector<std::int64_t>{8, 16, 32});
  CHECK(planner.stop_reason() == "max");
}

TEST_CASE("batch planner: start equal to the maximum runs one point") {
  BatchAutoPlanner planner(64, 64);
  CHECK(drive(planner, 1000) == std::vector<std::int64_t>{64});
  CHECK(planner.largest_fit() == 64);
}

TEST_CASE("batch planner: a failed (non-oom) point stops the growth without a boundary") {
  BatchAutoPlanner planner(8, 1024);
  CHECK(drive(planner, 16, Status::failed) == std::vector<std::int64_t>{8, 16});
  CHECK(planner.done());
  CHECK(planner.largest_fit() == 8);
  CHECK_FALSE(planner.oom_batch().has_value());
  CHECK(planner.stop_reason() == "failed");
}

TEST_CASE("batch planner: a wrong result stops the growth too") {
  BatchAutoPlanner planner(8, 1024);
  CHECK(drive(planner, 32, Status::wrong) == std::vector<std::int64_t>{8, 16, 32});
  CHECK(planner.stop_reason() == "wrong");
  CHECK(planner.largest_fit() == 16);
}

TEST_CASE("batch planner: an oom at the start batch means nothing fits") {
  BatchAutoPlanner planner(8, 1024);
  CHECK(drive(planner, 0) == std::vector<std::int64_t>{8});
  CHECK(planner.largest_fit() == 0);
  CHECK(planner.oom_batch() == std::optional<std::int64_t>(8));
}

TEST_CASE("batch planner: records after the end do not restart the growth") {
  BatchAutoPlanner planner(8, 1024);
  drive(planner, 16);
  planner.record(16, Status::ok, std::nullopt);  // e.g. a retry that fit
  CHECK_FALSE(planner.next().has_value());
  CHECK(planner.largest_fit() == 16);
  CHECK(planner.headroom_curve().at("points").size() == 3);
}

TEST_CASE("batch planner: the headroom curve lists peak memory per batch in record order") {
  BatchAutoPlanner planner(8, 1024);
  drive(planner, 32);  // 8 ok (8e6 B), 16 ok (16e6 B), 32 oom (unknown)
  const mgbench::Json curve = planner.headroom_curve();
  CHECK(curve.at("start") == 8);
  CHECK(curve.at("max") == 1024);
  CHECK(curve.at("largest_fit") == 16);
  CHECK(curve.at("oom_batch") == 32);
  CHECK(curve.at("stop_reason") == "oom");
  const mgbench::Json& points = curve.at("points");
  REQUIRE(points.size() == 3);
  CHECK(points[0].at("batch") == 8);
  CHECK(points[0].at("status") == "ok");
  CHECK(points[0].at("peak_bytes").get<double>() == 8e6);
  CHECK(points[1].at("peak_bytes").get<double>() == 16e6);
  CHECK(points[2].at("status") == "oom");
  CHECK(points[2].at("peak_bytes").is_null());
}

TEST_CASE("batch planner: the curve of a fresh planner has no boundary yet") {
  const BatchAutoPlanner planner(8, 1024);
  const mgbench::Json curve = planner.headroom_curve();
  CHECK(curve.at("oom_batch").is_null());
  CHECK(curve.at("stop_reason") == "");
  CHECK(curve.at("points").empty());
}

TEST_CASE("batch planner: no overflow near the largest representable batch") {
  const std::int64_t big = std::int64_t{1} << 62;
  BatchAutoPlanner planner(big, INT64_MAX);
  planner.record(big, Status::ok, std::nullopt);
  CHECK(planner.next() == std::optional<std::int64_t>(INT64_MAX));
}

TEST_CASE("batch planner: a start below 1 or a maximum below the start is a usage error") {
  CHECK_THROWS_AS(BatchAutoPlanner(0, 64), mgbench::UsageError);
  CHECK_THROWS_AS(BatchAutoPlanner(-8, 64), mgbench::UsageError);
  CHECK_THROWS_AS(BatchAutoPlanner(128, 64), mgbench::UsageError);
}
