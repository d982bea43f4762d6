// train_step on several GPUs (the binary skips itself below 2): every replica holds
// bitwise-identical weights after the measured steps and the all-reduced tiny-model gradients
// match the FP64 reference summed over the ranks, for NCCL and the own all-reduce, with and
// without overlapping the all-reduce with the backward pass.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"
#include "support.hpp"
#include "workload_runner.hpp"

namespace {

// mgbench never uses NVLink SHARP / multicast; set before any NCCL call.
[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Json;
using mgbench::Params;
using mgbench::Status;

using mgbench::test::all_pairs_have_peer_access;
using mgbench::test::cuda_device_count;
using mgbench::test::first_devices;

// 4 layers of 512 (one bucket per layer at bucket_mb 1), batch 128 per GPU, accum 2.
Params train_point(const std::string& impl, bool overlap) {
  return Params{{"layers", 4},      {"hidden", 512}, {"batch", 128},
                {"dtype", "bf16"},  {"accum", 2},    {"overlap", overlap},
                {"h2d", true},      {"impl", impl},  {"bucket_mb", 1}};
}

// The registered "train_step" workload with the quick settings.
std::vector<mgbench::PointResult> run_group(const std::vector<int>& devices,
                                            const std::vector<Params>& params) {
  return mgbench::test::run_workload("train_step", devices, params,
                                     mgbench::test::fast_settings());
}

// Every rank's verification: the same weight hash, gradients within tolerance.
void require_replicas_agree(const mgbench::PointResult& r, std::size_t nranks) {
  CAPTURE(r.params.dump(), r.gpus, mgbench::to_string(r.status), r.message,
          r.verification.dump());
  REQUIRE(r.status == Status::ok);
  CHECK(r.verification.value("ok", false));
  REQUIRE(r.extra.contains("ranks"));
  const Json& ranks = r.extra["ranks"];
  REQUIRE(ranks.size() == nranks);
  const std::string hash = ranks[0]["verification"]["weights_hash"].get<std::string>();
  for (const auto& rank : ranks) {
    const Json& v = rank["verification"];
    CHECK(v["replicas_agree"].get<bool>());
    CHECK(v["weights_hash"].get<std::string>() == hash);
    CHECK(v["nonfinite_weights"].get<std::uint64_t>() == 0);
    CHECK(v["grad_rel_l2"].get<double>() <= v["grad_tolerance"].get<double>());
  }
  CHECK(r.metrics["samples_per_s"].get<double>() > 0);
}

}  // namespace

TEST_CASE("train_step nccl with overlap: replicas agree on 2 GPUs", "[multi_gpu][train]") {
  const auto results = run_group(first_devices(2), {train_point("nccl", true)});
  REQUIRE(results.size() == 1);
  require_replicas_agree(results[0], 2);
}

TEST_CASE("train_step on 2 GPUs: merged buckets match FP64, a bucket reduced twice is caught",
          "[multi_gpu][train]") {
  // bucket_mb 25 merges the verification model's layers into buckets.
  Params p = train_point("nccl", true);
  p.set("bucket_mb", 25);
  const auto good = run_group(first_devices(2), {p});
  REQUIRE(good.size() == 1);
  require_replicas_agree(good[0], 2);
  // The first bucket all-reduced twice: every rank holds the same wrong sum (2x), so the
  // replicas still agree and only the FP64 reference can tell.
  ::setenv("MGBENCH_ENABLE_TEST_WORKLOADS", "1", 1);
  ::setenv("MGBENCH_TEST_TRAIN_DOUBLE_REDUCE", "1", 1);
  const auto bad = run_group(first_devices(2), {p});
  ::unsetenv("MGBENCH_TEST_TRAIN_DOUBLE_REDUCE");
  ::unsetenv("MGBENCH_ENABLE_TEST_WORKLOADS");
  REQUIRE(bad.size() == 1);
  CAPTURE(bad[0].message, bad[0].verification.dump());
  CHECK(bad[0].status == Status::wrong);
  CHECK(bad[0].verification.value("grad_rel_l2", 0.0) >
        bad[0].verification.value("grad_tolerance", 1.0));
}

TEST_CASE("train_step nccl without overlap: replicas agree on 2 GPUs", "[multi_gpu][train]") {
  const auto results = run_group(first_devices(2), {train_point("nccl", false)});
  REQUIRE(results.size() == 1);
  require_replicas_agree(results[0], 2);
}

TEST_CASE("train_step own all-reduce with overlap: replicas agree on 2 GPUs",
          "[multi_gpu][train]") {
  const auto devices = first_devices(2);
  const auto results = run_group(devices, {train_point("mgbench", true)});
  REQUIRE(results.size() == 1);
  if (!all_pairs_have_peer_access(devices)) {
    REQUIRE(results[0].status == Status::waived);  // checked before the skip hides the rest
    mgbench::test::skip_test("GPUs 0 and 1 have no peer access: replicas cannot be compared");
  }
  require_replicas_agree(results[0], 2);
}

TEST_CASE("train_step own all-reduce without overlap: replicas agree on 2 GPUs",
          "[multi_gpu][train]") {
  const auto devices = first_devices(2);
  const auto results = run_group(devices, {train_point("mgbench", false)});
  REQUIRE(results.size() == 1);
  if (!all_pairs_have_peer_access(devices)) {
    REQUIRE(results[0].status == Status::waived);  // checked before the skip hides the rest
    mgbench::test::skip_test("GPUs 0 and 1 have no peer access: replicas cannot be compared");
  }
  require_replicas_agree(results[0], 2);
}

TEST_CASE("train_step nccl on every visible GPU in fp32 and fp16: replicas agree",
          "[multi_gpu][train]") {
  const int n = cuda_device_count();
  Params fp32 = train_point("nccl", true);
  fp32.set("dtype", "fp32");
  Params fp16 = train_point("nccl", true);
  fp16.set("dtype", "fp16");
  const auto results = run_group(first_devices(n), {fp32, fp16});
  REQUIRE(results.size() == 2);
  require_replicas_agree(results[0], static_cast<std::size_t>(n));
  require_replicas_agree(results[1], static_cast<std::size_t>(n));
}

TEST_CASE("train_step on 2 GPUs: an impossible configuration is oom, the next point ok",
          "[multi_gpu][train]") {
  Params huge = train_point("nccl", true);
  huge.set("layers", 64);
  huge.set("hidden", 65536);
  huge.set("batch", 65536);
  const auto results = run_group(first_devices(2), {huge, train_point("nccl", true)});
  REQUIRE(results.size() == 2);
  CAPTURE(results[0].message);
  CHECK(results[0].status == Status::oom);
  require_replicas_agree(results[1], 2);
}

TEST_CASE("train_step on 2 GPUs reports exposed communication and overlap within bounds",
          "[multi_gpu][train]") {
  const auto results = run_group(first_devices(2), {train_point("nccl", true)});
  REQUIRE(results.size() == 1);
  require_replicas_agree(results[0], 2);
  const auto& r = results[0];
  const Json b = r.metrics.contains("compute_only_s")
                     ? r.metrics
                     : r.extra["ranks"][0]["details"]["metrics"];
  CAPTURE(b.dump());
  CHECK(b["comm_s"].get<double>() > 0);
  CHECK(b["exposed_comm_s"].get<double>() >= 0);
  CHECK(b["exposed_comm_s"].get<double>() <= b["breakdown_step_s"].get<double>());
  CHECK(b["overlap_ratio"].get<double>() >= 0);
  CHECK(b["overlap_ratio"].get<double>() <= 1);
}

namespace {

// Devices 1..3 (3 ranks, an odd count, without GPU 0) when 4 GPUs are visible, else 1..n-1.
std::vector<int> odd_devices_without_zero() {
  std::vector<int> d;
  for (int i = 1; i < cuda_device_count() && d.size() < 3; ++i) d.push_back(i);
  return d;
}

}  // namespace

TEST_CASE("train_step on devices that skip GPU 0, odd rank count: replicas agree",
          "[multi_gpu][train]") {
  const auto devices = odd_devices_without_zero();
  if (devices.size() < 2) mgbench::test::skip_test("needs 3 GPUs: GPU 0 is left out");
  const bool peers = all_pairs_have_peer_access(devices);
  const auto results =
      run_group(devices, {train_point("nccl", true), train_point("mgbench", true)});
  REQUIRE(results.size() == 2);
  require_replicas_agree(results[0], devices.size());
  if (peers) {
    require_replicas_agree(results[1], devices.size());
  } else {
    CHECK(results[1].status == Status::waived);
  }
}

TEST_CASE("train_step: only one rank runs out of memory, the point is oom, the next ok",
          "[multi_gpu][train]") {
  const auto devices = first_devices(std::min(cuda_device_count(), 3));
  const int victim = devices.back();
  // Leave the last GPU ~1 GiB, far less than the first point needs; the others stay empty.
  REQUIRE(cudaSetDevice(victim) == cudaSuccess);
  std::size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  void* filler = nullptr;
  const std::size_t keep = std::size_t{1} << 30;
  REQUIRE(free_b > keep);
  REQUIRE(cudaMalloc(&filler, free_b - keep) == cudaSuccess);
  Params big = train_point("nccl", true);
  big.set("layers", 8);
  big.set("hidden", 8192);
  big.set("batch", 8192);  // several GiB per rank: fits an empty GPU, not the filled one
  const auto results = run_group(devices, {big, train_point("nccl", true)});
  (void)cudaSetDevice(victim);
  (void)cudaFree(filler);
  REQUIRE(results.size() == 2);
  CAPTURE(results[0].message);
  CHECK(results[0].status == Status::oom);
  CHECK(results[0].message.find("rank " + std::to_string(devices.size() - 1)) !=
        std::string::npos);
  require_replicas_agree(results[1], devices.size());
}
