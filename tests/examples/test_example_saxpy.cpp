// The template workload (benchmarks/examples/example_saxpy.cpp) on the CPU: it registers in the
// binaries that link it, with everything a real workload declares (category, headline with a
// % of peak, axes per profile), its formulas are right at their boundaries, and the product's
// binary neither lists it nor runs it.
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "example_saxpy.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"
#include "support.hpp"

namespace ex = mgbench::bench::example;
using mgbench::Profile;
using Values = std::vector<std::string>;

namespace {

const mgbench::Workload& example() {
  const mgbench::Workload* w = mgbench::find_workload("example_saxpy");
  REQUIRE(w != nullptr);
  return *w;
}

}  // namespace

TEST_CASE("example_saxpy declares its category, a headline with % of HBM peak and a runner") {
  const mgbench::Workload& w = example();
  CHECK(w.category() == mgbench::WorkloadCategory::memory);
  CHECK_FALSE(w.formulas().empty());
  CHECK(w.run() != nullptr);
  CHECK(w.throughput_metric() == "GBps_aggregate");
  const mgbench::Presentation p = w.presentation();
  REQUIRE(p.headline_);
  CHECK(p.headline_->name == "GBps_aggregate");
  const mgbench::MetricSpec* headline = p.find_metric("GBps_aggregate");
  REQUIRE(headline != nullptr);
  REQUIRE(headline->peak_);
  CHECK(headline->peak_->as == "GBps_per_gpu");
  const mgbench::MetricSpec* per_gpu = p.find_metric("GBps_per_gpu");
  REQUIRE(per_gpu != nullptr);
  REQUIRE(per_gpu->peak_);
  CHECK(per_gpu->peak_->kind == mgbench::LimitKind::hbm_traffic);
}

TEST_CASE("example_saxpy gives each profile its own sizes and plans one point per value") {
  const mgbench::Workload& w = example();
  const mgbench::Axis* bytes = w.find_axis("bytes");
  REQUIRE(bytes != nullptr);
  CHECK(bytes->kind == mgbench::AxisKind::size);
  CHECK(bytes->values_for(Profile::quick) == Values{"268435456"});
  CHECK(bytes->values_for(Profile::standard) == Values{"268435456", "1073741824"});
  CHECK(bytes->values_for(Profile::full) ==
        Values{"67108864", "268435456", "1073741824", "2147483648"});
  const mgbench::Axis* timing = w.find_axis("timing");
  REQUIRE(timing != nullptr);
  CHECK(timing->values_for(Profile::full) == Values{"device"});
  mgbench::AxisValues values;
  for (const auto& axis : w.axes()) {
    for (const auto& text : axis.values_for(Profile::full)) {
      values[axis.name].push_back(axis.parse_value(text));
    }
  }
  const auto points = w.expand_points(values);
  REQUIRE(points.size() == 4);
  CHECK(points.front().at("bytes") == 67108864);
  CHECK(points.back().at("bytes") == 2147483648LL);
}

TEST_CASE("example_saxpy formulas: whole fp32 elements, 3 x 4 bytes each, GB/s from t") {
  CHECK_THROWS_AS(ex::saxpy_elements(0), mgbench::UsageError);
  CHECK_THROWS_AS(ex::saxpy_elements(3), mgbench::UsageError);
  CHECK(ex::saxpy_elements(4) == 1);
  CHECK(ex::saxpy_elements(7) == 1);
  CHECK(ex::saxpy_elements(8) == 2);
  CHECK(ex::saxpy_elements(std::uint64_t{1} << 40) == std::uint64_t{1} << 38);
  CHECK(ex::saxpy_bytes_moved(1) == 12.0);
  CHECK(ex::saxpy_bytes_moved(1000) == 12000.0);
  // 4003 bytes: 1000 elements, 12000 bytes moved per op; in 1 us: 12 GB/s per GPU.
  const mgbench::Json m = ex::saxpy_metrics(mgbench::Params{{"bytes", 4003}}, 4, 1e-6);
  CHECK(m.at("GBps_per_gpu").get<double>() == Approx(12.0).epsilon(1e-12));
  CHECK(m.at("GBps_aggregate").get<double>() == Approx(48.0).epsilon(1e-12));
  CHECK(ex::saxpy_metrics(mgbench::Params{{"bytes", 4003}}, 1, 0.0).at("GBps_per_gpu") == 0.0);
}

TEST_CASE("the mgbench binary neither lists nor runs example_saxpy") {
  const auto list = mgbench::test::run_mgbench("list");
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("membw") != std::string::npos);  // the real list, not an empty one
  CHECK(list.out.find("example_saxpy") == std::string::npos);
  const auto sweep = mgbench::test::run_mgbench("sweep --workloads example_saxpy --dry-run");
  CHECK(sweep.exit_code == 2);
  CHECK(sweep.err.find("unknown workload 'example_saxpy'") != std::string::npos);
}
