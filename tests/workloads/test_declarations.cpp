// The workloads as the binary registers them: axes, defaults per profile, throughput metrics.
// Runs on the CPU (declarations need no GPU); this binary links the workloads and so cuBLAS and
// NCCL, which the unit-test binary must not.
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/bench/gemm_math.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"

namespace {

using mgbench::AxisValues;
using mgbench::bench::expand_gemm_points;

// The values a profile gives each axis of the registered workload.
AxisValues registered_defaults(mgbench::Profile profile) {
  const mgbench::Workload* gemm = mgbench::find_workload("gemm");
  REQUIRE(gemm != nullptr);
  AxisValues values;
  for (const auto& axis : gemm->axes()) {
    for (const auto& text : axis.values_for(profile)) {
      values[axis.name].push_back(axis.parse_value(text));
    }
  }
  return values;
}

}  // namespace

TEST_CASE("gemm workload: standard defaults plan square points only") {
  const auto points = expand_gemm_points(registered_defaults(mgbench::Profile::standard));
  // 2 sizes x (5 dtypes x 2 impls - mgbench x fp8).
  CHECK(points.size() == 18);
  for (const auto& p : points) CHECK(p.at("shape") == "square");
}

TEST_CASE("gemm workload: quick profile plans one size and fewer dtypes") {
  const auto points = expand_gemm_points(registered_defaults(mgbench::Profile::quick));
  REQUIRE_FALSE(points.empty());
  CHECK(points.size() < 18);
  for (const auto& p : points) CHECK(p.at("m") == 4096);
}

TEST_CASE("gemm workload: declares the axes the CLI maps and its throughput metric") {
  const mgbench::Workload* gemm = mgbench::find_workload("gemm");
  REQUIRE(gemm != nullptr);
  const auto* batch = gemm->find_axis("batch");
  const auto* dtype = gemm->find_axis("dtype");
  REQUIRE(batch != nullptr);
  REQUIRE(dtype != nullptr);
  CHECK(batch->standard_values.empty());
  CHECK(dtype->allowed_values == std::vector<std::string>{"fp32", "tf32", "fp16", "bf16", "fp8"});
  CHECK_THROWS_AS(dtype->parse_value("int4"), mgbench::UsageError);
  CHECK(gemm->throughput_metric() == "tflops_aggregate");
  CHECK(gemm->run() != nullptr);
}

TEST_CASE("allreduce workload declares nccl-tests parameters and busbw throughput",
          "[allreduce]") {
  const mgbench::Workload* w = mgbench::find_workload("allreduce");
  REQUIRE(w != nullptr);
  for (const char* name : {"bytes", "dtype", "impl", "inplace", "algo"}) {
    CHECK(w->find_axis(name) != nullptr);
  }
  CHECK(w->throughput_metric() == "busbw_GBps");
  REQUIRE(w->find_axis("dtype") != nullptr);
  CHECK(w->find_axis("dtype")->allowed_values ==
        std::vector<std::string>{"fp32", "bf16", "fp16", "int32"});
}
