// All-reduce on one GPU: the registered workload with one rank (NCCL and the own kernels,
// every dtype, odd sizes), the own kernels with several simulated ranks on the same GPU
// (each rank a stream of its own), the barrier's give-up path, and the verifier itself.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catch_compat.hpp"
#include "collectives/allreduce_math.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/model/workload.hpp"
#include "workload_runner.hpp"

namespace {

// mgbench never uses NVLink SHARP; set before any NCCL call (main() does it in the binary).
[[maybe_unused]] const int kNvlsOff = ::setenv("NCCL_NVLS_ENABLE", "0", 0);

using mgbench::Json;
using mgbench::Params;
using mgbench::kernels::AllreduceAlgo;
using mgbench::kernels::DType;
using mgbench::test::allreduce_points;
using mgbench::test::run_allreduce;

// Every point exact; a 1-GPU in-place point is waived (nothing moves) instead.
void require_exact(const std::vector<mgbench::PointResult>& results, std::size_t expected) {
  REQUIRE(results.size() == expected);
  for (const auto& r : results) {
    INFO(r.params.dump() << " -> " << mgbench::to_string(r.status) << ": " << r.message);
    if (r.gpus == 1 && r.params.boolean("inplace")) {
      CHECK(r.status == mgbench::Status::waived);
      continue;
    }
    CHECK(r.status == mgbench::Status::ok);
    REQUIRE(r.verification.contains("wrong"));
    CHECK(r.verification["wrong"].get<std::uint64_t>() == 0);
  }
}

const std::vector<std::string> kAllDtypes{"fp32", "bf16", "fp16", "int32"};
const std::vector<std::uint64_t> kOddCounts{1, 3, 7, 1023, 4097, 65537};

// RAII device memory for the kernel-level tests.
class Buffer {
 public:
  explicit Buffer(std::size_t bytes) { REQUIRE(cudaMalloc(&ptr_, bytes) == cudaSuccess); }
  ~Buffer() { (void)cudaFree(ptr_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  template <typename T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

class Stream {
 public:
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { (void)cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// n ranks of the own all-reduce, all on device 0 (each with its own staging and sync).
struct SimulatedGroup {
  SimulatedGroup(int n, std::size_t half_bytes, std::uint64_t timeout_ns) : n(n) {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(mgbench::kernels::allreduce_preload() == cudaSuccess);
    for (int r = 0; r < n; ++r) {
      staging.push_back(std::make_unique<Buffer>(2 * half_bytes));
      sync.push_back(std::make_unique<Buffer>(mgbench::kernels::allreduce_sync_bytes()));
      REQUIRE(cudaMemset(sync.back()->get(), 0, mgbench::kernels::allreduce_sync_bytes()) ==
              cudaSuccess);
      streams.push_back(std::make_unique<Stream>());
    }
    for (int r = 0; r < n; ++r) {
      mgbench::kernels::AllreducePeers p;
      for (int q = 0; q < n; ++q) {
        p.staging[q] = staging[q]->get();
        p.sync[q] = sync[q]->get<std::uint32_t>();
      }
      p.half_bytes = half_bytes;
      p.rank = r;
      p.nranks = n;
      p.max_blocks = 8;  // every rank's blocks fit on the GPU at once
      p.timeout_ns = timeout_ns;
      peers.push_back(p);
    }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  }
  std::uint32_t status(int r) const {
    std::uint32_t s = 99;
    REQUIRE(mgbench::kernels::allreduce_read_status(sync[r]->get<std::uint32_t>(), &s) ==
            cudaSuccess);
    return s;
  }
  int n;
  std::vector<std::unique_ptr<Buffer>> staging, sync;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<mgbench::kernels::AllreducePeers> peers;
};

std::uint64_t count_wrong(const void* data, std::size_t count, DType dtype, int nranks,
                          std::uint32_t seed) {
  Buffer counter(sizeof(unsigned long long));
  REQUIRE(cudaMemset(counter.get(), 0, sizeof(unsigned long long)) == cudaSuccess);
  REQUIRE(mgbench::kernels::allreduce_count_wrong(data, count, dtype, nranks, seed,
                                                  counter.get<unsigned long long>(),
                                                  nullptr) == cudaSuccess);
  unsigned long long host = 0;
  REQUIRE(cudaMemcpy(&host, counter.get(), sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess);
  return host;
}

}  // namespace

TEST_CASE("one-rank NCCL all-reduce is exact for every dtype and odd sizes", "[allreduce][gpu]") {
  const auto params = allreduce_points(kAllDtypes, kOddCounts, "nccl", {});
  require_exact(run_allreduce({0}, params), params.size());
}

TEST_CASE("one-rank own all-reduce is exact for every dtype, odd sizes and both algorithms",
          "[allreduce][gpu]") {
  const auto params =
      allreduce_points(kAllDtypes, kOddCounts, "mgbench", {"auto", "one_shot", "two_shot"});
  require_exact(run_allreduce({0}, params), params.size());
}

TEST_CASE("one-rank all-reduce reports algbw, no busbw and the algorithm used",
          "[allreduce][gpu]") {
  auto params = allreduce_points({"fp32"}, {std::uint64_t{1} << 20}, "nccl", {});
  const auto own = allreduce_points({"fp32"}, {std::uint64_t{1} << 20}, "mgbench", {"two_shot"});
  params.insert(params.end(), own.begin(), own.end());
  const auto results = run_allreduce({0}, params);
  require_exact(results, params.size());
  for (const auto& r : results) {
    INFO(r.params.dump());
    if (r.status != mgbench::Status::ok) continue;  // in place: waived
    CHECK(r.metrics["algbw_GBps"].get<double>() > 0);
    CHECK_FALSE(r.metrics.contains("busbw_GBps"));
    CHECK(r.metrics["time_us"].get<double>() > 0);
    if (r.params.text("impl") == "mgbench") {
      CHECK(r.extra["ranks"][0]["details"]["algo"] == "two_shot");
    }
  }
}

TEST_CASE("own all-reduce kernels are exact with several simulated ranks on one GPU",
          "[allreduce][gpu]") {
  const std::uint32_t seed = 1234;
  const std::vector<std::size_t> counts{1, 3, 9, 1023, 4096 * 4 + 5, (std::size_t{1} << 20) + 3};
  const std::size_t max_bytes = 4 * ((std::size_t{1} << 20) + 3);
  const std::size_t half = (max_bytes + 255) / 256 * 256;
  for (int n : {2, 3, 4}) {
    SimulatedGroup group(n, half, 5'000'000'000ULL);
    for (DType dtype : {DType::fp32, DType::bf16, DType::fp16, DType::int32}) {
      const std::size_t size = mgbench::kernels::dtype_size(dtype);
      for (AllreduceAlgo algo : {AllreduceAlgo::one_shot, AllreduceAlgo::two_shot}) {
        for (std::size_t count : counts) {
          for (int layout = 0; layout < 3; ++layout) {  // out-of-place, in-place, misaligned
            std::vector<std::unique_ptr<Buffer>> in, out;
            std::vector<void*> in_ptr, out_ptr;
            for (int r = 0; r < n; ++r) {
              in.push_back(std::make_unique<Buffer>(count * size + 64));
              out.push_back(std::make_unique<Buffer>(count * size + 64));
              const std::size_t shift = layout == 2 ? size : 0;
              in_ptr.push_back(in.back()->get<char>() + shift);
              out_ptr.push_back(layout == 1 ? in_ptr.back() : out.back()->get<char>() + shift);
              REQUIRE(mgbench::kernels::allreduce_fill_input(in_ptr[r], count, dtype, r, seed,
                                                             nullptr) == cudaSuccess);
              if (layout != 1) {
                REQUIRE(mgbench::kernels::fill_poison(out_ptr[r], count, dtype, nullptr) ==
                        cudaSuccess);
              }
            }
            REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
            for (int r = 0; r < n; ++r) {
              mgbench::kernels::AllreduceOp op;
              op.in = in_ptr[r];
              op.out = out_ptr[r];
              op.count = count;
              op.dtype = dtype;
              op.algo = algo;
              REQUIRE(mgbench::kernels::allreduce_launch(group.peers[r], op,
                                                         group.streams[r]->get()) == cudaSuccess);
            }
            REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
            for (int r = 0; r < n; ++r) {
              INFO("ranks " << n << " dtype " << mgbench::kernels::to_string(dtype) << " algo "
                            << mgbench::kernels::to_string(algo) << " count " << count
                            << " layout " << layout << " rank " << r);
              REQUIRE(group.status(r) == 0);
              CHECK(count_wrong(out_ptr[r], count, dtype, n, seed) == 0);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("own all-reduce barrier gives up when a peer never arrives", "[allreduce][gpu]") {
  SimulatedGroup group(2, 4096, 200'000'000ULL);  // 0.2 s
  Buffer in(1024 * 4), out(1024 * 4);
  mgbench::kernels::AllreduceOp op;
  op.in = in.get();
  op.out = out.get();
  op.count = 1024;
  op.dtype = DType::fp32;
  const auto t0 = std::chrono::steady_clock::now();
  // Only rank 0 launches: rank 1 never reaches the barrier.
  REQUIRE(mgbench::kernels::allreduce_launch(group.peers[0], op, group.streams[0]->get()) ==
          cudaSuccess);
  REQUIRE(cudaStreamSynchronize(group.streams[0]->get()) == cudaSuccess);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(waited < 20.0);
  CHECK(group.status(0) == 1);
  // A poisoned rank returns at once from every later op.
  REQUIRE(mgbench::kernels::allreduce_launch(group.peers[0], op, group.streams[0]->get()) ==
          cudaSuccess);
  REQUIRE(cudaStreamSynchronize(group.streams[0]->get()) == cudaSuccess);
  CHECK(group.status(0) == 1);
  CHECK(group.status(1) == 0);
}

TEST_CASE("all-reduce verifier counts the elements that differ from the exact sum",
          "[allreduce][gpu]") {
  const std::size_t count = 10000;
  Buffer data(count * 4);
  REQUIRE(mgbench::kernels::allreduce_fill_input(data.get(), count, DType::fp32, 0, 5, nullptr) ==
          cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  // One rank: the input is the sum.
  CHECK(count_wrong(data.get(), count, DType::fp32, 1, 5) == 0);
  // Two ranks: rank 1's value (never zero) is missing from every element.
  CHECK(count_wrong(data.get(), count, DType::fp32, 2, 5) == count);
  REQUIRE(mgbench::kernels::fill_poison(data.get(), count, DType::int32, nullptr) == cudaSuccess);
  CHECK(count_wrong(data.get(), count, DType::int32, 1, 5) == count);
}
