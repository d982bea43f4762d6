// One rank's replica of the transformer step's layer stack (see transformer_model.hpp): the
// buffers, their initialisation, the step and the host reads of the verification.
#include "training/transformer_model.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "training/transformer_reference.hpp"
#include "training/transformer_shards.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/train.hpp"
#include "mgbench/kernels/transformer.hpp"
#include "training/transformer_gemms.hpp"

namespace mgbench::bench::transformer {

namespace {

constexpr std::uint64_t kWeightSeed = 0x7472616e73000000ULL;  // the same on every replica
constexpr float kEpsilon = static_cast<float>(kNormEpsilon);

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

// Pointers of one layer's activations (16-bit unless said otherwise).
struct Replica::Layer {
  char *x, *next, *n1, *qkv, *probs, *ao, *h1, *n2, *gu, *act;
  float *rstd1, *rstd2;
};

Replica::Replica(const RankEnv& env, const StepConfig& cfg, const LtContext& lt,
                 StepComms& comms, std::uint64_t data_seed)
    : env_(env), cfg_(cfg), dims_(local_dims(cfg.shape, cfg.tp)), layout_(layout_for(cfg)),
      sizes_(buffer_sizes(cfg)), comms_(comms), dtype_(cfg.precision),
      elem_(kernels::dtype_size(cfg.precision)) {
  allocate();
  const std::uint32_t alignment = gemm_alignment(cfg);
  gemms_ = std::make_unique<LayerGemms>(lt, cfg, alignment);
  attention_ = std::make_unique<AttentionGemms>(lt, cfg, alignment);
  initialise(data_seed);
}

Replica::~Replica() = default;

DeviceBuffer Replica::alloc(std::size_t bytes) {
  DeviceBuffer b(bytes);
  allocated_ += bytes;
  return b;
}

void Replica::allocate() {
  const std::size_t L = static_cast<std::size_t>(cfg_.layers), e = elem_;
  const std::size_t T = static_cast<std::size_t>(cfg_.local_tokens());
  const std::size_t h = static_cast<std::size_t>(dims_.hidden),
                    q = static_cast<std::size_t>(dims_.qkv_width()),
                    a = static_cast<std::size_t>(dims_.attn_width()),
                    m = static_cast<std::size_t>(dims_.mlp);
  // The largest allocations first: an impossible configuration fails fast.
  probs_ = alloc(L * sizes_.probs * e);
  const std::size_t params = L * sizes_.layer_params;
  master_ = alloc(params * sizeof(float));
  adam_m_ = alloc(params * sizeof(float));
  adam_v_ = alloc(params * sizeof(float));
  grads_ = alloc(params * sizeof(float));
  copy_ = alloc(params * e);
  if (cfg_.strategy == Strategy::fsdp) {
    for (int s = 0; s < 2; ++s) {
      gathered_[s] = alloc(layout_.total * e);
      full_grads_[s] = alloc(layout_.total * sizeof(float));
    }
    stage_ = alloc(sizes_.layer_params * sizeof(float));
  }
  xs_ = alloc((L + 1) * T * h * e);
  t_ = alloc(T * h * e);
  n1_ = alloc(L * T * h * e);
  h1_ = alloc(L * T * h * e);
  n2_ = alloc(L * T * h * e);
  qkv_ = alloc(L * T * q * e);
  ao_ = alloc(L * T * a * e);
  gu_ = alloc(L * T * 2 * m * e);
  act_ = alloc(L * T * m * e);
  rstd_ = alloc(L * sizes_.per_layer_32 * sizeof(float));
  d_a_ = alloc(T * h * e);
  d_b_ = alloc(T * h * e);
  dn_ = alloc(T * h * e);
  dao_ = alloc(T * a * e);
  dqkv_ = alloc(T * q * e);
  dgu_ = alloc(T * 2 * m * e);
  dact_ = alloc(T * m * e);
  dscores_ = alloc(sizes_.score_scratch * e);
  gprod_ = alloc(T * h * sizeof(float));
  norm_ws_ = alloc(kernels::bias_grad_workspace_floats(T, h) * sizeof(float));
  hash_ = alloc(2 * sizeof(unsigned long long));
}

// Weights: norm weights uniform in [0.5, 1.5], matrices uniform in +-sqrt(3 / fan-in); each
// segment piece the rank holds from its own seed (the layer, the segment, the tensor-parallel
// rank for the sliced matrices, and the piece's offset: data-parallel replicas and the
// tensor-parallel ranks' norm weights start equal). Padding stays zero.
void Replica::initialise(std::uint64_t data_seed) {
  cudaStream_t s = env_.stream;
  for (DeviceBuffer* b : {&master_, &adam_m_, &adam_v_, &grads_}) {
    MGBENCH_CUDA_CHECK(cudaMemsetAsync(b->get(), 0, b->bytes(), s));
  }
  for (DeviceBuffer& b : full_grads_) {
    if (b.get() != nullptr) MGBENCH_CUDA_CHECK(cudaMemsetAsync(b.get(), 0, b.bytes(), s));
  }
  const std::size_t begin =
      cfg_.strategy == Strategy::fsdp ? static_cast<std::size_t>(env_.rank) * sizes_.layer_params
                                      : 0;
  const std::size_t end = begin + sizes_.layer_params;
  for (int l = 0; l < cfg_.layers; ++l) {
    float* base = master_.as<float>() + static_cast<std::size_t>(l) * sizes_.layer_params;
    for (const SegmentPiece& piece : pieces_in(layout_, begin, end)) {
      const SegmentSlot& slot = layout_.at(piece.segment);
      const bool norm = piece.segment == Segment::attn_norm || piece.segment == Segment::mlp_norm;
      const double range = std::sqrt(3.0 / static_cast<double>(slot.fan_in()));
      // Norm weights are replicated over the tensor-parallel ranks: the same seed on each.
      const std::uint64_t slice = norm ? 0 : static_cast<std::uint64_t>(comms_.tp_rank());
      const std::uint64_t seed =
          mix64(kWeightSeed ^ (static_cast<std::uint64_t>(l) << 40) ^
                (static_cast<std::uint64_t>(piece.segment) << 32) ^ (slice << 24) ^ piece.begin);
      MGBENCH_CUDA_CHECK(kernels::fill_uniform(base + (piece.begin - begin),
                                               piece.end - piece.begin, DType::fp32, seed,
                                               norm ? 0.5 : -range, norm ? 1.5 : range, s));
    }
  }
  MGBENCH_CUDA_CHECK(kernels::launch_round_copy(master_.as<float>(), copy_.get(), dtype_,
                                                cfg_.layers * sizes_.layer_params, s));
  const std::size_t n = static_cast<std::size_t>(cfg_.local_tokens() * dims_.hidden);
  MGBENCH_CUDA_CHECK(kernels::fill_uniform(xs_.get(), n, dtype_, data_seed, -1.0, 1.0, s));
  MGBENCH_CUDA_CHECK(kernels::fill_uniform(t_.get(), n, dtype_, mix64(data_seed), -1.0, 1.0, s));
  MGBENCH_CUDA_CHECK(cudaStreamSynchronize(s));
}

Replica::Layer Replica::layer(int l) const {
  const std::size_t i = static_cast<std::size_t>(l), e = elem_;
  const std::size_t T = static_cast<std::size_t>(cfg_.local_tokens());
  const std::size_t h = static_cast<std::size_t>(dims_.hidden),
                    q = static_cast<std::size_t>(dims_.qkv_width()),
                    a = static_cast<std::size_t>(dims_.attn_width()),
                    m = static_cast<std::size_t>(dims_.mlp);
  float* rstd = rstd_.as<float>() + i * 2 * T;
  return Layer{xs_.as<char>() + i * T * h * e,        xs_.as<char>() + (i + 1) * T * h * e,
               n1_.as<char>() + i * T * h * e,        qkv_.as<char>() + i * T * q * e,
               probs_.as<char>() + i * sizes_.probs * e, ao_.as<char>() + i * T * a * e,
               h1_.as<char>() + i * T * h * e,        n2_.as<char>() + i * T * h * e,
               gu_.as<char>() + i * T * 2 * m * e,    act_.as<char>() + i * T * m * e,
               rstd,                                  rstd + T};
}

char* Replica::weights(int l) const {
  if (cfg_.strategy == Strategy::fsdp) return gathered_[l % 2].as<char>();
  return copy_.as<char>() + static_cast<std::size_t>(l) * sizes_.layer_params * elem_;
}

float* Replica::grad_target(int l) const {
  if (cfg_.strategy == Strategy::fsdp) return full_grads_[l % 2].as<float>();
  return grads_.as<float>() + static_cast<std::size_t>(l) * sizes_.layer_params;
}

const char* Replica::seg(const char* base, Segment s) const {
  return base + layout_.at(s).offset * elem_;
}
float* Replica::seg(float* base, Segment s) const { return base + layout_.at(s).offset; }

void Replica::enqueue_step(CommSet c) {
  comms_.reset_count();
  comm_pending_ = false;
  for (int micro = 0; micro < cfg_.accum; ++micro) {
    forward(c);
    const std::size_t n = static_cast<std::size_t>(cfg_.local_tokens() * dims_.hidden);
    MGBENCH_CUDA_CHECK(kernels::launch_mse_grad(layer(cfg_.layers - 1).next, t_.get(),
                                                d_a_.get(), dtype_, n, env_.stream));
    backward(c, micro);
  }
  join_comm();
  enqueue_optimizer();
}

void Replica::join_comm() {
  if (!comm_pending_) return;
  stream_wait(env_.stream, env_.comm_stream, joined_);
  comm_pending_ = false;
}

void Replica::enqueue_optimizer() {
  ++step_;
  kernels::AdamWStep a;
  a.bias1 = static_cast<float>(1.0 - std::pow(static_cast<double>(a.beta1), step_));
  a.bias2 = static_cast<float>(1.0 - std::pow(static_cast<double>(a.beta2), step_));
  a.grad_scale = static_cast<float>(
      1.0 / static_cast<double>(cfg_.batch * cfg_.seq * cfg_.accum * cfg_.gpus));
  MGBENCH_CUDA_CHECK(kernels::launch_adamw(master_.as<float>(), adam_m_.as<float>(),
                                           adam_v_.as<float>(), grads_.as<float>(), copy_.get(),
                                           dtype_, cfg_.layers * sizes_.layer_params, a,
                                           env_.stream));
}

void Replica::forward(CommSet c) {
  if (cfg_.strategy == Strategy::fsdp) prefetch(0, c);
  for (int l = 0; l < cfg_.layers; ++l) {
    if (cfg_.strategy == Strategy::fsdp && l + 1 < cfg_.layers) prefetch(l + 1, c);
    use_gathered(l, c);
    forward_layer(l, c);
    release_gathered(l);
  }
}

void Replica::forward_layer(int l, CommSet c) {
  cudaStream_t s = env_.stream;
  const Layer a = layer(l);
  const char* w = weights(l);
  const std::size_t T = static_cast<std::size_t>(cfg_.local_tokens()),
                    h = static_cast<std::size_t>(dims_.hidden),
                    m = static_cast<std::size_t>(dims_.mlp);
  // Tensor parallelism: every rank's projection is a partial sum; rank 0 adds the residual, so
  // that the all-reduce gives residual + the whole projection.
  const float residual = comms_.tp_rank() == 0 ? 1.0f : 0.0f;
  const bool tp = cfg_.tp > 1 && c.tp;
  MGBENCH_CUDA_CHECK(kernels::launch_rmsnorm(a.x, seg(w, Segment::attn_norm), a.n1, a.rstd1,
                                             dtype_, T, h, kEpsilon, s));
  gemms_->forward(Proj::qkv, seg(w, Segment::qkv), a.n1, nullptr, a.qkv, 0.0f, s);
  attention_->forward(a.qkv, a.probs, a.ao, s);
  gemms_->forward(Proj::out, seg(w, Segment::out), a.ao, a.x, a.h1, residual, s);
  if (tp) comms_.tp_allreduce(a.h1, T * h, dtype_, s);
  MGBENCH_CUDA_CHECK(kernels::launch_rmsnorm(a.h1, seg(w, Segment::mlp_norm), a.n2, a.rstd2,
                                             dtype_, T, h, kEpsilon, s));
  gemms_->forward(Proj::gate_up, seg(w, Segment::gate_up), a.n2, nullptr, a.gu, 0.0f, s);
  MGBENCH_CUDA_CHECK(kernels::launch_swiglu(a.gu, a.act, dtype_, T, m, s));
  gemms_->forward(Proj::down, seg(w, Segment::down), a.act, a.h1, a.next, residual, s);
  if (tp) comms_.tp_allreduce(a.next, T * h, dtype_, s);
}

void Replica::backward(CommSet c, int micro) {
  const bool fsdp = cfg_.strategy == Strategy::fsdp;
  if (fsdp) prefetch(cfg_.layers - 1, c);
  for (int l = cfg_.layers - 1; l >= 0; --l) {
    if (fsdp && l > 0) prefetch(l - 1, c);
    use_gathered(l, c);
    if (fsdp && comm_pending_) {
      // The reduce-scatter of layer l + 2 read this full-gradient buffer.
      MGBENCH_CUDA_CHECK(cudaStreamWaitEvent(env_.stream, grads_done_[l % 2].get(), 0));
    }
    backward_layer(l, c, /*accumulate=*/!fsdp && micro > 0);
    release_gathered(l);
    send_gradients(l, c, micro);
  }
  // Gradient all-reduce after the whole backward pass (overlap=false).
  const bool all_reduce = cfg_.strategy == Strategy::ddp || cfg_.strategy == Strategy::tp_dp;
  if (all_reduce && !cfg_.overlap && c.grads && micro == cfg_.accum - 1) {
    stream_wait(env_.comm_stream, env_.stream, ready_);
    for (int l = cfg_.layers - 1; l >= 0; --l) {
      comms_.dp_allreduce(grad_target(l), sizes_.layer_params, env_.comm_stream);
    }
    comm_pending_ = true;
  }
}

void Replica::backward_layer(int l, CommSet c, bool accumulate) {
  cudaStream_t s = env_.stream;
  const Layer a = layer(l);
  const char* w = weights(l);
  float* g = grad_target(l);
  const float beta = accumulate ? 1.0f : 0.0f;
  const std::size_t T = static_cast<std::size_t>(cfg_.local_tokens()),
                    h = static_cast<std::size_t>(dims_.hidden),
                    m = static_cast<std::size_t>(dims_.mlp);
  const bool tp = cfg_.tp > 1 && c.tp;
  char* dy = d_a_.as<char>();  // d of the layer's output; becomes d of its input
  char* dh1 = d_b_.as<char>();
  gemms_->wgrad(Proj::down, a.act, dy, seg(g, Segment::down), beta, s);
  gemms_->dgrad(Proj::down, seg(w, Segment::down), dy, dact_.get(), s);
  MGBENCH_CUDA_CHECK(
      kernels::launch_swiglu_backward(dact_.get(), a.gu, dgu_.get(), dtype_, T, m, s));
  gemms_->wgrad(Proj::gate_up, a.n2, dgu_.get(), seg(g, Segment::gate_up), beta, s);
  gemms_->dgrad(Proj::gate_up, seg(w, Segment::gate_up), dgu_.get(), dn_.get(), s);
  if (tp) comms_.tp_allreduce(dn_.get(), T * h, dtype_, s);
  norm_backward(a.h1, seg(w, Segment::mlp_norm), a.rstd2, dy, dh1, seg(g, Segment::mlp_norm),
                accumulate);
  gemms_->wgrad(Proj::out, a.ao, dh1, seg(g, Segment::out), beta, s);
  gemms_->dgrad(Proj::out, seg(w, Segment::out), dh1, dao_.get(), s);
  attention_->backward(a.qkv, a.probs, dao_.get(), dqkv_.get(), dscores_.get(), s);
  gemms_->wgrad(Proj::qkv, a.n1, dqkv_.get(), seg(g, Segment::qkv), beta, s);
  gemms_->dgrad(Proj::qkv, seg(w, Segment::qkv), dqkv_.get(), dn_.get(), s);
  if (tp) comms_.tp_allreduce(dn_.get(), T * h, dtype_, s);
  norm_backward(a.x, seg(w, Segment::attn_norm), a.rstd1, dh1, dy, seg(g, Segment::attn_norm),
                accumulate);
}

// RMSNorm backward of the norm-output gradient in dn_ (x its input, g its weight): dx = resid +
// the norm's input gradient (dx may be resid); dg (fp32) = or += the weight's gradient.
void Replica::norm_backward(const char* x, const char* g, const float* rstd, const char* resid,
                            char* dx, float* dg, bool accumulate) {
  const std::size_t T = static_cast<std::size_t>(cfg_.local_tokens()),
                    h = static_cast<std::size_t>(dims_.hidden);
  MGBENCH_CUDA_CHECK(kernels::launch_rmsnorm_backward(dn_.get(), x, g, rstd, resid, dx,
                                                      gprod_.as<float>(), dtype_, T, h,
                                                      env_.stream));
  MGBENCH_CUDA_CHECK(kernels::launch_bias_grad(gprod_.get(), DType::fp32, T, h, dg, accumulate,
                                               norm_ws_.as<float>(), env_.stream));
}

}  // namespace mgbench::bench::transformer
