#pragma once
// The cuBLASLt GEMMs of one transformer layer (internal to the transformer step): the four
// projections forward, input gradient and weight gradient, and the attention as strided-batched
// GEMMs around the causal softmax kernels.
//
// Why GEMM-based attention: it needs nothing beyond cuBLASLt (no FlashAttention build, no cuDNN
// dependency for its fused attention), its FLOPs are plain GEMMs that the gemm workload measures
// alone, and its memory traffic (the score matrices of every head, kept for the backward pass) is
// what an unfused implementation moves. The causal mask is applied by the softmax to full score
// matrices: no FLOP is skipped, which is what the attention term of the MFU formula counts.
//
// Row-major X[T, n] is column-major X^T (n x T, ld n); row-major W[out, in] is column-major
// W^T (in x out, ld in). Per projection (out, in):
//   forward  Y^T (out x T) = (W^T)^T X^T       op(A) = T on W, B = X
//   dgrad    dX^T (in x T) = W^T dY^T          A = W, B = dY
//   wgrad    dW^T (in x out) = X^T (dY^T)^T    A = X, op(B) = T on dY; fp32 output
// Attention of sequence b and q head h = g G + j (kv head g, G q heads per kv head), batched over
// g with j and b looped: Q, K, V are column-major hd x S slices of the qkv rows (ld qkv width),
// the scores column-major S_keys x S_queries (ld S: query i's scores contiguous):
//   scores = scale K^T Q;  out = V P;  dP = V^T dO;  dV (+)= dO P^T;  dQ = scale K dS;
//   dK (+)= scale Q dS^T  (dV and dK summed over the G q heads of their kv head).
#include <cuda_runtime_api.h>

#include <memory>

#include "training/lt_gemm.hpp"
#include "training/transformer_math.hpp"

namespace mgbench::bench::transformer {

enum class Proj { qkv, out, gate_up, down };

class LayerGemms {
 public:
  LayerGemms(const LtContext& lt, const StepConfig& cfg, std::uint32_t alignment);
  // y = x W^T + beta resid
  void forward(Proj p, const void* w, const void* x, const void* resid, void* y, float beta,
               cudaStream_t stream) const;
  // dx = dy W
  void dgrad(Proj p, const void* w, const void* dy, void* dx, cudaStream_t stream) const;
  // dw (fp32) = dy^T x + beta dw
  void wgrad(Proj p, const void* x, const void* dy, float* dw, float beta,
             cudaStream_t stream) const;

 private:
  std::unique_ptr<LtGemm> fwd_[4], dgrad_[4], wgrad_[4];
};

class AttentionGemms {
 public:
  AttentionGemms(const LtContext& lt, const StepConfig& cfg, std::uint32_t alignment);
  // qkv (T x qkv width) -> probs (sequences x q heads x S x S, kept), out (T x attention width).
  void forward(const void* qkv, void* probs, void* out, cudaStream_t stream) const;
  // d out -> dqkv, through `dscores` (kv heads x S x S of scratch).
  void backward(const void* qkv, const void* probs, const void* dout, void* dqkv,
                void* dscores, cudaStream_t stream) const;

 private:
  // Element offsets of sequence b's q head j (of each group), k, v and of its output rows.
  struct Offsets {
    std::size_t q, k, v, out, probs;
  };
  Offsets offsets(std::size_t b, std::size_t j) const;

  StepConfig cfg_;
  LocalDims dims_;
  std::size_t elem_;
  float scale_;
  std::unique_ptr<LtGemm> scores_, weighted_, dprobs_, dv_, dq_, dk_;
};

}  // namespace mgbench::bench::transformer
