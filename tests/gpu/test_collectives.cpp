// The NCCL collectives on one GPU (all-gather, reduce-scatter, all-to-all, broadcast, reduce,
// send/recv): the registered workloads with one rank, every dtype, odd sizes, in and out of
// place, each point ok with 0 wrong or waived with its reason; the algo / proto axes (the
// group's communicators created again where NCCL's variables change, recorded in the point);
// the collectives' verification kernels themselves; and the group's communicator's mode.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "collectives/collective_math.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/kernels/collective_check.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

namespace {

using mgbench::Json;
using mgbench::Params;
using mgbench::kernels::DType;
using mgbench::kernels::ExpectedPattern;
using mgbench::kernels::ValueRange;

const std::vector<std::string> kCollectives{"allgather", "reducescatter", "alltoall",
                                            "broadcast", "reduce",        "sendrecv"};
// Odd sizes in bytes: a single element, odd element counts, one past a power of two.
const std::vector<std::uint64_t> kOddBytes{4, 12, 28, 4092, 16388, 262148, 4194308};

std::vector<Params> points_of(const std::string& workload, int gpus,
                              const mgbench::AxisValues& extra = {}) {
  return mgbench::test::collective_points(workload, gpus, kOddBytes, extra);
}

// Every point exact; a 1-GPU in-place point waived (NCCL moves nothing) with its reason.
void require_exact_or_waived(const std::vector<mgbench::PointResult>& results,
                             std::size_t expected) {
  REQUIRE(results.size() == expected);
  for (const auto& r : results) {
    INFO(r.workload << " " << r.params.dump() << " -> " << mgbench::to_string(r.status) << ": "
                    << r.message);
    if (r.gpus == 1 && r.params.contains("inplace") && r.params.boolean("inplace")) {
      CHECK(r.status == mgbench::Status::waived);
      CHECK(r.message.find("moves nothing") != std::string::npos);
      continue;
    }
    REQUIRE(r.status == mgbench::Status::ok);
    CHECK(r.verification.at("wrong").get<std::uint64_t>() == 0);
    CHECK(r.verification.at("checked").get<std::uint64_t>() > 0);
    CHECK(r.metrics.at("algbw_GBps").get<double>() > 0);
    CHECK_FALSE(r.metrics.contains("busbw_GBps"));  // one GPU: no bus
    CHECK(r.metrics.at("count").get<std::uint64_t>() ==
          static_cast<std::uint64_t>(r.params.integer("bytes")) /
              (r.params.text("dtype") == "fp32" || r.params.text("dtype") == "int32" ? 4 : 2));
  }
}

std::uint64_t count_wrong(const void* data, std::size_t count, DType dtype,
                          const ExpectedPattern& expected) {
  void* raw = nullptr;
  REQUIRE(cudaMalloc(&raw, sizeof(unsigned long long)) == cudaSuccess);
  auto* counter = static_cast<unsigned long long*>(raw);
  REQUIRE(cudaMemset(counter, 0, sizeof *counter) == cudaSuccess);
  REQUIRE(mgbench::kernels::collective_count_wrong(data, count, dtype, expected, 9, counter,
                                                   nullptr) == cudaSuccess);
  unsigned long long host = 0;
  REQUIRE(cudaMemcpy(&host, counter, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess);
  (void)cudaFree(counter);
  return host;
}

}  // namespace

TEST_CASE("every NCCL collective on one GPU is exact for every dtype and odd sizes, in place "
          "waived",
          "[collective][gpu]") {
  for (const auto& name : kCollectives) {
    const auto points = points_of(name, 1);
    INFO(name << ": " << points.size() << " points");
    require_exact_or_waived(mgbench::test::run_workload(name, {0}, points,
                                                        mgbench::test::allreduce_settings()),
                            points.size());
  }
}

TEST_CASE("every NCCL collective on one GPU verifies every buffer set of a cold rotation",
          "[collective][gpu]") {
  for (const auto& name : kCollectives) {
    auto points = points_of(name, 1, {{"cache", {"cold"}}, {"dtype", {"bf16"}}});
    // The largest odd size only: its sets rotate through more than twice the L2 cache.
    points.erase(std::remove_if(points.begin(), points.end(),
                                [](const Params& p) { return p.at("bytes") != 4194308; }),
                 points.end());
    INFO(name);
    const auto results = mgbench::test::run_workload(name, {0}, points,
                                                     mgbench::test::allreduce_settings());
    require_exact_or_waived(results, points.size());
    for (const auto& r : results) {
      if (r.status != mgbench::Status::ok) continue;
      const Json& rotation = r.extra.at("ranks").at(0).at("details").at("rotation");
      CHECK(rotation.at("sets").get<std::uint64_t>() > 1);
    }
  }
}

TEST_CASE("algo and proto points run on communicators created with NCCL's variables, recorded",
          "[collective][gpu]") {
  // default, then ring / simple, then default again: three stretches of one group.
  std::vector<Params> points = points_of("allgather", 1, {{"algo", {"default"}}});
  points.resize(1);
  Params forced = points[0];
  forced.set("algo", "ring");
  forced.set("proto", "simple");
  points.push_back(forced);
  points.push_back(points[0]);
  ::unsetenv("NCCL_ALGO");
  const auto results = mgbench::test::run_workload("allgather", {0}, points,
                                                   mgbench::test::allreduce_settings());
  REQUIRE(results.size() == 3);
  for (const auto& r : results) {
    INFO(r.params.dump() << ": " << r.message);
    CHECK(r.status == mgbench::Status::ok);
  }
  CHECK_FALSE(results[0].extra.contains("nccl_env"));
  REQUIRE(results[1].extra.contains("nccl_env"));
  CHECK(results[1].extra["nccl_env"] == Json{{"NCCL_ALGO", "ring"}, {"NCCL_PROTO", "simple"}});
  CHECK_FALSE(results[2].extra.contains("nccl_env"));
  CHECK(std::getenv("NCCL_ALGO") == nullptr);  // the process's own environment is back
}

TEST_CASE("broadcast and reduce on one GPU take root 0 only, root=all gives one point",
          "[collective][gpu]") {
  for (const char* name : {"broadcast", "reduce"}) {
    const auto all = points_of(name, 1, {{"root", {"all"}}});
    CHECK(all.size() == points_of(name, 1).size());
    CHECK(points_of(name, 1, {{"root", {"1"}}}).empty());
  }
}

TEST_CASE("collective verifier counts elements from the wrong rank, offset or sum",
          "[collective][gpu]") {
  const std::size_t count = 4096;
  void* data = nullptr;
  REQUIRE(cudaMalloc(&data, count * 4) == cudaSuccess);
  // Rank 1's data moved: right where it came from, wrong from rank 0 or from another offset.
  REQUIRE(mgbench::kernels::collective_fill(data, count, DType::fp32,
                                            {ValueRange::wide, 1, 0}, 9, nullptr) == cudaSuccess);
  CHECK(count_wrong(data, count, DType::fp32, ExpectedPattern::copy_of(2, count, 1, 0)) == 0);
  CHECK(count_wrong(data, count, DType::fp32, ExpectedPattern::copy_of(2, count, 0, 0)) > 4000);
  CHECK(count_wrong(data, count, DType::fp32, ExpectedPattern::copy_of(2, count, 1, 1)) > 4000);
  // Chunks of 2048 from ranks 0 and 1, each from index 0: neither holds rank 1's 0..4095.
  CHECK(count_wrong(data, count, DType::fp32, ExpectedPattern::copy_of(2, 2048, 0, 0)) > 4000);
  // A sum over one rank is that rank's narrow input; poison is never an expected value.
  REQUIRE(mgbench::kernels::collective_fill(data, count, DType::bf16,
                                            {ValueRange::narrow, 0, 7}, 9, nullptr) == cudaSuccess);
  CHECK(count_wrong(data, count, DType::bf16, ExpectedPattern::sum_of(1, 7)) == 0);
  CHECK(count_wrong(data, count, DType::bf16, ExpectedPattern::sum_of(1, 0)) > 2000);
  REQUIRE(mgbench::kernels::fill_poison(data, count, DType::int32, nullptr) == cudaSuccess);
  CHECK(count_wrong(data, count, DType::int32, ExpectedPattern::copy_of(1, count, 0, 0)) == count);
  (void)cudaFree(data);
}

TEST_CASE("the group's NCCL communicator is blocking: grouped send/recv calls return "
          "ncclSuccess, not ncclInProgress, and move the data",
          "[collective][nccl][gpu]") {
  // A non-blocking communicator answers every grouped call with ncclInProgress after starting a
  // thread (and, with two ranks or more, every collective): a cost that nccl-tests and
  // frameworks do not pay, which the timed loop would count.
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  REQUIRE(std::getenv("NCCL_COMM_BLOCKING") == nullptr);
  mgbench::bench::NcclComms comms({0}, 60.0);
  constexpr std::size_t kCount = 1027;
  float* send = nullptr;
  float* recv = nullptr;
  REQUIRE(cudaMalloc(&send, kCount * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMalloc(&recv, kCount * sizeof(float)) == cudaSuccess);
  const std::vector<float> values(kCount, 3.5f);
  REQUIRE(cudaMemcpy(send, values.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  using mgbench::bench::collective::Kind;
  for (const auto kind : {Kind::sendrecv, Kind::alltoall}) {
    REQUIRE(cudaMemset(recv, 0, kCount * sizeof(float)) == cudaSuccess);
    const auto call = mgbench::bench::collective_call({kind, send, recv, kCount, ncclFloat32, 0,
                                                       stream});
    ncclResult_t returned = ncclInternalError;
    comms.call(
        0, [&](ncclComm_t c) { return returned = call(c); },
        mgbench::bench::collective_call_name(kind));
    CHECK(returned == ncclSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    std::vector<float> got(kCount, 0.0f);
    REQUIRE(cudaMemcpy(got.data(), recv, kCount * sizeof(float), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    CHECK(got.front() == 3.5f);
    CHECK(got.back() == 3.5f);
  }
  (void)cudaStreamDestroy(stream);
  (void)cudaFree(send);
  (void)cudaFree(recv);
}
