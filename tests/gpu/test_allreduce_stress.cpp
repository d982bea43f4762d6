// Back-to-back stress of the own all-reduce on simulated ranks of one GPU: each rank is a
// host thread with its own stream that launches ~200 ops without any device sync, with a
// random busy-wait before each op (ranks drift apart by up to tens of microseconds), a fresh
// input seed and a fresh output buffer per op. One-shot and two-shot, odd counts, 2..7
// ranks; every output of every op is checked against the exact sum.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "catch_compat.hpp"
#include "mgbench/kernels/allreduce.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/kernels/gate.hpp"
#include "support.hpp"

namespace {

// Every simulated rank spins in its kernel until the others arrive, so each rank's stream must
// have a hardware queue of its own. CUDA maps streams onto 8 queues by default, round robin
// over every stream the process has created, so after a few groups two ranks of a later group
// share a queue and one waits behind the other's spinning kernel until the device timeout
// (seen on the H200 at 5 ranks). 32 is the most CUDA allows; set before the first CUDA call.
[[maybe_unused]] const int kQueues = ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);

using mgbench::kernels::AllreduceAlgo;
using mgbench::kernels::DType;

constexpr int kOps = 200;
constexpr std::uint32_t kSeedBase = 0x5157;

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

// One simulated rank: its staging, sync region, stream, and kOps inputs and outputs.
struct Rank {
  Rank(std::size_t half_bytes, std::size_t bytes)
      : staging(2 * half_bytes), sync(mgbench::kernels::allreduce_sync_bytes()) {
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaMemset(sync.get(), 0, mgbench::kernels::allreduce_sync_bytes()) == cudaSuccess);
    for (int k = 0; k < kOps; ++k) {
      in.push_back(std::make_unique<Buffer>(bytes));
      out.push_back(std::make_unique<Buffer>(bytes));
    }
  }
  ~Rank() { (void)cudaStreamDestroy(stream); }
  Buffer staging, sync;
  cudaStream_t stream = nullptr;
  std::vector<std::unique_ptr<Buffer>> in, out;
  mgbench::kernels::AllreducePeers peers;
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

// Rank r's thread: fills each op's input with a fresh seed, poisons its output, waits a
// random time on the GPU, then launches; no host sync until the end.
cudaError_t run_rank(Rank& rank, int r, std::size_t count, DType dtype, AllreduceAlgo algo) {
  std::mt19937 random(static_cast<unsigned>(1000 + r));
  std::uniform_int_distribution<int> delay_us(0, 50);
  for (int k = 0; k < kOps; ++k) {
    const std::uint32_t seed = kSeedBase + static_cast<std::uint32_t>(k);
    cudaError_t e = mgbench::kernels::allreduce_fill_input(rank.in[k]->get(), count, dtype, r,
                                                           seed, rank.stream);
    if (e == cudaSuccess) e = mgbench::kernels::fill_poison(rank.out[k]->get(), count, dtype,
                                                            rank.stream);
    if (e == cudaSuccess) {
      e = mgbench::kernels::launch_busy_wait(
          static_cast<std::uint64_t>(delay_us(random)) * 1000, rank.stream);
    }
    mgbench::kernels::AllreduceOp op;
    op.in = rank.in[k]->get();
    op.out = rank.out[k]->get();
    op.count = count;
    op.dtype = dtype;
    op.algo = algo;
    if (e == cudaSuccess) e = mgbench::kernels::allreduce_launch(rank.peers, op, rank.stream);
    if (e != cudaSuccess) return e;
  }
  return cudaStreamSynchronize(rank.stream);
}

void stress(int n, std::size_t count, AllreduceAlgo algo) {
  const DType dtype = DType::fp32;
  const std::size_t bytes = count * mgbench::kernels::dtype_size(dtype) + 64;
  const std::size_t half = (bytes + 255) / 256 * 256;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  REQUIRE(mgbench::kernels::allreduce_preload() == cudaSuccess);
  std::vector<std::unique_ptr<Rank>> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back(std::make_unique<Rank>(half, bytes));
  int sms = 0;
  REQUIRE(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  for (int r = 0; r < n; ++r) {
    auto& p = ranks[r]->peers;
    for (int q = 0; q < n; ++q) {
      p.staging[q] = ranks[q]->staging.get();
      p.sync[q] = ranks[q]->sync.get<std::uint32_t>();
    }
    p.half_bytes = half;
    p.rank = r;
    p.nranks = n;
    p.max_blocks = std::max(1, std::min(8, sms / n));  // every rank's blocks resident at once
    p.timeout_ns = static_cast<std::uint64_t>(20e9 * mgbench::test::gpu_time_scale());
  }
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<cudaError_t> errors(n, cudaSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      (void)cudaSetDevice(0);
      errors[r] = run_rank(*ranks[r], r, count, dtype, algo);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << cudaGetErrorString(errors[r]));
    REQUIRE(errors[r] == cudaSuccess);
    std::uint32_t status = 99;
    REQUIRE(mgbench::kernels::allreduce_read_status(ranks[r]->sync.get<std::uint32_t>(),
                                                    &status) == cudaSuccess);
    CHECK(status == 0);
  }
  std::uint64_t wrong = 0;
  for (int k = 0; k < kOps; ++k) {
    for (int r = 0; r < n; ++r) {
      wrong += count_wrong(ranks[r]->out[k]->get(), count, dtype, n,
                           kSeedBase + static_cast<std::uint32_t>(k));
    }
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("own all-reduce survives 200 back-to-back ops per rank with drifting ranks",
          "[allreduce][stress][gpu]") {
  // Up to 8 simulated ranks, each on its own hardware queue (kQueues above). Real ranks each
  // own their GPU, so the queue limit belongs to the simulation only.
  for (int n = 2; n <= 8; ++n) {
    for (AllreduceAlgo algo : {AllreduceAlgo::one_shot, AllreduceAlgo::two_shot}) {
      for (std::size_t count : {std::size_t{7}, std::size_t{1023}, std::size_t{65537}}) {
        INFO("ranks " << n << " algo " << mgbench::kernels::to_string(algo) << " count "
                      << count);
        stress(n, count, algo);
      }
    }
  }
}
