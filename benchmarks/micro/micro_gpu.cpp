// mgbench-micro, GPU cases on device 0: kernel-launch latency, CUDA-event timing overhead,
// stream synchronisation, and a small square bf16 GEMM grid (own kernel against cuBLASLt).
// Each iteration's time is set by hand (UseManualTime): CUDA events around the GPU work, the
// host clock around the synchronisation case, which measures a host-side wait. Without a GPU
// every case reports "no CUDA device" through SkipWithError.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "mgbench/bench/cublaslt.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/kernels/datapath.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/kernels/gemm.hpp"

namespace {

using mgbench::bench::DeviceBuffer;

bool have_gpu() {
  static const bool have = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0 &&
           cudaSetDevice(0) == cudaSuccess;
  }();
  return have;
}

// Marks the case skipped (with the reason) on a machine without a CUDA device.
bool skipped_without_gpu(benchmark::State& state) {
  if (have_gpu()) return false;
  state.SkipWithError("no CUDA device");
  return true;
}

// A stream and two timing events on device 0.
struct Timing {
  Timing() {
    MGBENCH_CUDA_CHECK(cudaSetDevice(0));
    MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MGBENCH_CUDA_CHECK(cudaEventCreate(&start));
    MGBENCH_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Timing() {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    (void)cudaStreamDestroy(stream);
  }
  Timing(const Timing&) = delete;
  Timing& operator=(const Timing&) = delete;
  // Seconds between the events after `work` was enqueued between them.
  template <typename Work>
  double time(Work&& work) {
    MGBENCH_CUDA_CHECK(cudaEventRecord(start, stream));
    work();
    MGBENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    MGBENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    MGBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms) * 1e-3;
  }
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// One single-thread kernel that does no work (a chase of 0 steps writes one word).
void gpu_kernel_launch(benchmark::State& state) {
  if (skipped_without_gpu(state)) return;
  Timing t;
  DeviceBuffer word(sizeof(std::uint32_t));
  for (auto _ : state) {
    state.SetIterationTime(t.time([&] {
      MGBENCH_CUDA_CHECK(mgbench::kernels::chase(word.as<std::uint32_t>(), 0,
                                                 word.as<std::uint32_t>(), t.stream));
    }));
  }
}
BENCHMARK(gpu_kernel_launch)->Name("gpu/kernel_launch")->UseManualTime()->Unit(benchmark::kMicrosecond);

// Two events with nothing between them: the floor of every event-timed measurement.
void gpu_event_overhead(benchmark::State& state) {
  if (skipped_without_gpu(state)) return;
  Timing t;
  for (auto _ : state) state.SetIterationTime(t.time([] {}));
}
BENCHMARK(gpu_event_overhead)->Name("gpu/event_overhead")->UseManualTime()->Unit(benchmark::kMicrosecond);

// cudaStreamSynchronize on a stream whose only work is one empty kernel (host clock).
void gpu_stream_sync(benchmark::State& state) {
  if (skipped_without_gpu(state)) return;
  Timing t;
  DeviceBuffer word(sizeof(std::uint32_t));
  for (auto _ : state) {
    MGBENCH_CUDA_CHECK(mgbench::kernels::chase(word.as<std::uint32_t>(), 0,
                                               word.as<std::uint32_t>(), t.stream));
    const auto begin = std::chrono::steady_clock::now();
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(t.stream));
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
}
BENCHMARK(gpu_stream_sync)->Name("gpu/stream_sync")->UseManualTime()->Unit(benchmark::kMicrosecond);

// A square bf16 cuBLASLt matmul (fp32 compute), planned once with the best heuristic.
class LtSquare {
 public:
  explicit LtSquare(int n) : n_(n) {
    cublasLtHandle_t handle = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
    handle_.reset(handle);
    cublasLtMatmulDesc_t desc = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    desc_.reset(desc);
    const cublasOperation_t trans = CUBLAS_OP_T;  // C = A * B^T, as the own kernel computes
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &trans, sizeof trans));
    cublasLtMatrixLayout_t layout = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF, n_, n_, n_));
    layout_.reset(layout);
    workspace_ = DeviceBuffer(kWorkspace);
    algo_ = mgbench::bench::lt_best_heuristic(handle, desc, layout, layout, layout, layout,
                                              kWorkspace, "cuBLASLt has no bf16 algorithm");
  }
  void enqueue(const void* a, const void* b, void* c, cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmul(handle_.get(), desc_.get(), &alpha, b, layout_.get(), a,
                                        layout_.get(), &beta, c, layout_.get(), c, layout_.get(),
                                        &algo_.algo, workspace_.get(), kWorkspace, stream));
  }

 private:
  static constexpr std::size_t kWorkspace = 32u << 20;
  int n_;
  mgbench::bench::LtPtr<cublasLtHandle_t> handle_;
  mgbench::bench::LtPtr<cublasLtMatmulDesc_t> desc_;
  mgbench::bench::LtPtr<cublasLtMatrixLayout_t> layout_;
  DeviceBuffer workspace_;
  cublasLtMatmulHeuristicResult_t algo_{};
};

// Args: {n, impl} with impl 0 = own kernel (kernels::gemm), 1 = cuBLASLt. bf16 in and out.
void gpu_small_gemm(benchmark::State& state) {
  if (skipped_without_gpu(state)) return;
  const auto n = static_cast<int>(state.range(0));
  const bool lt = state.range(1) == 1;
  Timing t;
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  DeviceBuffer a(count * 2), b(count * 2), c(count * 2);
  using mgbench::kernels::DType;
  MGBENCH_CUDA_CHECK(mgbench::kernels::fill_uniform(a.get(), count, DType::bf16, 1, -1, 1, t.stream));
  MGBENCH_CUDA_CHECK(mgbench::kernels::fill_uniform(b.get(), count, DType::bf16, 2, -1, 1, t.stream));
  std::unique_ptr<LtSquare> plan;
  if (lt) plan = std::make_unique<LtSquare>(n);
  double total_s = 0;
  for (auto _ : state) {
    const double s = t.time([&] {
      if (lt) {
        plan->enqueue(a.get(), b.get(), c.get(), t.stream);
      } else {
        MGBENCH_CUDA_CHECK(mgbench::kernels::gemm(DType::bf16, n, n, n, a.get(), b.get(), c.get(),
                                                  t.stream));
      }
    });
    total_s += s;
    state.SetIterationTime(s);
  }
  const double flops = 2.0 * n * static_cast<double>(n) * n * static_cast<double>(state.iterations());
  state.counters["TFLOPs"] = total_s > 0 ? flops / total_s / 1e12 : 0.0;
  state.SetLabel(lt ? "cublaslt" : "own");
}
BENCHMARK(gpu_small_gemm)
    ->Name("gpu/small_gemm_bf16")
    ->ArgNames({"n", "cublaslt"})
    ->Args({128, 0})->Args({128, 1})
    ->Args({256, 0})->Args({256, 1})
    ->Args({512, 0})->Args({512, 1})
    ->Args({1024, 0})->Args({1024, 1})
    ->Args({2048, 0})->Args({2048, 1})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
