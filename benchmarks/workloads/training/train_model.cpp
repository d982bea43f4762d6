// The model replica of one rank of the training step (see train_model.hpp).
#include "training/train_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/train.hpp"

namespace mgbench::bench::train {

namespace {

constexpr float kLearningRate = 1e-3f;
constexpr float kMomentum = 0.9f;
constexpr std::uint64_t kWeightSeed = 0x747261696e000000ULL;  // the same on every rank
constexpr kernels::TrainActivation kActivation = kernels::TrainActivation::gelu;

}  // namespace

ModelConfig config_from_params(const Params& p) {
  ModelConfig c;
  const auto positive = [&](const char* key) {
    const std::int64_t v = p.integer(key);
    if (v < 1) throw UsageError(std::string("train_step ") + key + " must be >= 1");
    return v;
  };
  c.layers = static_cast<int>(positive("layers"));
  c.hidden = static_cast<std::size_t>(positive("hidden"));
  c.batch = static_cast<std::size_t>(positive("batch"));
  c.accum = static_cast<int>(positive("accum"));
  c.precision = precision_from_string(p.text("dtype"));
  c.overlap = p.boolean("overlap");
  c.h2d = p.boolean("h2d");
  const std::int64_t bucket_mb = p.integer("bucket_mb");
  if (bucket_mb < 0) throw UsageError("train_step bucket_mb must be >= 0");
  c.bucket_bytes = static_cast<std::size_t>(bucket_mb) << 20;
  return c;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) {
  MGBENCH_CUDA_CHECK(cudaMallocHost(&ptr_, std::max<std::size_t>(bytes, 1)));
}

void PinnedBuffer::release() noexcept {
  if (ptr_ != nullptr) MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(ptr_));
  ptr_ = nullptr;
}

MlpReplica::MlpReplica(const RankEnv& env, const ModelConfig& cfg, const LtContext& lt,
                       std::uint64_t data_seed)
    : env_(env), cfg_(cfg), dtype_(kernels::storage_dtype(cfg.precision)),
      layout_(ParamLayout::make(cfg.layers, cfg.hidden)),
      buckets_(partition_buckets(layout_, cfg.bucket_bytes)),
      slab_(slab_elements(cfg.batch, cfg.hidden)),
      elem_(kernels::dtype_size(dtype_)), bucket_ready_(buckets_.size()) {
  const std::size_t L = static_cast<std::size_t>(cfg.layers);
  // The largest allocations first: an impossible configuration fails fast.
  z_ = alloc(L * slab_ * elem_);
  a_ = alloc((L - 1) * slab_ * elem_);
  master_ = alloc(layout_.total * sizeof(float));
  velocity_ = alloc(layout_.total * sizeof(float));
  grads_ = alloc(layout_.total * sizeof(float));
  if (has_weight_copy(cfg.precision)) copy_ = alloc(layout_.total * elem_);
  x_ = alloc(slab_ * elem_);
  t_ = alloc(slab_ * elem_);
  d0_ = alloc(slab_ * elem_);
  d1_ = alloc(slab_ * elem_);
  bias_ws_ = alloc(kernels::bias_grad_workspace_floats(cfg.batch, cfg.hidden) * sizeof(float));
  hash_ = alloc(2 * sizeof(unsigned long long));

  plan_gemms(lt);
  initialise(data_seed);
}

void MlpReplica::enqueue_step(bool with_allreduce) {
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

void MlpReplica::enqueue_h2d_step() {
  for (int m = 0; m < cfg_.accum; ++m) enqueue_h2d();
}

void MlpReplica::enqueue_allreduce_all(cudaStream_t stream) {
  for (const auto& b : buckets_) reduce_bucket(b, stream);
}

void MlpReplica::enqueue_optimizer() {
  const double scale = 1.0 / (static_cast<double>(cfg_.batch) * cfg_.accum * env_.nranks);
  MGBENCH_CUDA_CHECK(kernels::launch_sgd_momentum(
      master_.as<float>(), velocity_.as<float>(), grads_.as<float>(),
      copy_.get(), dtype_, layout_.total, kLearningRate, kMomentum,
      static_cast<float>(scale), env_.stream));
}

MlpReplica::Hash MlpReplica::master_hash() {
  MGBENCH_CUDA_CHECK(kernels::launch_weight_hash(master_.as<float>(), layout_.total,
                                                 hash_.as<unsigned long long>(), env_.stream));
  unsigned long long host[2] = {0, 0};
  MGBENCH_CUDA_CHECK(cudaMemcpyAsync(host, hash_.get(), sizeof host, cudaMemcpyDeviceToHost,
                                     env_.stream));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(env_.stream));
  return {host[0], host[1]};
}

DeviceBuffer MlpReplica::alloc(std::size_t bytes) {
  DeviceBuffer b(bytes);
  allocated_ += bytes;
  return b;
}

void MlpReplica::plan_gemms(const LtContext& lt) {
  const auto h = static_cast<std::int64_t>(cfg_.hidden);
  const auto b = static_cast<std::int64_t>(cfg_.batch);
  const cudaDataType_t ab = cuda_data_type(dtype_);
  const cublasComputeType_t compute = cfg_.precision == DType::tf32
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

void MlpReplica::initialise(std::uint64_t data_seed) {
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

void MlpReplica::enqueue_h2d() {
  const std::size_t bytes = cfg_.batch * cfg_.hidden * elem_;
  MGBENCH_CUDA_CHECK(
      cudaMemcpyAsync(x_.get(), host_x_.get(), bytes, cudaMemcpyHostToDevice, env_.stream));
  MGBENCH_CUDA_CHECK(
      cudaMemcpyAsync(t_.get(), host_t_.get(), bytes, cudaMemcpyHostToDevice, env_.stream));
}

void MlpReplica::forward() {
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

void MlpReplica::backward(bool accumulate, bool launch_buckets) {
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
      const Bucket& b = buckets_[next_bucket];
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

void MlpReplica::reduce_bucket(const Bucket& b, cudaStream_t stream) {
  const int extra = &b == &buckets_.front() ? cfg_.test_extra_reductions : 0;
  for (int i = 0; i <= extra; ++i) {
    reducer_->allreduce(grads_.as<float>() + b.offset, b.count, stream);
  }
}

}  // namespace mgbench::bench::train
