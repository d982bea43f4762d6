// Timing methods and cold-cache rotation on one GPU: host-launched and graph-captured samples
// give exact all-reduce sums, a cold rotation larger than twice L2 verifies every buffer set
// (all-reduce, membw, GEMM), device and host latency come side by side for small messages,
// and a 1-GPU in-place all-reduce is waived.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/results.hpp"
#include "workload_runner.hpp"

namespace {

[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Json;
using mgbench::Params;
using mgbench::PointResult;

std::uint64_t l2_bytes() {
  int l2 = 0;
  REQUIRE(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0) == cudaSuccess);
  return static_cast<std::uint64_t>(l2);
}

Params allreduce(const std::string& impl, std::uint64_t bytes, const std::string& timing,
                 const std::string& cache, bool inplace = false) {
  return Params{{"bytes", bytes}, {"count", bytes / 4}, {"dtype", "fp32"}, {"impl", impl},
                {"inplace", inplace}, {"timing", timing}, {"cache", cache}};
}

const Json& rotation_of(const PointResult& r) {
  return r.extra["ranks"][0]["details"]["rotation"];
}

void require_exact(const PointResult& r) {
  INFO(r.params.dump() << " -> " << mgbench::to_string(r.status) << ": " << r.message);
  REQUIRE(r.status == mgbench::Status::ok);
  REQUIRE(r.verification.contains("wrong"));
  CHECK(r.verification["wrong"].get<std::uint64_t>() == 0);
  CHECK(r.verification["ok"] == true);
}

}  // namespace

TEST_CASE("host- and graph-timed all-reduce give exact sums, and each point records its method",
          "[timing][gpu]") {
  std::vector<Params> points;
  for (const char* impl : {"nccl", "mgbench"}) {
    for (const char* timing : {"device", "host", "graph"}) {
      points.push_back(allreduce(impl, std::uint64_t{1} << 20, timing, "hot"));
    }
  }
  const auto results = mgbench::test::run_allreduce({0}, points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    require_exact(r);
    CHECK(r.measured.timing == mgbench::timing_from_string(r.params.text("timing")));
    CHECK(r.measured.cache == mgbench::CacheMode::hot);
    CHECK(rotation_of(r)["sets"] == 1);
    CHECK(r.metrics["algbw_GBps"].get<double>() > 0);
    CHECK_FALSE(r.metrics.contains("busbw_GBps"));  // one GPU: undefined
  }
}

TEST_CASE("a cold all-reduce rotates through more than twice L2 and verifies every set",
          "[timing][gpu]") {
  const std::uint64_t bytes = std::uint64_t{1} << 20;
  std::vector<Params> points;
  for (const char* impl : {"nccl", "mgbench"}) {
    for (const char* timing : {"device", "host", "graph"}) {
      points.push_back(allreduce(impl, bytes, timing, "cold"));
    }
  }
  const auto results = mgbench::test::run_allreduce({0}, points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    require_exact(r);
    CHECK(r.measured.cache == mgbench::CacheMode::cold);
    const Json& rot = rotation_of(r);
    INFO(rot.dump());
    CHECK(rot["sets"].get<std::uint64_t>() > 1);
    CHECK(rot["exceeds_2x_l2"] == true);
    CHECK(rot["total_bytes"].get<std::uint64_t>() > 2 * l2_bytes());
    // The last timed op's output, then one fresh op on every set.
    CHECK(r.verification["checked"].get<std::uint64_t>() ==
          bytes / 4 * (rot["sets"].get<std::uint64_t>() + 1));
    // The rotation counts toward the point's memory.
    CHECK(r.memory["peak_bytes"][0].get<std::uint64_t>() >= rot["total_bytes"].get<std::uint64_t>());
  }
}

TEST_CASE("small all-reduce messages carry device and host-launched time side by side",
          "[timing][gpu]") {
  const auto results = mgbench::test::run_allreduce(
      {0}, {allreduce("nccl", 4096, "host", "cold"), allreduce("nccl", 4096, "graph", "hot"),
            allreduce("nccl", std::uint64_t{4} << 20, "host", "cold")});
  REQUIRE(results.size() == 3);
  for (const auto& r : results) require_exact(r);
  CHECK(results[0].metrics["host_time_us"].get<double>() > 0);
  CHECK(results[0].metrics["device_time_us"].get<double>() > 0);
  CHECK(results[1].metrics["graph_time_us"].get<double>() > 0);
  CHECK(results[1].metrics["device_time_us"].get<double>() > 0);
  CHECK_FALSE(results[2].metrics.contains("device_time_us"));  // 4 MiB: one method only
}

TEST_CASE("a 1-GPU in-place all-reduce is waived with the reason", "[timing][gpu]") {
  const auto results =
      mgbench::test::run_allreduce({0}, {allreduce("nccl", 4096, "host", "cold", true)});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == mgbench::Status::waived);
  CHECK(results[0].message.find("moves nothing") != std::string::npos);
}

TEST_CASE("membw: small arrays rotate when cold, every set verified, in every timing method",
          "[timing][gpu]") {
  std::vector<Params> points;
  for (const char* timing : {"device", "host", "graph"}) {
    points.push_back(Params{{"impl", "copy"}, {"bytes", std::int64_t{4} << 20}, {"timing", timing},
                            {"cache", "cold"}});
  }
  points.push_back(Params{{"impl", "triad"}, {"bytes", (std::int64_t{4} << 20) + 12},
                          {"timing", "device"}, {"cache", "cold"}});
  const auto results = mgbench::test::run_workload("membw", {0}, points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    require_exact(r);
    const Json& rot = rotation_of(r);
    INFO(rot.dump());
    CHECK(rot["sets"].get<std::uint64_t>() > 1);
    CHECK(rot["exceeds_2x_l2"] == true);
    CHECK(r.verification["checked"].get<std::uint64_t>() ==
          (static_cast<std::uint64_t>(r.params.integer("bytes")) / 4) *
              rot["sets"].get<std::uint64_t>());
  }
}

TEST_CASE("GEMM inputs smaller than L2 rotate when cold and the result still verifies",
          "[timing][gpu]") {
  std::vector<Params> points;
  for (const char* cache : {"cold", "hot"}) {
    for (const char* timing : {"device", "graph"}) {
      points.push_back(Params{{"shape", "square"}, {"m", 1024}, {"n", 1024}, {"k", 1024},
                              {"dtype", "fp32"}, {"impl", "cublas"}, {"timing", timing},
                              {"cache", cache}});
    }
  }
  const auto results = mgbench::test::run_workload("gemm", {0}, points);
  REQUIRE(results.size() == points.size());
  for (const auto& r : results) {
    INFO(r.params.dump() << ": " << r.message);
    REQUIRE(r.status == mgbench::Status::ok);
    const auto sets = rotation_of(r)["sets"].get<std::uint64_t>();
    CHECK(r.measured.cache == mgbench::cache_from_string(r.params.text("cache")));
    if (r.measured.cache == mgbench::CacheMode::cold) {
      CHECK(sets > 1);
    } else {
      CHECK(sets == 1);
    }
    CHECK(r.metrics["tflops_per_gpu"].get<double>() > 0);
  }
}
