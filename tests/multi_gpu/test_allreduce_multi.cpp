// All-reduce across several GPUs (the binary skips itself below 2): correctness of NCCL and
// the own kernels at many sizes on all visible GPUs and on a pair, and hang safety (the
// NCCL watchdog and the own barrier's give-up when a rank never joins).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "collectives/allreduce_math.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/model/workload.hpp"
#include "support.hpp"
#include "workload_runner.hpp"

namespace {

// mgbench never uses NVLink SHARP / multicast; set before any NCCL call.
[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Json;
using mgbench::Params;
using Clock = std::chrono::steady_clock;

using mgbench::test::all_pairs_have_peer_access;
using mgbench::test::allreduce_points;
using mgbench::test::run_allreduce;
using mgbench::test::cuda_device_count;
using mgbench::test::first_devices;

// Expects every point exact, or (own kernels only) every point waived for lack of P2P.
void require_exact(const std::vector<mgbench::PointResult>& results, std::size_t expected,
                   bool waivable) {
  REQUIRE(results.size() == expected);
  for (const auto& r : results) {
    INFO(r.params.dump() << " on " << r.gpus << " GPUs -> " << mgbench::to_string(r.status)
                         << ": " << r.message);
    if (waivable && r.status == mgbench::Status::waived) {
      CHECK_FALSE(all_pairs_have_peer_access(r.devices));
      continue;
    }
    CHECK(r.status == mgbench::Status::ok);
    REQUIRE(r.verification.contains("wrong"));
    CHECK(r.verification["wrong"].get<std::uint64_t>() == 0);
    CHECK(r.metrics["busbw_GBps"].get<double>() > 0);
  }
}

const std::vector<std::string> kAllDtypes{"fp32", "bf16", "fp16", "int32"};
// Odd counts, one-shot and two-shot ranges, slices smaller than a pack, 64 MiB of fp32.
const std::vector<std::uint64_t> kCounts{1,      2,      3,      7,       31,     1023,
                                         4099,   65537,  262147, 1048583, 4194301,
                                         16777216};

// Catch2 assertions are not thread-safe: code running on rank threads throws instead.
void cuda_ok(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
  }
}

// Per-rank CUDA resources for the direct NCCL tests.
struct RankBuffers {
  explicit RankBuffers(int device, std::size_t count) : device(device) {
    REQUIRE(cudaSetDevice(device) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaMalloc(&data, count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemset(data, 0, count * sizeof(float)) == cudaSuccess);
  }
  ~RankBuffers() {
    (void)cudaSetDevice(device);
    (void)cudaFree(data);
    (void)cudaStreamDestroy(stream);
  }
  RankBuffers(const RankBuffers&) = delete;
  RankBuffers& operator=(const RankBuffers&) = delete;
  int device;
  cudaStream_t stream = nullptr;
  void* data = nullptr;
};

// Runs fn(rank) on one thread per rank and waits for all.
void on_ranks(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(n);
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r);
    CHECK(errors[r].empty());
  }
}

void all_reduce(mgbench::bench::NcclComms& comms, RankBuffers& b, int rank, std::size_t count) {
  cuda_ok(cudaSetDevice(b.device), "cudaSetDevice");
  comms.allreduce(rank, b.data, b.data, count, ncclFloat32, b.stream);
}

}  // namespace

TEST_CASE("NCCL all-reduce is exact on all visible GPUs at many sizes", "[allreduce][multi_gpu]") {
  const auto devices = first_devices(cuda_device_count());
  const auto params = allreduce_points(kAllDtypes, kCounts, "nccl", {});
  require_exact(run_allreduce(devices, params), params.size(), false);
}

TEST_CASE("own all-reduce is exact on all visible GPUs at many sizes and both algorithms",
          "[allreduce][multi_gpu]") {
  const auto devices = first_devices(cuda_device_count());
  const auto params =
      allreduce_points(kAllDtypes, kCounts, "mgbench", {"auto", "one_shot", "two_shot"});
  require_exact(run_allreduce(devices, params), params.size(), true);
}

TEST_CASE("both all-reduce implementations are exact on a pair of GPUs",
          "[allreduce][multi_gpu]") {
  auto params = allreduce_points({"fp32", "bf16"}, kCounts, "nccl", {});
  const auto own =
      allreduce_points({"fp32", "bf16"}, kCounts, "mgbench", {"auto", "one_shot", "two_shot"});
  params.insert(params.end(), own.begin(), own.end());
  require_exact(run_allreduce({0, 1}, params), params.size(), true);
}

TEST_CASE("NCCL watchdog aborts a collective that a rank never joins", "[allreduce][multi_gpu]") {
  const std::size_t count = 1 << 20;
  const std::vector<int> devices{0, 1};
  mgbench::bench::NcclComms comms(devices, 120.0);
  std::vector<std::unique_ptr<RankBuffers>> buffers;
  for (int d : devices) buffers.push_back(std::make_unique<RankBuffers>(d, count));
  // Both ranks once, so that the connections exist and the hang is in the kernel.
  on_ranks(2, [&](int r) {
    all_reduce(comms, *buffers[r], r, count);
    cuda_ok(cudaStreamSynchronize(buffers[r]->stream), "cudaStreamSynchronize");
  });
  REQUIRE_FALSE(comms.aborted());

  comms.arm(2.0);
  const auto t0 = Clock::now();
  all_reduce(comms, *buffers[0], 0, count);  // rank 1 never joins
  cudaError_t state = cudaErrorNotReady;
  while (state == cudaErrorNotReady && Clock::now() - t0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    state = cudaStreamQuery(buffers[0]->stream);
  }
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  CHECK(state != cudaErrorNotReady);
  CHECK(waited < 30.0);
  CHECK(waited >= 1.9);
  CHECK(comms.aborted());
  CHECK(comms.abort_reason().find("did not complete within its 2 s deadline") !=
        std::string::npos);
  // Calls after the abort are refused instead of touching freed communicators.
  CHECK_THROWS_AS(all_reduce(comms, *buffers[1], 1, count), mgbench::EnvironmentError);
}

TEST_CASE("armed NCCL watchdog leaves collectives that complete alone",
          "[allreduce][multi_gpu]") {
  const std::size_t count = 1 << 16;
  const std::vector<int> devices{0, 1};
  mgbench::bench::NcclComms comms(devices, 120.0);
  std::vector<std::unique_ptr<RankBuffers>> buffers;
  for (int d : devices) buffers.push_back(std::make_unique<RankBuffers>(d, count));
  comms.arm(5.0);
  on_ranks(2, [&](int r) {
    for (int i = 0; i < 10; ++i) all_reduce(comms, *buffers[r], r, count);
    cuda_ok(cudaStreamSynchronize(buffers[r]->stream), "cudaStreamSynchronize");
  });
  comms.disarm();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(comms.aborted());
}

TEST_CASE("own all-reduce barrier gives up when a peer GPU never joins",
          "[allreduce][multi_gpu]") {
  const std::vector<int> devices{0, 1};
  if (!all_pairs_have_peer_access(devices)) {
    mgbench::test::skip_test("GPUs 0 and 1 have no peer access: nothing to check");
  }
  const std::size_t half = 1 << 16;
  std::vector<void*> staging(2), sync(2);
  for (int r = 0; r < 2; ++r) {
    REQUIRE(cudaSetDevice(devices[r]) == cudaSuccess);
    const cudaError_t e = cudaDeviceEnablePeerAccess(devices[1 - r], 0);
    REQUIRE((e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled));
    (void)cudaGetLastError();
    REQUIRE(mgbench::kernels::allreduce_preload() == cudaSuccess);
    REQUIRE(cudaMalloc(&staging[r], 2 * half) == cudaSuccess);
    REQUIRE(cudaMalloc(&sync[r], mgbench::kernels::allreduce_sync_bytes()) == cudaSuccess);
    REQUIRE(cudaMemset(sync[r], 0, mgbench::kernels::allreduce_sync_bytes()) == cudaSuccess);
  }
  mgbench::kernels::AllreducePeers peers;
  for (int r = 0; r < 2; ++r) {
    peers.staging[r] = staging[r];
    peers.sync[r] = static_cast<std::uint32_t*>(sync[r]);
  }
  peers.half_bytes = half;
  peers.rank = 0;
  peers.nranks = 2;
  peers.max_blocks = 4;
  peers.timeout_ns = 500'000'000ULL;
  REQUIRE(cudaSetDevice(devices[0]) == cudaSuccess);
  void* data = nullptr;
  REQUIRE(cudaMalloc(&data, 4096) == cudaSuccess);
  mgbench::kernels::AllreduceOp op;
  op.in = data;
  op.out = data;
  op.count = 1024;
  op.dtype = mgbench::kernels::DType::fp32;
  const auto t0 = Clock::now();
  REQUIRE(mgbench::kernels::allreduce_launch(peers, op, nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  std::uint32_t status = 0;
  REQUIRE(mgbench::kernels::allreduce_read_status(peers.sync[0], &status) == cudaSuccess);
  CHECK(status == 1);
  CHECK(waited < 20.0);
  (void)cudaFree(data);
  for (int r = 0; r < 2; ++r) {
    (void)cudaSetDevice(devices[r]);
    (void)cudaFree(staging[r]);
    (void)cudaFree(sync[r]);
  }
}
