#pragma once
// Element-wise kernels of the transformer training step
// (benchmarks/workloads/training/transformer_step.cpp): everything of a decoder layer that is not
// a GEMM. Every kernel computes in fp32; values are
// stored in `dtype` (fp32, bf16 or fp16) rounded to nearest; 1/rms, Adam's moments, master
// weights and gradients are fp32. Layouts are row-major (rows x cols, row stride cols).
// Launchers enqueue on `stream` and return the launch status; the caller checks it.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels {

// RMSNorm: y[r, c] = x[r, c] * rstd[r] * g[c], rstd[r] = 1 / sqrt(mean_c x[r, c]^2 + eps).
// x, g and y have type `dtype`; rstd is fp32 (kept for the backward pass).
cudaError_t launch_rmsnorm(const void* x, const void* g, void* y, float* rstd, DType dtype,
                           std::size_t rows, std::size_t cols, float eps, cudaStream_t stream);

// RMSNorm backward with the residual gradient added: with xhat = x * rstd,
//   dx[r, c] = resid[r, c] + rstd[r] (g[c] dy[r, c] - xhat[r, c] mean_c'(g dy xhat)[r]),
//   gprod[r, c] = dy[r, c] xhat[r, c] (fp32; summed over rows it is the gradient of g).
// dx may alias resid; dy, x, g, resid and dx have type `dtype`.
cudaError_t launch_rmsnorm_backward(const void* dy, const void* x, const void* g,
                                    const float* rstd, const void* resid, void* dx, float* gprod,
                                    DType dtype, std::size_t rows, std::size_t cols,
                                    cudaStream_t stream);

// Causal softmax in place over `mats` matrices of n x n scores (matrix m at s + m * n * n, row i
// at i * n): row i keeps columns j <= i, p[i, j] = exp(s[i, j] - max) / sum, and columns j > i
// become 0. The scores are already scaled (the GEMM's alpha).
cudaError_t launch_causal_softmax(void* s, DType dtype, std::size_t mats, std::size_t n,
                                  cudaStream_t stream);

// Its backward pass in place over d (the gradient of p): for j <= i,
//   d[i, j] = p[i, j] (d[i, j] - sum_{k <= i} p[i, k] d[i, k]), and 0 for j > i.
// Matrix m of p starts at p + m * p_stride, of d at d + m * d_stride (elements).
cudaError_t launch_causal_softmax_backward(const void* p, std::size_t p_stride, void* d,
                                           std::size_t d_stride, DType dtype, std::size_t mats,
                                           std::size_t n, cudaStream_t stream);

// Gated MLP activation (SwiGLU): row r of gu holds the gate g[0..cols) then the up part
// u[0..cols); act[r, c] = silu(g) u with silu(g) = g / (1 + exp(-g)).
cudaError_t launch_swiglu(const void* gu, void* act, DType dtype, std::size_t rows,
                          std::size_t cols, cudaStream_t stream);
// Its backward pass: dgu[r, c] = dact u silu'(g), dgu[r, cols + c] = dact silu(g), with
// silu'(g) = s (1 + g (1 - s)), s = 1 / (1 + exp(-g)).
cudaError_t launch_swiglu_backward(const void* dact, const void* gu, void* dgu, DType dtype,
                                   std::size_t rows, std::size_t cols, cudaStream_t stream);

// AdamW on fp32 master weights, with the gradient scaled by grad_scale first (g = scale grad):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//   w = w - lr (m / bias1 / (sqrt(v / bias2) + eps) + weight_decay w);  copy = round(w)
// bias1 = 1 - b1^t and bias2 = 1 - b2^t for step t (the caller's count). copy may be null.
struct AdamWStep {
  float lr = 1e-4f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
  float bias1 = 1.0f, bias2 = 1.0f, grad_scale = 1.0f;
};
cudaError_t launch_adamw(float* master, float* m, float* v, const float* grad, void* copy,
                         DType copy_dtype, std::size_t count, const AdamWStep& step,
                         cudaStream_t stream);

// dst[i] += src[i] (fp32).
cudaError_t launch_add_f32(float* dst, const float* src, std::size_t count, cudaStream_t stream);

}  // namespace mgbench::kernels
