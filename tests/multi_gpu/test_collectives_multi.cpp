// The NCCL collectives across several GPUs (the binary skips itself below 2): all-gather,
// reduce-scatter, all-to-all, broadcast, reduce and send/recv on every visible GPU and on a
// pair, every dtype, odd sizes (and sizes that do not divide by the GPU count), in and out of
// place, every root of broadcast and reduce (root=all), and NCCL's ring forced through the algo
// axis: every point ok with 0 wrong elements on every rank, busbw = algbw x nccl-tests' factor.
#include <cstdint>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "collectives/collective_math.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

namespace {

using mgbench::Json;
using mgbench::Params;
namespace co = mgbench::bench::collective;

const std::vector<std::string> kCollectives{"allgather", "reducescatter", "alltoall",
                                            "broadcast", "reduce",        "sendrecv"};
// Odd sizes in bytes; 3 x 4 MiB + 8 does not divide by 2, 4 or 8 ranks' elements.
const std::vector<std::uint64_t> kBytes{4, 28, 4092, 262148, 12582920, 64ull << 20};

// Every root of broadcast and reduce (root=all) unless `extra` says otherwise.
std::vector<Params> points_of(const std::string& workload, int gpus, mgbench::AxisValues extra) {
  if (extra.count("root") == 0) extra["root"] = {"all"};
  return mgbench::test::collective_points(workload, gpus, kBytes, extra);
}

void require_exact(const std::string& workload, const std::vector<mgbench::PointResult>& results,
                   std::size_t expected) {
  REQUIRE(results.size() == expected);
  const co::Kind kind = co::kind_from_string(workload);
  for (const auto& r : results) {
    INFO(workload << " " << r.params.dump() << " on " << r.gpus << " GPUs -> "
                  << mgbench::to_string(r.status) << ": " << r.message);
    REQUIRE(r.status == mgbench::Status::ok);
    CHECK(r.verification.at("wrong").get<std::uint64_t>() == 0);
    CHECK(r.verification.at("checked").get<std::uint64_t>() > 0);
    REQUIRE(r.verification.at("per_rank").size() == static_cast<std::size_t>(r.gpus));
    for (const auto& rank : r.verification.at("per_rank")) {
      CHECK(rank.at("verification").at("wrong_on_rank") == 0);
    }
    const double algbw = r.metrics.at("algbw_GBps").get<double>();
    CHECK(algbw > 0);
    CHECK(r.metrics.at("busbw_GBps").get<double>() ==
          Approx(algbw * co::busbw_factor(kind, r.gpus)));
  }
}

void run_everywhere(const std::string& workload, mgbench::AxisValues extra = {}) {
  const int n = mgbench::test::cuda_device_count();
  for (int gpus : {2, n}) {
    const auto points = points_of(workload, gpus, extra);
    INFO(workload << " on " << gpus << " GPUs: " << points.size() << " points");
    REQUIRE_FALSE(points.empty());
    require_exact(workload,
                  mgbench::test::run_workload(workload, mgbench::test::first_devices(gpus), points,
                                              mgbench::test::allreduce_settings()),
                  points.size());
    if (n == 2) break;
  }
}

}  // namespace

TEST_CASE("all-gather is exact on every rank: every dtype, odd sizes, in and out of place",
          "[collective][multi_gpu]") {
  run_everywhere("allgather");
}

TEST_CASE("reduce-scatter is exact on every rank: every dtype, odd sizes, in and out of place",
          "[collective][multi_gpu]") {
  run_everywhere("reducescatter");
}

TEST_CASE("all-to-all is exact on every rank: every dtype, odd sizes", "[collective][multi_gpu]") {
  run_everywhere("alltoall");
}

TEST_CASE("broadcast is exact on every rank from every root", "[collective][multi_gpu]") {
  run_everywhere("broadcast");
}

TEST_CASE("reduce is exact on every root, in and out of place", "[collective][multi_gpu]") {
  run_everywhere("reduce");
}

TEST_CASE("send/recv around the ring is exact on every rank", "[collective][multi_gpu]") {
  run_everywhere("sendrecv");
}

TEST_CASE("NCCL's ring and simple protocol forced through algo and proto stay exact",
          "[collective][multi_gpu]") {
  for (const char* workload : {"allgather", "reducescatter", "broadcast", "reduce"}) {
    run_everywhere(workload, {{"algo", {"default", "ring"}},
                              {"proto", {"simple"}},
                              {"dtype", {"bf16"}},
                              {"inplace", {false}}});
  }
}
