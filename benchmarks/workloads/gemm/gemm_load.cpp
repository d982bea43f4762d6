// The doctor's GEMM load, built from the GEMM workload's cuBLASLt helpers.
#include "gemm/gemm_load.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "mgbench/bench/cublaslt.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench {

namespace {

constexpr std::size_t kWorkspace = 32u << 20;
constexpr int kLoadSize = 8192;  // n of the n x n x n bf16 GEMMs

// One device's stream, operands and cuBLASLt plan; two events keep one batch queued.
class DeviceLoad {
 public:
  DeviceLoad(int device, int n) : device_(device), n_(n) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(device_));
    MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (auto& e : events_) MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const std::size_t count = static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_);
    for (auto* buf : {&a_, &b_, &c_}) *buf = DeviceBuffer(count * 2);
    workspace_ = DeviceBuffer(kWorkspace);
    // Random values, never zeros: zeros draw less power.
    const auto seed = static_cast<std::uint64_t>(device) + 1;
    MGBENCH_CUDA_CHECK(kernels::fill_uniform(a_.get(), count, kernels::DType::bf16, seed, -1, 1, stream_));
    MGBENCH_CUDA_CHECK(kernels::fill_uniform(b_.get(), count, kernels::DType::bf16, seed + 7, -1, 1, stream_));
    plan();
  }
  ~DeviceLoad() {
    cudaSetDevice(device_);
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream_));
    for (auto& e : events_) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(e));
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream_));
  }
  DeviceLoad(const DeviceLoad&) = delete;
  DeviceLoad& operator=(const DeviceLoad&) = delete;

  // Enqueues `count` GEMMs and records event `slot` after them.
  void enqueue(int count, int slot) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(device_));
    const float alpha = 1.0f, beta = 0.0f;
    for (int i = 0; i < count; ++i) {
      MGBENCH_CUBLAS_CHECK(cublasLtMatmul(handle_.get(), desc_.get(), &alpha, a_.get(),
                                          layout_.get(), b_.get(), layout_.get(), &beta, c_.get(),
                                          layout_.get(), c_.get(), layout_.get(), &algo_.algo,
                                          workspace_.get(), kWorkspace, stream_));
    }
    MGBENCH_CUDA_CHECK(cudaEventRecord(events_[slot], stream_));
    recorded_[slot] = true;
  }
  void wait(int slot) {
    if (!recorded_[slot]) return;
    MGBENCH_CUDA_CHECK(cudaEventSynchronize(events_[slot]));
    recorded_[slot] = false;
  }

 private:
  void plan() {
    cublasLtHandle_t handle = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
    handle_.reset(handle);
    cublasLtMatmulDesc_t desc = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    desc_.reset(desc);
    cublasLtMatrixLayout_t layout = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, n_, n_, n_));
    layout_.reset(layout);
    algo_ = lt_best_heuristic(handle, desc, layout, layout, layout, layout, kWorkspace,
                              "cuBLASLt found no bf16 GEMM algorithm for the load");
  }

  int device_;
  int n_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[2] = {nullptr, nullptr};
  bool recorded_[2] = {false, false};
  DeviceBuffer a_, b_, c_, workspace_;
  LtPtr<cublasLtHandle_t> handle_;
  LtPtr<cublasLtMatmulDesc_t> desc_;
  LtPtr<cublasLtMatrixLayout_t> layout_;
  cublasLtMatmulHeuristicResult_t algo_{};
};

}  // namespace

void run_gemm_load(const std::vector<int>& devices, double seconds,
                   const std::function<void(double)>& tick, double tick_s) {
  const int n = kLoadSize;
  using Clock = std::chrono::steady_clock;
  std::vector<std::unique_ptr<DeviceLoad>> loads;
  for (int d : devices) loads.push_back(std::make_unique<DeviceLoad>(d, n));
  // ~2 TFLOP per batch at n = 8192: a few ms on a big GPU, a few hundred on a small one.
  const double cube = static_cast<double>(n) * n * n;
  const int per_batch = std::max(1, static_cast<int>(4.0 * 8192.0 * 8192.0 * 8192.0 / cube));
  const auto start = Clock::now();
  auto last_tick = start;
  int slot = 0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    for (auto& load : loads) load->enqueue(per_batch, slot);
    slot ^= 1;
    for (auto& load : loads) load->wait(slot);  // the batch before: keeps one batch queued
    const auto now = Clock::now();
    if (tick && std::chrono::duration<double>(now - last_tick).count() >= tick_s) {
      last_tick = now;
      tick(std::chrono::duration<double>(now - start).count());
    }
  }
  for (auto& load : loads) {
    load->wait(0);
    load->wait(1);
  }
}

}  // namespace mgbench::bench
