// The template workload (benchmarks/examples/example_saxpy.cpp) on a GPU, through the runner the
// workload tests use: every point ok and verified, its metrics equal to their formula from the
// measured median, on one rank and on two ranks sharing GPU 0; and its check counts exactly the
// elements of an output that are wrong.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "example_saxpy.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/model/results.hpp"
#include "workload_runner.hpp"

namespace ex = mgbench::bench::example;
using mgbench::Params;

namespace {

#define CUDA_REQUIRE(expr) REQUIRE((expr) == cudaSuccess)

// Every point ok, every element checked and right, GB/s = 12 x elements / median / 1e9.
void require_verified(const std::vector<mgbench::PointResult>& results,
                      const std::vector<Params>& points, int ranks) {
  REQUIRE(results.size() == points.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const mgbench::PointResult& r = results[i];
    CAPTURE(r.params.dump(), mgbench::to_string(r.status), r.message, r.verification.dump());
    REQUIRE(r.status == mgbench::Status::ok);
    CHECK(r.params == points[i]);
    CHECK(r.measured.timing == mgbench::timing_from_string(points[i].text("timing")));
    CHECK(r.verification.value("ok", false));
    CHECK(r.verification.value("wrong", std::uint64_t{1}) == 0);
    const auto elements = static_cast<std::uint64_t>(points[i].integer("bytes")) / 4;
    CHECK(r.verification.value("checked", std::uint64_t{0}) == elements);
    REQUIRE(r.stats.median > 0);
    const double per_gpu = 12.0 * static_cast<double>(elements) / r.stats.median / 1e9;
    CHECK(r.metrics.at("GBps_per_gpu").get<double>() == Approx(per_gpu).epsilon(1e-9));
    CHECK(r.metrics.at("GBps_aggregate").get<double>() == Approx(ranks * per_gpu).epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("example_saxpy runs verified on GPU 0 under every timing method", "[example][gpu]") {
  // One element, a size that is not a whole number of 16-byte packs, and larger arrays.
  const std::vector<Params> points = {
      Params{{"bytes", 4}, {"timing", "device"}},
      Params{{"bytes", (64 << 20) + 12}, {"timing", "device"}},
      Params{{"bytes", (64 << 20) + 12}, {"timing", "host"}},
      Params{{"bytes", 1 << 20}, {"timing", "graph"}}};
  require_verified(mgbench::test::run_workload("example_saxpy", {0}, points), points, 1);
}

TEST_CASE("example_saxpy on two ranks sharing GPU 0: each rank verified, aggregate = 2 x",
          "[example][gpu]") {
  const std::vector<Params> points = {Params{{"bytes", (16 << 20) + 4}, {"timing", "device"}}};
  require_verified(mgbench::test::run_workload("example_saxpy", {0, 0}, points), points, 2);
}

TEST_CASE("example_saxpy's check counts exactly the wrong elements, first and last included",
          "[example][gpu]") {
  const std::uint64_t n = 1000003;
  const std::uint32_t seed = 7;
  CUDA_REQUIRE(cudaSetDevice(0));
  float *x = nullptr, *y = nullptr, *out = nullptr;
  unsigned long long* counter = nullptr;
  CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&x), n * 4));
  CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&y), n * 4));
  CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&out), n * 4));
  CUDA_REQUIRE(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter));
  CUDA_REQUIRE(mgbench::kernels::triad_fill(y, x, n, seed, nullptr));
  CUDA_REQUIRE(mgbench::kernels::triad(out, y, x, ex::kSaxpyA, n, nullptr));
  const mgbench::bench::Verification right = ex::saxpy_check(out, n, seed, counter, nullptr);
  CHECK(right.ok);
  CHECK(right.details.at("wrong") == 0);
  CHECK(right.details.at("checked") == n);
  // Expected values are whole numbers: 0.5 differs from every one of them.
  const float bad = 0.5f;
  CUDA_REQUIRE(cudaMemcpy(out, &bad, 4, cudaMemcpyHostToDevice));
  CUDA_REQUIRE(cudaMemcpy(out + n - 1, &bad, 4, cudaMemcpyHostToDevice));
  const mgbench::bench::Verification wrong = ex::saxpy_check(out, n, seed, counter, nullptr);
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.details.at("wrong") == 2);
  CHECK(wrong.message == "2 of 1000003 output elements differ from a * x + y");
  // Another rank's inputs (another seed): nearly every element differs.
  CHECK(ex::saxpy_check(out, n, seed + 1, counter, nullptr).details.at("wrong") > n / 2);
  for (void* p : {static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(out),
                  static_cast<void*>(counter)}) {
    CUDA_REQUIRE(cudaFree(p));
  }
}
