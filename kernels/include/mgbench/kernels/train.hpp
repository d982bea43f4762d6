#pragma once
// Helper kernels of the data-parallel training step
// (benchmarks/workloads/training/train_step.cpp): everything of an MLP step that is not a GEMM.
//
// Element types are those of fill.hpp (fp32, bf16, fp16; tf32 steps store fp32). Activations
// and their gradients are stored in the compute type; every kernel computes in fp32.
// Gradients, momentum and master weights are always fp32.
//
// Layouts are row-major: a batch of activations is rows x cols with row stride cols.
// Launchers enqueue on `stream` and return the launch status; the caller checks it.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels {

enum class TrainActivation { identity, relu, gelu };  // gelu: the tanh approximation

// z[r, c] = round(z[r, c] + bias[c]) in place; a[r, c] = round(act(z[r, c])) when a is not
// null. z, bias and a have type `dtype` (fp32, bf16 or fp16).
cudaError_t launch_bias_act_forward(void* z, const void* bias, void* a, DType dtype,
                                    std::size_t rows, std::size_t cols, TrainActivation act,
                                    cudaStream_t stream);

// dz[i] = round(da[i] * act'(z[i])); dz may alias da.
cudaError_t launch_act_backward(const void* da, const void* z, void* dz, DType dtype,
                                std::size_t count, TrainActivation act, cudaStream_t stream);

// Gradient of the summed squared error 0.5 * sum (y - t)^2: dy[i] = round(y[i] - t[i]).
// dy may alias y.
cudaError_t launch_mse_grad(const void* y, const void* t, void* dy, DType dtype,
                            std::size_t count, cudaStream_t stream);

// Bias gradient: grad[c] (= or +=) sum over r of dz[r, c], accumulated in fp32 in a fixed
// order (deterministic). Two passes through `workspace` (fp32, at least
// bias_grad_workspace_floats(rows, cols) elements, device memory).
std::size_t bias_grad_workspace_floats(std::size_t rows, std::size_t cols);
cudaError_t launch_bias_grad(const void* dz, DType dtype, std::size_t rows, std::size_t cols,
                             float* grad, bool accumulate, float* workspace, cudaStream_t stream);

// SGD with momentum on fp32 master weights:
//   v = momentum * v + grad_scale * g;  w = w - lr * v;  copy = round(w) (copy may be null).
// `copy_dtype` is the type of `copy` (fp32, bf16 or fp16).
cudaError_t launch_sgd_momentum(float* master, float* velocity, const float* grad, void* copy,
                                DType copy_dtype, std::size_t count, float lr, float momentum,
                                float grad_scale, cudaStream_t stream);

// copy[i] = round(master[i]) into `dtype` (the initial 16-bit copy of the master weights).
cudaError_t launch_round_copy(const float* master, void* copy, DType dtype, std::size_t count,
                              cudaStream_t stream);

// An order-independent 64-bit hash of the bit patterns of w[0..count) (sum over i of
// mix(i, bits(w[i])) modulo 2^64) and the number of non-finite elements:
// out[0] = hash, out[1] = non-finite count. `out` is device memory of two elements; the
// launcher resets it first. Equal arrays give equal hashes on any GPU.
cudaError_t launch_weight_hash(const float* w, std::size_t count, unsigned long long* out,
                               cudaStream_t stream);

}  // namespace mgbench::kernels
