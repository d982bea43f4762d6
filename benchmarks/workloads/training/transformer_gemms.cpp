// The cuBLASLt GEMMs of one transformer layer (see transformer_gemms.hpp).
#include "training/transformer_gemms.hpp"

#include <cmath>

#include "mgbench/bench/cublaslt.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/kernels/transformer.hpp"

namespace mgbench::bench::transformer {

namespace {

struct ProjDims {
  std::int64_t out, in;
};

ProjDims proj_dims(const LocalDims& d, Proj p) {
  switch (p) {
    case Proj::qkv: return {d.qkv_width(), d.hidden};
    case Proj::out: return {d.hidden, d.attn_width()};
    case Proj::gate_up: return {2 * d.mlp, d.hidden};
    case Proj::down: return {d.hidden, d.mlp};
  }
  return {0, 0};
}

const char* proj_name(Proj p) {
  switch (p) {
    case Proj::qkv: return "QKV";
    case Proj::out: return "output projection";
    case Proj::gate_up: return "gate/up";
    case Proj::down: return "down projection";
  }
  return "?";
}

GemmShape base_shape(const StepConfig& cfg, std::uint32_t alignment) {
  GemmShape s;
  s.ab_type = s.c_type = cuda_data_type(cfg.precision);
  s.compute = CUBLAS_COMPUTE_32F;
  s.alignment = alignment;
  return s;
}

// One strided-batched attention GEMM over the kv heads.
GemmShape attention_shape(const StepConfig& cfg, std::uint32_t alignment, cublasOperation_t ta,
                          cublasOperation_t tb, std::int64_t m, std::int64_t n, std::int64_t k,
                          std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                          std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c) {
  GemmShape s = base_shape(cfg, alignment);
  s.trans_a = ta;
  s.trans_b = tb;
  s.m = m;
  s.n = n;
  s.k = k;
  s.lda = lda;
  s.ldb = ldb;
  s.ldc = ldc;
  s.batch = static_cast<std::int32_t>(local_dims(cfg.shape, cfg.tp).kv_heads);
  s.stride_a = stride_a;
  s.stride_b = stride_b;
  s.stride_c = stride_c;
  return s;
}

}  // namespace

LayerGemms::LayerGemms(const LtContext& lt, const StepConfig& cfg, std::uint32_t alignment) {
  const LocalDims d = local_dims(cfg.shape, cfg.tp);
  const std::int64_t T = cfg.local_tokens();
  for (const Proj p : {Proj::qkv, Proj::out, Proj::gate_up, Proj::down}) {
    const ProjDims pd = proj_dims(d, p);
    const auto i = static_cast<int>(p);
    GemmShape f = base_shape(cfg, alignment);
    f.trans_a = CUBLAS_OP_T;
    f.m = pd.out, f.n = T, f.k = pd.in, f.lda = pd.in, f.ldb = pd.in, f.ldc = pd.out;
    fwd_[i] = std::make_unique<LtGemm>(lt, f, proj_name(p));
    GemmShape g = base_shape(cfg, alignment);
    g.m = pd.in, g.n = T, g.k = pd.out, g.lda = pd.in, g.ldb = pd.out, g.ldc = pd.in;
    dgrad_[i] = std::make_unique<LtGemm>(lt, g, proj_name(p));
    GemmShape w = base_shape(cfg, alignment);
    w.trans_b = CUBLAS_OP_T;
    w.c_type = CUDA_R_32F;
    w.m = pd.in, w.n = pd.out, w.k = T, w.lda = pd.in, w.ldb = pd.out, w.ldc = pd.in;
    wgrad_[i] = std::make_unique<LtGemm>(lt, w, proj_name(p));
  }
}

void LayerGemms::forward(Proj p, const void* w, const void* x, const void* resid, void* y,
                         float beta, cudaStream_t stream) const {
  fwd_[static_cast<int>(p)]->run(w, x, resid != nullptr ? resid : y, y, 1.0f, beta, stream);
}

void LayerGemms::dgrad(Proj p, const void* w, const void* dy, void* dx,
                       cudaStream_t stream) const {
  dgrad_[static_cast<int>(p)]->run(w, dy, dx, dx, 1.0f, 0.0f, stream);
}

void LayerGemms::wgrad(Proj p, const void* x, const void* dy, float* dw, float beta,
                       cudaStream_t stream) const {
  wgrad_[static_cast<int>(p)]->run(x, dy, dw, dw, 1.0f, beta, stream);
}

AttentionGemms::AttentionGemms(const LtContext& lt, const StepConfig& cfg,
                               std::uint32_t alignment)
    : cfg_(cfg), dims_(local_dims(cfg.shape, cfg.tp)),
      elem_(kernels::dtype_size(cfg.precision)),
      scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(dims_.head_dim)))) {
  const std::int64_t S = cfg.seq, hd = dims_.head_dim, G = dims_.group();
  const std::int64_t qw = dims_.qkv_width(), aw = dims_.attn_width();
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  const auto make = [&](const GemmShape& s, const char* what) {
    return std::make_unique<LtGemm>(lt, s, what);
  };
  // scores (S x S) = K^T Q: A = K (hd x S), B = Q (hd x S); C = probs (ld S)
  scores_ = make(
      attention_shape(cfg, alignment, T, N, S, S, hd, qw, qw, S, hd, G * hd, G * S * S),
      "attention scores");
  // out (hd x S) = V P: A = V, B = probs; C = out (ld attention width)
  weighted_ = make(
      attention_shape(cfg, alignment, N, N, hd, S, S, qw, S, aw, hd, G * S * S, G * hd),
      "attention-weighted values");
  // dP (S x S) = V^T dO: A = V, B = dout; C = dscores (contiguous per kv head)
  dprobs_ = make(attention_shape(cfg, alignment, T, N, S, S, hd, qw, aw, S, hd, G * hd, S * S),
                 "attention probability gradient");
  // dV (hd x S) (+)= dO P^T: A = dout, B = probs; C = dqkv's v (ld qkv width)
  dv_ = make(attention_shape(cfg, alignment, N, T, hd, S, S, aw, S, qw, G * hd, G * S * S, hd),
             "attention value gradient");
  // dQ (hd x S) = scale K dS: A = K, B = dscores; C = dqkv's q
  dq_ = make(attention_shape(cfg, alignment, N, N, hd, S, S, qw, S, qw, hd, S * S, G * hd),
             "attention query gradient");
  // dK (hd x S) (+)= scale Q dS^T: A = Q, B = dscores; C = dqkv's k
  dk_ = make(attention_shape(cfg, alignment, N, T, hd, S, S, qw, S, qw, G * hd, S * S, hd),
             "attention key gradient");
}

AttentionGemms::Offsets AttentionGemms::offsets(std::size_t b, std::size_t j) const {
  const auto S = static_cast<std::size_t>(cfg_.seq), hd = static_cast<std::size_t>(dims_.head_dim);
  const auto qw = static_cast<std::size_t>(dims_.qkv_width()),
             aw = static_cast<std::size_t>(dims_.attn_width()),
             nq = static_cast<std::size_t>(dims_.q_heads),
             nkv = static_cast<std::size_t>(dims_.kv_heads);
  const std::size_t row = b * S * qw;
  return {row + j * hd, row + nq * hd, row + (nq + nkv) * hd, b * S * aw + j * hd,
          (b * nq + j) * S * S};
}

void AttentionGemms::forward(const void* qkv, void* probs, void* out,
                             cudaStream_t stream) const {
  const auto* in = static_cast<const char*>(qkv);
  auto* p = static_cast<char*>(probs);
  auto* o = static_cast<char*>(out);
  const auto B = static_cast<std::size_t>(cfg_.local_sequences()),
             G = static_cast<std::size_t>(dims_.group());
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t j = 0; j < G; ++j) {
      const Offsets at = offsets(b, j);
      scores_->run(in + at.k * elem_, in + at.q * elem_, p + at.probs * elem_,
                   p + at.probs * elem_, scale_, 0.0f, stream);
    }
  }
  MGBENCH_CUDA_CHECK(kernels::launch_causal_softmax(
      probs, cfg_.precision, B * static_cast<std::size_t>(dims_.q_heads),
      static_cast<std::size_t>(cfg_.seq), stream));
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t j = 0; j < G; ++j) {
      const Offsets at = offsets(b, j);
      weighted_->run(in + at.v * elem_, p + at.probs * elem_, o + at.out * elem_,
                     o + at.out * elem_, 1.0f, 0.0f, stream);
    }
  }
}

void AttentionGemms::backward(const void* qkv, const void* probs, const void* dout, void* dqkv,
                              void* dscores, cudaStream_t stream) const {
  const auto* in = static_cast<const char*>(qkv);
  const auto* p = static_cast<const char*>(probs);
  const auto* d_o = static_cast<const char*>(dout);
  auto* dq = static_cast<char*>(dqkv);
  const auto B = static_cast<std::size_t>(cfg_.local_sequences()),
             G = static_cast<std::size_t>(dims_.group()),
             S = static_cast<std::size_t>(cfg_.seq);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t j = 0; j < G; ++j) {
      const Offsets at = offsets(b, j);
      const float sum = j > 0 ? 1.0f : 0.0f;  // dV and dK add up the group's q heads
      dprobs_->run(in + at.v * elem_, d_o + at.out * elem_, dscores, dscores, 1.0f, 0.0f, stream);
      dv_->run(d_o + at.out * elem_, p + at.probs * elem_, dq + at.v * elem_, dq + at.v * elem_,
               1.0f, sum, stream);
      MGBENCH_CUDA_CHECK(kernels::launch_causal_softmax_backward(
          p + at.probs * elem_, G * S * S, dscores, S * S, cfg_.precision,
          static_cast<std::size_t>(dims_.kv_heads), S, stream));
      dq_->run(in + at.k * elem_, dscores, dq + at.q * elem_, dq + at.q * elem_, scale_, 0.0f,
               stream);
      dk_->run(in + at.q * elem_, dscores, dq + at.k * elem_, dq + at.k * elem_, scale_, sum,
               stream);
    }
  }
}

}  // namespace mgbench::bench::transformer
