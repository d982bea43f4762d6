// train_step: one data-parallel training step of an MLP per op, on every GPU of the group.
//
// The model (see train_math.hpp): L layers of width H, GEMM + bias + GELU per layer (the last
// layer without activation), loss 0.5 * sum (y - t)^2 against a random target. Per GPU and
// per step, on the rank's timed stream:
//   accum times: [h2d: copy the micro-batch x, t from pinned host memory]; forward (cuBLASLt
//   GEMM + bias/activation kernel per layer); loss gradient; backward (weight-gradient GEMM
//   into fp32 gradients, bias-gradient kernel, input-gradient GEMM + activation backward);
//   then the fp32 gradients are summed over the ranks in buckets (bucket_mb, whole layers,
//   PyTorch-DDP style) on the comm stream: with overlap=true each bucket is launched as soon
//   as the backward pass has finished its layers (CUDA events), with overlap=false all
//   buckets after the whole backward; the comm stream is joined back into the timed stream;
//   finally SGD with momentum on the fp32 master weights (lr 1e-3, momentum 0.9, gradients
//   scaled by 1/global batch), refreshing the 16-bit weight copy.
// Precisions: fp32 (COMPUTE_32F), tf32 (COMPUTE_32F_FAST_TF32), bf16 and fp16 (16-bit
// activations and weight copy, fp32 accumulation, fp32 master weights). Gradients are always
// fp32 (the weight-gradient GEMM writes fp32; accumulation steps add in fp32) and the
// all-reduce is fp32 for every precision, as with AMP master gradients: the communication
// volume is 4 bytes per parameter regardless of precision.
// impl=nccl: ncclAllReduce; impl=mgbench: the project's own peer all-reduce (PeerAllreduce).
//
// Formulas (t = the slowest rank's median seconds per step, N = GPUs):
//   samples/s = batch * accum * N / t;  model TFLOP/s per GPU = (6L - 2) H^2 batch accum / t.
// Breakdown (timed after the samples with the same gate and events, slowest rank, median):
//   step_s, compute_only_s (the same step without the all-reduce), comm_s (the bucketed
//   all-reduce alone), h2d_s (one step's batch copies alone), optimizer_s;
//   exposed_comm_s = max(0, step_s - compute_only_s);
//   overlap_ratio = clamp((comm_s - exposed_comm_s) / comm_s, 0, 1).
// Verification (every point): the fp32 master weights after the measured steps hash equal on
// every rank (bitwise-identical replicas, and all finite); and a tiny model (L=3, H=32,
// batch 8, the point's precision, accum, overlap, h2d and impl, one bucket per layer) runs one
// step whose all-reduced gradients must match the FP64 host reference summed over the ranks
// within train::gradient_tolerance() (normwise).
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mgbench/bench/cublaslt.hpp"
#include "mgbench/bench/device_buffer.hpp"
#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/peer_allreduce.hpp"
#include "mgbench/bench/train_math.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/fill.hpp"
#include "mgbench/kernels/train.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

using kernels::DType;
using train::Precision;

constexpr std::size_t kGemmWorkspaceBytes = 32ull << 20;
constexpr float kLearningRate = 1e-3f;
constexpr float kMomentum = 0.9f;
constexpr double kBreakdownBudgetS = 2.0;  // device time for the breakdown timings per point
constexpr std::uint64_t kWeightSeed = 0x747261696e000000ULL;  // the same on every rank
constexpr std::uint64_t kDataSeed = 0x6461746100000000ULL;    // mixed with the rank
constexpr kernels::TrainActivation kActivation = kernels::TrainActivation::gelu;
constexpr train::Activation kReferenceActivation = train::Activation::gelu;
// The tiny model of the gradient check.
constexpr int kTinyLayers = 3;
constexpr std::size_t kTinyHidden = 32;
constexpr std::size_t kTinyBatch = 8;

enum class Impl { nccl, mgbench };

Impl impl_from_string(const std::string& name) {
  if (name == "nccl") return Impl::nccl;
  if (name == "mgbench") return Impl::mgbench;
  throw UsageError("unknown train_step impl '" + name + "': expected nccl or mgbench");
}

struct ModelConfig {
  int layers = 8;
  std::size_t hidden = 4096;
  std::size_t batch = 4096;  // per GPU, per micro-step
  int accum = 1;
  Precision precision = Precision::bf16;
  bool overlap = true;
  bool h2d = true;
  std::size_t bucket_bytes = 25ull << 20;
};

ModelConfig config_from_params(const Params& p) {
  ModelConfig c;
  const auto positive = [&](const char* key) {
    const std::int64_t v = param_int(p, key);
    if (v < 1) throw UsageError(std::string("train_step ") + key + " must be >= 1");
    return v;
  };
  c.layers = static_cast<int>(positive("layers"));
  c.hidden = static_cast<std::size_t>(positive("hidden"));
  c.batch = static_cast<std::size_t>(positive("batch"));
  c.accum = static_cast<int>(positive("accum"));
  c.precision = train::precision_from_string(param_str(p, "dtype"));
  c.overlap = param_bool(p, "overlap");
  c.h2d = param_bool(p, "h2d");
  const std::int64_t bucket_mb = param_int(p, "bucket_mb");
  if (bucket_mb < 0) throw UsageError("train_step bucket_mb must be >= 0");
  c.bucket_bytes = static_cast<std::size_t>(bucket_mb) << 20;
  return c;
}

DType storage_dtype(Precision p) {
  switch (p) {
    case Precision::bf16: return DType::bf16;
    case Precision::fp16: return DType::fp16;
    default: return DType::fp32;
  }
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- RAII -----------------------------------------------------------------------------------

// Page-locked host memory (the batch source for h2d).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) {
    MGBENCH_CUDA_CHECK(cudaMallocHost(&ptr_, std::max<std::size_t>(bytes, 1)));
  }
  ~PinnedBuffer() { release(); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      o.ptr_ = nullptr;
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void release() {
    if (ptr_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(ptr_));
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
};

class Event {
 public:
  Event() { MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~Event() {
    if (event_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(event_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// `waiter` waits for everything enqueued on `producer` so far.
void stream_wait(cudaStream_t waiter, cudaStream_t producer, const Event& event) {
  MGBENCH_CUDA_CHECK(cudaEventRecord(event.get(), producer));
  MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(waiter, event.get(), 0));
}

std::size_t device_used_bytes() {
  std::size_t free_b = 0, total_b = 0;
  MGBENCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return total_b - free_b;
}

// ---- cuBLASLt -------------------------------------------------------------------------------

// The handle and the workspace shared by every GEMM of a rank (all on the timed stream).
class LtContext {
 public:
  explicit LtContext(std::size_t workspace_bytes) : workspace_(workspace_bytes) {
    cublasLtHandle_t handle = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
    handle_.reset(handle);
  }
  cublasLtHandle_t handle() const { return handle_.get(); }
  void* workspace() const { return workspace_.get(); }
  std::size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  DeviceBuffer workspace_;
  LtPtr<cublasLtHandle_t> handle_;
};

// Column-major description of one GEMM: C[m,n] = op(A) op(B) (+ beta C).
struct GemmShape {
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  cudaDataType_t ab_type = CUDA_R_32F, c_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};

// One cuBLASLt matmul, planned once (heuristic) and enqueued many times.
class LtGemm {
 public:
  LtGemm(const LtContext& ctx, const GemmShape& s, const char* what) : ctx_(ctx) {
    cublasLtMatmulDesc_t desc = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, s.compute, CUDA_R_32F));
    desc_.reset(desc);
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &s.trans_a, sizeof s.trans_a));
    MGBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                        &s.trans_b, sizeof s.trans_b));
    // Stored shapes: op(A) is m x k, so A is k x m when transposed; likewise for B.
    const bool ta = s.trans_a != CUBLAS_OP_N, tb = s.trans_b != CUBLAS_OP_N;
    cublasLtMatrixLayout_t layout = nullptr;
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
        &layout, s.ab_type, static_cast<std::uint64_t>(ta ? s.k : s.m),
        static_cast<std::uint64_t>(ta ? s.m : s.k), s.lda));
    a_.reset(layout);
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
        &layout, s.ab_type, static_cast<std::uint64_t>(tb ? s.n : s.k),
        static_cast<std::uint64_t>(tb ? s.k : s.n), s.ldb));
    b_.reset(layout);
    MGBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, s.c_type,
                                                    static_cast<std::uint64_t>(s.m),
                                                    static_cast<std::uint64_t>(s.n), s.ldc));
    c_.reset(layout);

    heuristic_ = lt_best_heuristic(
        ctx.handle(), desc, a_.get(), b_.get(), c_.get(), c_.get(), ctx.workspace_bytes(),
        std::string("cuBLASLt has no algorithm for the ") + what + " GEMM (m=" +
            std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
            ") on this GPU");
  }

  void run(const void* a, const void* b, void* c, float beta, cudaStream_t stream) const {
    const float alpha = 1.0f;
    MGBENCH_CUBLAS_CHECK(cublasLtMatmul(ctx_.handle(), desc_.get(), &alpha, a, a_.get(), b,
                                        b_.get(), &beta, c, c_.get(), c, c_.get(),
                                        &heuristic_.algo, ctx_.workspace(),
                                        ctx_.workspace_bytes(), stream));
  }

 private:
  const LtContext& ctx_;
  LtPtr<cublasLtMatmulDesc_t> desc_;
  LtPtr<cublasLtMatrixLayout_t> a_, b_, c_;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

// ---- gradient all-reduce --------------------------------------------------------------------

class GradReducer {
 public:
  virtual ~GradReducer() = default;
  // Enqueues the in-place fp32 sum over ranks of data[0..count) on `stream`.
  virtual void allreduce(float* data, std::size_t count, cudaStream_t stream) = 0;
};

// Waits until a call on a non-blocking communicator has been enqueued on its stream (NCCL may
// return ncclInProgress before the work is on the stream; events recorded after the call
// must come after it).
void nccl_wait_enqueued(ncclComm_t comm, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(std::max(timeout_s, 1.0));
  ncclResult_t state = ncclInProgress;
  while (true) {
    MGBENCH_NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
    if (state != ncclInProgress) break;
    if (std::chrono::steady_clock::now() > deadline) {
      throw EnvironmentError("an NCCL call was still in progress after the group timeout");
    }
    std::this_thread::yield();
  }
  MGBENCH_NCCL_CHECK(state);
}

class NcclReducer final : public GradReducer {
 public:
  NcclReducer(ncclComm_t comm, double timeout_s) : comm_(comm), timeout_s_(timeout_s) {
    if (comm_ == nullptr) throw EnvironmentError("train_step: no NCCL communicator for this rank");
  }
  void allreduce(float* data, std::size_t count, cudaStream_t stream) override {
    MGBENCH_NCCL_CHECK(ncclAllReduce(data, data, count, ncclFloat32, ncclSum, comm_, stream));
    nccl_wait_enqueued(comm_, timeout_s_);
  }

 private:
  ncclComm_t comm_;
  double timeout_s_;
};

class PeerReducer final : public GradReducer {
 public:
  PeerReducer(RankEnv& env, std::size_t max_bytes) : peer_(env, max_bytes) {}
  void allreduce(float* data, std::size_t count, cudaStream_t stream) override {
    peer_.run(data, data, count, ReduceDtype::fp32, stream);
  }

 private:
  PeerAllreduce peer_;
};

// ---- the model replica of one rank ----------------------------------------------------------

class MlpReplica {
 public:
  MlpReplica(const RankEnv& env, const ModelConfig& cfg, const LtContext& lt,
             std::uint64_t data_seed)
      : env_(env), cfg_(cfg), dtype_(storage_dtype(cfg.precision)),
        layout_(train::ParamLayout::make(cfg.layers, cfg.hidden)),
        buckets_(train::partition_buckets(layout_, cfg.bucket_bytes)),
        slab_(train::slab_elements(cfg.batch, cfg.hidden)),
        elem_(kernels::dtype_size(dtype_)), bucket_ready_(buckets_.size()) {
    const std::size_t L = static_cast<std::size_t>(cfg.layers);
    // The largest allocations first: an impossible configuration fails fast.
    z_ = alloc(L * slab_ * elem_);
    a_ = alloc((L - 1) * slab_ * elem_);
    master_ = alloc(layout_.total * sizeof(float));
    velocity_ = alloc(layout_.total * sizeof(float));
    grads_ = alloc(layout_.total * sizeof(float));
    if (train::has_weight_copy(cfg.precision)) copy_ = alloc(layout_.total * elem_);
    x_ = alloc(slab_ * elem_);
    t_ = alloc(slab_ * elem_);
    d0_ = alloc(slab_ * elem_);
    d1_ = alloc(slab_ * elem_);
    bias_ws_ = alloc(kernels::bias_grad_workspace_floats(cfg.batch, cfg.hidden) * sizeof(float));
    hash_ = alloc(2 * sizeof(unsigned long long));

    plan_gemms(lt);
    initialise(data_seed);
  }

  void set_reducer(GradReducer* reducer) { reducer_ = reducer; }

  // One training step on env.stream (enqueue only).
  void enqueue_step(bool with_allreduce) {
    if (with_allreduce && reducer_ == nullptr) {
      throw EnvironmentError("train_step: all-reduce requested before set-up finished");
    }
    for (int m = 0; m < cfg_.accum; ++m) {
      if (cfg_.h2d) enqueue_h2d();
      forward();
      const bool last = m == cfg_.accum - 1;
      backward(/*accumulate=*/m > 0, /*launch_buckets=*/last && with_allreduce && cfg_.overlap);
    }
    if (with_allreduce) {
      if (!cfg_.overlap) {
        stream_wait(env_.comm_stream, env_.stream, backward_done_);
        for (const auto& b : buckets_) reduce_bucket(b, env_.comm_stream);
      }
      // Join: the optimizer (and the end-of-step timing event) come after every bucket.
      stream_wait(env_.stream, env_.comm_stream, comm_done_);
    }
    enqueue_optimizer();
  }

  // One step's batch copies (accum micro-batches of x and t).
  void enqueue_h2d_step() {
    for (int m = 0; m < cfg_.accum; ++m) enqueue_h2d();
  }

  // Every bucket, one after another, on `stream`.
  void enqueue_allreduce_all(cudaStream_t stream) {
    for (const auto& b : buckets_) reduce_bucket(b, stream);
  }

  void enqueue_optimizer() {
    const double scale = 1.0 / (static_cast<double>(cfg_.batch) * cfg_.accum * env_.nranks);
    MGBENCH_CUDA_CHECK(kernels::launch_sgd_momentum(
        master_.as<float>(), velocity_.as<float>(), grads_.as<float>(),
        copy_.get(), dtype_, layout_.total, kLearningRate, kMomentum,
        static_cast<float>(scale), env_.stream));
  }

  struct Hash {
    std::uint64_t value = 0;
    std::uint64_t nonfinite = 0;
  };
  // Synchronous: hash of the fp32 master weights.
  Hash master_hash() {
    MGBENCH_CUDA_CHECK(kernels::launch_weight_hash(master_.as<float>(), layout_.total,
                                                   hash_.as<unsigned long long>(), env_.stream));
    unsigned long long host[2] = {0, 0};
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(host, hash_.get(), sizeof host, cudaMemcpyDeviceToHost,
                                       env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    return {host[0], host[1]};
  }

  // Host copies (as doubles) of what the GEMMs read and of the gradients, ordered after
  // everything enqueued on the timed stream (synchronous).
  std::vector<double> read_params() const { return read(weights(), dtype_, layout_.total); }
  std::vector<double> read_x() const { return read(x_.get(), dtype_, cfg_.batch * cfg_.hidden); }
  std::vector<double> read_t() const { return read(t_.get(), dtype_, cfg_.batch * cfg_.hidden); }
  std::vector<double> read_grads() const {
    return read(grads_.get(), DType::fp32, layout_.total);
  }

  const train::ParamLayout& layout() const { return layout_; }
  const std::vector<train::Bucket>& buckets() const { return buckets_; }
  std::size_t allocated_bytes() const { return allocated_; }

 private:
  DeviceBuffer alloc(std::size_t bytes) {
    DeviceBuffer b(bytes);
    allocated_ += bytes;
    return b;
  }

  // The weights the GEMMs and bias kernels read: the 16-bit copy, or the fp32 master.
  const void* weights() const { return copy_.get() != nullptr ? copy_.get() : master_.get(); }
  const char* weight_bytes(std::size_t element_offset) const {
    return static_cast<const char*>(weights()) + element_offset * elem_;
  }
  char* slab(const DeviceBuffer& buf, std::size_t index) const {
    return static_cast<char*>(buf.get()) + index * slab_ * elem_;
  }

  void plan_gemms(const LtContext& lt) {
    const auto h = static_cast<std::int64_t>(cfg_.hidden);
    const auto b = static_cast<std::int64_t>(cfg_.batch);
    const cudaDataType_t ab = cuda_data_type(dtype_);
    const cublasComputeType_t compute = cfg_.precision == Precision::tf32
                                            ? CUBLAS_COMPUTE_32F_FAST_TF32
                                            : CUBLAS_COMPUTE_32F;
    // Row-major X[B,H] is column-major X^T (H x B, ld H); row-major W[out,in] is
    // column-major W^T (in x out, ld H).
    // forward:  Z^T (H x B) = (W^T)^T X^T          -> op(A) = T on W, B = X
    fwd_ = std::make_unique<LtGemm>(
        lt, GemmShape{CUBLAS_OP_T, CUBLAS_OP_N, h, b, h, h, h, h, ab, ab, compute}, "forward");
    // input gradient:  dX^T (H x B) = W^T dZ^T     -> A = W (as stored), B = dZ
    dgrad_ = std::make_unique<LtGemm>(
        lt, GemmShape{CUBLAS_OP_N, CUBLAS_OP_N, h, b, h, h, h, h, ab, ab, compute},
        "input-gradient");
    // weight gradient: dW^T (in x out) = X^T dZ    -> A = X, op(B) = T on dZ; fp32 output
    wgrad_ = std::make_unique<LtGemm>(
        lt, GemmShape{CUBLAS_OP_N, CUBLAS_OP_T, h, h, b, h, h, h, ab, CUDA_R_32F, compute},
        "weight-gradient");
  }

  void initialise(std::uint64_t data_seed) {
    cudaStream_t s = env_.stream;
    const double w_range = std::sqrt(6.0 / static_cast<double>(cfg_.hidden));  // He-uniform
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(master_.get(), 0, master_.bytes(), s));  // padding
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(velocity_.get(), 0, velocity_.bytes(), s));
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(grads_.get(), 0, grads_.bytes(), s));
    for (int l = 0; l < cfg_.layers; ++l) {
      const auto& slot = layout_.slots[static_cast<std::size_t>(l)];
      float* w = master_.as<float>() + slot.weight_offset;
      float* bias = master_.as<float>() + slot.bias_offset;
      const std::uint64_t seed = mix64(kWeightSeed + static_cast<std::uint64_t>(l));
      MGBENCH_CUDA_CHECK(kernels::fill_uniform(w, cfg_.hidden * cfg_.hidden, DType::fp32, seed,
                                               -w_range, w_range, s));
      MGBENCH_CUDA_CHECK(
          kernels::fill_uniform(bias, cfg_.hidden, DType::fp32, mix64(seed), -0.1, 0.1, s));
    }
    if (copy_.get() != nullptr) {
      MGBENCH_CUDA_CHECK(
          kernels::launch_round_copy(master_.as<float>(), copy_.get(), dtype_, layout_.total, s));
    }
    const std::size_t n = cfg_.batch * cfg_.hidden;
    MGBENCH_CUDA_CHECK(kernels::fill_uniform(x_.get(), n, dtype_, data_seed, -1.0, 1.0, s));
    MGBENCH_CUDA_CHECK(kernels::fill_uniform(t_.get(), n, dtype_, mix64(data_seed), -1.0, 1.0, s));
    if (cfg_.h2d) {
      // The host copy of the batch: the step copies it back over x and t (same values).
      host_x_ = PinnedBuffer(n * elem_);
      host_t_ = PinnedBuffer(n * elem_);
      MGBENCH_CUDA_CHECK(
          cudaMemcpyAsync(host_x_.get(), x_.get(), n * elem_, cudaMemcpyDeviceToHost, s));
      MGBENCH_CUDA_CHECK(
          cudaMemcpyAsync(host_t_.get(), t_.get(), n * elem_, cudaMemcpyDeviceToHost, s));
    }
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void enqueue_h2d() {
    const std::size_t bytes = cfg_.batch * cfg_.hidden * elem_;
    MGBENCH_CUDA_CHECK(
        cudaMemcpyAsync(x_.get(), host_x_.get(), bytes, cudaMemcpyHostToDevice, env_.stream));
    MGBENCH_CUDA_CHECK(
        cudaMemcpyAsync(t_.get(), host_t_.get(), bytes, cudaMemcpyHostToDevice, env_.stream));
  }

  void forward() {
    cudaStream_t s = env_.stream;
    const void* in = x_.get();
    for (int l = 0; l < cfg_.layers; ++l) {
      const auto& slot = layout_.slots[static_cast<std::size_t>(l)];
      const bool last = l == cfg_.layers - 1;
      void* z = slab(z_, static_cast<std::size_t>(l));
      void* a = last ? nullptr : slab(a_, static_cast<std::size_t>(l));
      fwd_->run(weight_bytes(slot.weight_offset), in, z, 0.0f, s);
      MGBENCH_CUDA_CHECK(kernels::launch_bias_act_forward(
          z, weight_bytes(slot.bias_offset), a, dtype_, cfg_.batch, cfg_.hidden,
          last ? kernels::TrainActivation::identity : kActivation, s));
      in = a;
    }
  }

  // Loss gradient and backward pass of one micro-step. `accumulate`: add to the gradients of
  // the earlier micro-steps. `launch_buckets`: start each bucket's all-reduce on the comm
  // stream as soon as its lowest layer's gradients are done.
  void backward(bool accumulate, bool launch_buckets) {
    cudaStream_t s = env_.stream;
    const std::size_t n = cfg_.batch * cfg_.hidden;
    const float beta = accumulate ? 1.0f : 0.0f;
    void* cur = d0_.get();
    void* other = d1_.get();
    MGBENCH_CUDA_CHECK(kernels::launch_mse_grad(
        slab(z_, static_cast<std::size_t>(cfg_.layers - 1)), t_.get(), cur, dtype_, n, s));
    std::size_t next_bucket = 0;
    for (int l = cfg_.layers - 1; l >= 0; --l) {
      const auto& slot = layout_.slots[static_cast<std::size_t>(l)];
      const void* in = l == 0 ? x_.get() : slab(a_, static_cast<std::size_t>(l - 1));
      float* grad = grads_.as<float>();
      wgrad_->run(in, cur, grad + slot.weight_offset, beta, s);
      MGBENCH_CUDA_CHECK(kernels::launch_bias_grad(cur, dtype_, cfg_.batch, cfg_.hidden,
                                                   grad + slot.bias_offset, accumulate,
                                                   bias_ws_.as<float>(), s));
      if (launch_buckets && next_bucket < buckets_.size() &&
          buckets_[next_bucket].low_layer == l) {
        const train::Bucket& b = buckets_[next_bucket];
        stream_wait(env_.comm_stream, s, bucket_ready_[next_bucket]);
        reduce_bucket(b, env_.comm_stream);
        ++next_bucket;
      }
      if (l == 0) break;
      dgrad_->run(weight_bytes(slot.weight_offset), cur, other, 0.0f, s);
      MGBENCH_CUDA_CHECK(kernels::launch_act_backward(
          other, slab(z_, static_cast<std::size_t>(l - 1)), other, dtype_, n, kActivation, s));
      std::swap(cur, other);
    }
  }

  void reduce_bucket(const train::Bucket& b, cudaStream_t stream) {
    reducer_->allreduce(grads_.as<float>() + b.offset, b.count, stream);
  }

  std::vector<double> read(const void* device, DType dtype, std::size_t count) const {
    const std::size_t size = kernels::dtype_size(dtype);
    std::vector<unsigned char> raw(count * size);
    MGBENCH_CUDA_CHECK(cudaMemcpyAsync(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost,
                                       env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    std::vector<double> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = kernels::decode_element(dtype, raw.data(), i);
    return out;
  }

  const RankEnv& env_;
  ModelConfig cfg_;
  DType dtype_;
  train::ParamLayout layout_;
  std::vector<train::Bucket> buckets_;
  std::size_t slab_;  // elements per activation slab
  std::size_t elem_;  // bytes per stored element
  std::size_t allocated_ = 0;
  DeviceBuffer z_, a_, master_, velocity_, grads_, copy_, x_, t_, d0_, d1_, bias_ws_, hash_;
  PinnedBuffer host_x_, host_t_;
  std::vector<Event> bucket_ready_;
  Event backward_done_, comm_done_;
  std::unique_ptr<LtGemm> fwd_, dgrad_, wgrad_;
  GradReducer* reducer_ = nullptr;
};

// ---- the rank point -------------------------------------------------------------------------

struct GradCheck {
  train::GradientError error;
  double tolerance = 0;
};

class TrainStepPoint final : public RankPoint {
 public:
  explicit TrainStepPoint(RankEnv& env) : env_(env), cfg_(config_from_params(*env.params)) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(env.device));
    const Impl impl = impl_from_string(param_str(*env.params, "impl"));
    used_before_ = device_used_bytes();

    ModelConfig tiny = cfg_;
    tiny.layers = kTinyLayers;
    tiny.hidden = kTinyHidden;
    tiny.batch = kTinyBatch;
    tiny.bucket_bytes = 0;  // one bucket per layer: exercises the bucket offsets and events

    // Allocation and initialisation may fail on some ranks only (OOM): every rank meets the
    // others exactly once below, failed or not, before any collective set-up.
    std::exception_ptr error;
    try {
      const std::uint64_t data_seed = mix64(kDataSeed + static_cast<std::uint64_t>(env.rank));
      lt_ = std::make_unique<LtContext>(kGemmWorkspaceBytes);
      main_ = std::make_unique<MlpReplica>(env, cfg_, *lt_, data_seed);
      tiny_ = std::make_unique<MlpReplica>(env, tiny, *lt_, mix64(data_seed));
    } catch (...) {
      error = std::current_exception();
    }
    const auto failed = env.all_gather_ptr(error ? reinterpret_cast<void*>(1) : nullptr);
    if (error) std::rethrow_exception(error);
    for (void* f : failed) {
      // The failing rank reports the real reason (oom, failed); waived is the mildest status,
      // so the combined point status is the failing rank's.
      if (f != nullptr) throw WaivedError("another rank failed during set-up");
    }

    const std::size_t staging = std::max(train::max_bucket_count(main_->buckets()),
                                         train::max_bucket_count(tiny_->buckets())) *
                                sizeof(float);
    if (impl == Impl::mgbench) {
      reducer_ = std::make_unique<PeerReducer>(env, staging);
      staging_bytes_ = 2 * staging;  // PeerAllreduce keeps two halves of max_bytes
    } else {
      reducer_ = std::make_unique<NcclReducer>(env.comm, env.settings->group_timeout_s);
    }
    main_->set_reducer(reducer_.get());
    tiny_->set_reducer(reducer_.get());
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env.stream));
    note_memory();
  }

  void enqueue() override { main_->enqueue_step(/*with_allreduce=*/true); }

  Verification verify() override {
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.comm_stream));
    note_memory();
    Verification v;

    // 1. Replica agreement: every rank's master weights hash the same (the hash travels as
    //    the pointer value of all_gather_ptr).
    const MlpReplica::Hash mine = main_->master_hash();
    const auto hashes = env_.all_gather_ptr(reinterpret_cast<void*>(
        static_cast<std::uintptr_t>(mine.value)));
    int disagreeing = 0;
    for (void* h : hashes) {
      if (reinterpret_cast<std::uintptr_t>(h) != static_cast<std::uintptr_t>(mine.value)) {
        ++disagreeing;
      }
    }
    char hex[24];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(mine.value));
    v.details["weights_hash"] = hex;
    v.details["replicas_agree"] = disagreeing == 0;
    v.details["nonfinite_weights"] = mine.nonfinite;
    if (disagreeing != 0) {
      v.ok = false;
      v.message = std::to_string(disagreeing) +
                  " rank(s) hold different weights after the measured steps";
    } else if (mine.nonfinite != 0) {
      v.ok = false;
      v.message = std::to_string(mine.nonfinite) + " master weights are not finite";
    }

    // 2. Gradient check on the tiny model (collective: every rank runs it).
    const GradCheck check = check_gradients();
    v.details["grad_rel_l2"] = check.error.rel_l2;
    v.details["max_rel_error"] = check.error.max_rel;
    v.details["grad_tolerance"] = check.tolerance;
    if (!(check.error.rel_l2 <= check.tolerance) && v.ok) {
      v.ok = false;
      v.message = "tiny-model gradients differ from the FP64 reference: relative error " +
                  std::to_string(check.error.rel_l2) + " > " + std::to_string(check.tolerance);
    }

    // 3. Step-time breakdown (collective timings; they change the weights, so they come
    //    after the replica check).
    measure_breakdown();
    note_memory();
    return v;
  }

  Json rank_details() override {
    Json d;
    d["peak_bytes"] = std::max<std::uint64_t>(peak_used_, allocated_bytes());
    d["allocated_bytes"] = allocated_bytes();
    d["estimate_bytes"] =
        train::estimate_memory(cfg_.layers, cfg_.hidden, cfg_.batch, cfg_.precision,
                               kGemmWorkspaceBytes,
                               kernels::bias_grad_workspace_floats(cfg_.batch, cfg_.hidden),
                               staging_bytes_)
            .total();
    d["parameters"] = main_->layout().parameter_count();
    d["buckets"] = main_->buckets().size();
    d["metrics"] = breakdown_;
    return d;
  }

 private:
  std::size_t allocated_bytes() const {
    return main_->allocated_bytes() + tiny_->allocated_bytes() + lt_->workspace_bytes();
  }

  void note_memory() {
    const std::size_t used = device_used_bytes();
    if (used > used_before_) peak_used_ = std::max(peak_used_, used - used_before_);
  }

  GradCheck check_gradients() {
    GradCheck check;
    check.tolerance = train::gradient_tolerance(cfg_.precision);
    // What the step's GEMMs will read, before the step changes the weights.
    const std::vector<double> params = tiny_->read_params();
    const std::vector<double> x = tiny_->read_x();
    const std::vector<double> t = tiny_->read_t();
    std::vector<double> ref = train::reference_gradients(tiny_->layout(), kTinyBatch, params, x,
                                                         t, kReferenceActivation);
    // Every micro-step sees the same micro-batch: accum times the gradient.
    for (double& g : ref) g *= cfg_.accum;

    tiny_->enqueue_step(/*with_allreduce=*/true);
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    const std::vector<double> got = tiny_->read_grads();

    // The reference of the all-reduced gradients: the sum of every rank's FP64 reference,
    // summed in FP64 through NCCL (also for impl=mgbench: an independent path).
    if (env_.nranks > 1) {
      DeviceBuffer dev(ref.size() * sizeof(double));
      // Stream-ordered copies: the timed stream is non-blocking (no implicit ordering with
      // plain cudaMemcpy on the legacy stream).
      MGBENCH_CUDA_CHECK(cudaMemcpyAsync(dev.get(), ref.data(), dev.bytes(),
                                         cudaMemcpyHostToDevice, env_.stream));
      MGBENCH_NCCL_CHECK(ncclAllReduce(dev.get(), dev.get(), ref.size(), ncclFloat64, ncclSum,
                                       env_.comm, env_.stream));
      nccl_wait_enqueued(env_.comm, env_.settings->group_timeout_s);
      MGBENCH_CUDA_CHECK(cudaMemcpyAsync(ref.data(), dev.get(), dev.bytes(),
                                         cudaMemcpyDeviceToHost, env_.stream));
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
    }
    check.error = train::gradient_error(got, ref);
    return check;
  }

  void measure_breakdown() {
    // Up to min_samples (3..10) per measurement, fewer for long steps: the five measurements
    // stay near kBreakdownBudgetS. The probe's time is the slowest rank's, identical on every
    // rank, so every rank picks the same count.
    const auto step = [this] { main_->enqueue_step(true); };
    const double probe = env_.collective_time(step, 1);
    const int most = static_cast<int>(
        std::clamp<std::size_t>(env_.settings->stopping.min_samples, 3, 10));
    const int samples = std::clamp(
        static_cast<int>(kBreakdownBudgetS / (5.0 * std::max(probe, 1e-6))), 3, most);
    train::Breakdown m;
    m.step_s = env_.collective_time(step, samples);
    m.compute_only_s = env_.collective_time([this] { main_->enqueue_step(false); }, samples);
    if (cfg_.h2d) {
      m.h2d_s = env_.collective_time([this] { main_->enqueue_h2d_step(); }, samples);
    }
    m.optimizer_s = env_.collective_time([this] { main_->enqueue_optimizer(); }, samples);
    m.comm_s =
        env_.collective_time([this] { main_->enqueue_allreduce_all(env_.stream); }, samples);
    m = train::derive_breakdown(m);
    breakdown_ = Json{{"breakdown_step_s", m.step_s},
                      {"compute_only_s", m.compute_only_s},
                      {"comm_s", m.comm_s},
                      {"exposed_comm_s", m.exposed_comm_s},
                      {"overlap_ratio", m.overlap_ratio},
                      {"h2d_s", m.h2d_s},
                      {"optimizer_s", m.optimizer_s},
                      {"breakdown_samples", samples}};
  }

  RankEnv& env_;
  ModelConfig cfg_;
  std::size_t used_before_ = 0;
  std::size_t peak_used_ = 0;
  std::size_t staging_bytes_ = 0;
  std::unique_ptr<LtContext> lt_;
  std::unique_ptr<MlpReplica> main_;
  std::unique_ptr<MlpReplica> tiny_;
  std::unique_ptr<GradReducer> reducer_;  // destroyed first: the replicas only point to it
  Json breakdown_ = Json::object();
};

Json train_metrics(const Params& p, int nranks, double seconds) {
  const auto batch = static_cast<double>(param_int(p, "batch"));
  const auto accum = static_cast<double>(param_int(p, "accum"));
  const double per_gpu = batch * accum;
  const double flops = train::step_flops(static_cast<int>(param_int(p, "layers")),
                                         static_cast<std::size_t>(param_int(p, "hidden")),
                                         static_cast<std::size_t>(param_int(p, "batch")),
                                         static_cast<int>(param_int(p, "accum")));
  return Json{{"samples_per_s", per_gpu * nranks / seconds},
              {"samples_per_s_per_gpu", per_gpu / seconds},
              {"global_batch", per_gpu * nranks},
              {"step_time_s", seconds},
              {"model_tflops_per_gpu", flops / seconds / 1e12}};
}

RunnerOptions train_runner_options() {
  RunnerOptions o;
  o.needs_nccl = true;
  o.needs_peer_access = true;
  return o;
}

}  // namespace

namespace {
// How reports show the training step: step time and its breakdown, samples/s, exposed
// communication, overlap and peak memory; samples/s and memory vs the per-GPU batch.
Presentation train_presentation() {
  return Presentation()
      .metric(MetricSpec("samples_per_s", "samples/s", "samples/s"))
      .metric(MetricSpec("samples_per_s_per_gpu", "samples/s per GPU", "samples/s"))
      .metric(MetricSpec("step_time_s", "step time", "s")
                  .format(ValueFormat::time)
                  .better(Better::lower))
      .metric(MetricSpec("exposed_comm_s", "exposed communication", "s")
                  .format(ValueFormat::time)
                  .better(Better::lower))
      .metric(MetricSpec("overlap_ratio", "overlap").format(ValueFormat::percent, 0))
      .metric(MetricSpec("model_tflops_per_gpu", "model TFLOP/s per GPU", "TFLOP/s"))
      .axis(AxisSpec("batch", "per-GPU batch size (batch)")
                .with({"global_batch"})
                .tooltip_word("batch"))
      .table(TableSpec()
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::params())
                 .column(ColumnSpec::metric("step_time_s", "step time")
                             .format(ValueFormat::time)
                             .or_median())
                 .column(ColumnSpec::metric("samples_per_s", "samples/s"))
                 .column(ColumnSpec::metric("samples_per_s_per_gpu", "samples/s/GPU")
                             .or_per_gpu("samples_per_s"))
                 .column(ColumnSpec::speedup())
                 .column(ColumnSpec::efficiency())
                 .column(ColumnSpec::metric("exposed_comm_s", "exposed comm")
                             .format(ValueFormat::time)
                             .share("step_time_s"))
                 .column(ColumnSpec::metric("overlap_ratio", "overlap")
                             .format(ValueFormat::percent, 0))
                 .column(ColumnSpec::peak_memory())
                 .tail())
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("throughput", "samples_per_s")
                 .titled("samples/s vs batch size")
                 .y_axis("samples/s"))
      .chart(ChartSpec::memory("memory").titled("peak memory vs batch size"))
      .chart(ChartSpec::breakdown("breakdown", {"breakdown_step_s", "step_time_s"}, "compute")
                 .titled("step-time breakdown")
                 .y_axis("time per step (ms)")
                 .part({"h2d_s", "h2d_time_s", "data_copy_s"}, "host-to-device copy", 2)
                 .part({"optimizer_s", "optimizer_time_s"}, "optimizer", 3)
                 .part({"exposed_comm_s"}, "exposed communication", 1)
                 .only_with("exposed_comm_s"));
}
}  // namespace

MGBENCH_REGISTER_WORKLOAD(
    Workload("train_step")
        .summary("Data-parallel MLP training step: forward, backward, bucketed gradient "
                 "all-reduce overlapped with backward, SGD-momentum update")
        .formulas("samples/s = batch * accum * GPUs / step time (slowest rank, median); "
                  "model TFLOP/s per GPU = (6L-2) H^2 batch accum / step time; "
                  "exposed_comm_s = max(0, step - compute_only); "
                  "overlap_ratio = clamp((comm - exposed_comm) / comm, 0, 1)")
        .requirements("impl=mgbench needs peer access between every pair of GPUs of the group")
        .axis(Axis::integer("layers", {"8"}).describe("MLP layers"))
        .axis(Axis::integer("hidden", {"4096"}).describe("layer width H"))
        .axis(Axis::integer("batch", {"4096"})
                  .quick({"1024"})
                  .full({"1024", "4096", "8192"})
                  .describe("per-GPU batch (samples per micro-step)"))
        .axis(Axis::text("dtype", {"fp32", "tf32", "bf16", "fp16"})
                  .quick({"bf16"})
                  .allowed({"fp32", "tf32", "bf16", "fp16"})
                  .describe("compute precision (16-bit: fp32 master weights and gradients)"))
        .axis(Axis::integer("accum", {"1"}).full({"1", "4"}).describe(
            "gradient-accumulation micro-steps per optimizer step"))
        .axis(Axis::boolean("overlap", {"true"})
                  .full({"true", "false"})
                  .describe("launch each bucket's all-reduce during the backward pass"))
        .axis(Axis::boolean("h2d", {"true"})
                  .full({"true", "false"})
                  .describe("copy each micro-batch from pinned host memory"))
        .axis(Axis::text("impl", {"nccl"})
                  .full({"nccl", "mgbench"})
                  .allowed({"nccl", "mgbench"})
                  .describe("gradient all-reduce implementation"))
        .axis(Axis::integer("bucket_mb", {"25"}).describe(
            "gradient bucket size in MiB (0: one bucket per layer)"))
        .throughput("samples_per_s", "samples/s")
        .present(train_presentation())
        .estimate_seconds_per_point(10.0)
        .runner(make_runner(
            [](RankEnv& env) -> std::unique_ptr<RankPoint> {
              return std::make_unique<TrainStepPoint>(env);
            },
            train_metrics, train_runner_options())));

}  // namespace mgbench::bench
