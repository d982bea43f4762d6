// Helper kernels of the training step (see train.hpp).
#include "mgbench/kernels/train.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "elementwise.cuh"

#include <algorithm>
#include <type_traits>

namespace mgbench::kernels {

namespace {

using detail::dispatch;
using detail::from_f32;
using detail::grid_for;
using detail::is_train_dtype;
using detail::kThreads;
using detail::to_f32;

// ---- activations (fp32 math) ---------------------------------------------------------------

constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluC = 0.044715f;

__device__ __forceinline__ float act_forward(float z, TrainActivation act) {
  switch (act) {
    case TrainActivation::relu: return z > 0.0f ? z : 0.0f;
    case TrainActivation::gelu: {
      const float t = tanhf(kGeluK * (z + kGeluC * z * z * z));
      return 0.5f * z * (1.0f + t);
    }
    case TrainActivation::identity: break;
  }
  return z;
}

__device__ __forceinline__ float act_derivative(float z, TrainActivation act) {
  switch (act) {
    case TrainActivation::relu: return z > 0.0f ? 1.0f : 0.0f;
    case TrainActivation::gelu: {
      const float t = tanhf(kGeluK * (z + kGeluC * z * z * z));
      const float dt = kGeluK * (1.0f + 3.0f * kGeluC * z * z);
      return 0.5f * (1.0f + t) + 0.5f * z * (1.0f - t * t) * dt;
    }
    case TrainActivation::identity: break;
  }
  return 1.0f;
}

// ---- kernels -------------------------------------------------------------------------------

// 2-D launch: x over columns, y over rows (grid-strided), so no division per element.
template <typename T>
__global__ void bias_act_forward_kernel(T* __restrict__ z, const T* __restrict__ bias,
                                        T* __restrict__ a, std::size_t rows, std::size_t cols,
                                        TrainActivation act) {
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  const float b = to_f32(bias[c]);
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const std::size_t i = r * cols + c;
    const T zr = from_f32<T>(to_f32(z[i]) + b);
    z[i] = zr;
    if (a != nullptr) a[i] = from_f32<T>(act_forward(to_f32(zr), act));
  }
}

template <typename T>
__global__ void act_backward_kernel(const T* da, const T* __restrict__ z, T* dz,
                                    std::size_t count, TrainActivation act) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dz[i] = from_f32<T>(to_f32(da[i]) * act_derivative(to_f32(z[i]), act));
  }
}

template <typename T>
__global__ void mse_grad_kernel(const T* y, const T* __restrict__ t, T* dy, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dy[i] = from_f32<T>(to_f32(y[i]) - to_f32(t[i]));
  }
}

// Bias gradient, pass 1: block (32 columns x kBgRows row lanes) sums the rows of one chunk;
// partial[chunk * cols + c]. Fixed summation order: deterministic.
constexpr int kBgCols = 32;
constexpr int kBgRows = 8;
constexpr std::size_t kBgRowsPerChunk = 256;
constexpr std::size_t kBgMaxChunks = 64;

std::size_t bias_grad_chunks(std::size_t rows) {
  const std::size_t chunks = (rows + kBgRowsPerChunk - 1) / kBgRowsPerChunk;
  return std::min(std::max<std::size_t>(chunks, 1), kBgMaxChunks);
}

template <typename T>
__global__ void bias_grad_partial_kernel(const T* __restrict__ dz, std::size_t rows,
                                         std::size_t cols, std::size_t rows_per_chunk,
                                         float* __restrict__ partial) {
  __shared__ float sums[kBgRows][kBgCols + 1];
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * kBgCols + threadIdx.x;
  const std::size_t begin = static_cast<std::size_t>(blockIdx.y) * rows_per_chunk;
  const std::size_t end = std::min(rows, begin + rows_per_chunk);
  float s = 0.0f;
  if (c < cols) {
    for (std::size_t r = begin + threadIdx.y; r < end; r += kBgRows) s += to_f32(dz[r * cols + c]);
  }
  sums[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.0f;
    for (int k = 0; k < kBgRows; ++k) total += sums[k][threadIdx.x];
    partial[static_cast<std::size_t>(blockIdx.y) * cols + c] = total;
  }
}

// Pass 2: grad[c] (= or +=) sum over chunks, in chunk order.
__global__ void bias_grad_final_kernel(const float* __restrict__ partial, std::size_t chunks,
                                       std::size_t cols, float* __restrict__ grad,
                                       bool accumulate) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += stride) {
    float total = 0.0f;
    for (std::size_t k = 0; k < chunks; ++k) total += partial[k * cols + c];
    grad[c] = accumulate ? grad[c] + total : total;
  }
}

template <typename T>
__device__ __forceinline__ void sgd_one(float* master, float* velocity, const float* grad, T* copy,
                                        std::size_t i, float lr, float momentum, float scale) {
  const float v = fmaf(momentum, velocity[i], scale * grad[i]);
  const float w = fmaf(-lr, v, master[i]);
  velocity[i] = v;
  master[i] = w;
  if (copy != nullptr) copy[i] = from_f32<T>(w);
}

template <typename T>
__global__ void sgd_momentum_kernel(float* __restrict__ master, float* __restrict__ velocity,
                                    const float* __restrict__ grad, T* __restrict__ copy,
                                    std::size_t count, float lr, float momentum, float scale) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Vector path: 4 elements per iteration when the fp32 arrays are 16-byte aligned (buffers
  // come from cudaMalloc and the caller passes whole buffers); the copy is written per element.
  const bool aligned = (reinterpret_cast<std::uintptr_t>(master) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(velocity) % 16 == 0) &&
                       (reinterpret_cast<std::uintptr_t>(grad) % 16 == 0);
  std::size_t done = 0;
  if (aligned) {
    const std::size_t quads = count / 4;
    for (std::size_t q = tid; q < quads; q += stride) {
      const float4 g = reinterpret_cast<const float4*>(grad)[q];
      float4 v = reinterpret_cast<float4*>(velocity)[q];
      float4 w = reinterpret_cast<float4*>(master)[q];
      v.x = fmaf(momentum, v.x, scale * g.x);
      v.y = fmaf(momentum, v.y, scale * g.y);
      v.z = fmaf(momentum, v.z, scale * g.z);
      v.w = fmaf(momentum, v.w, scale * g.w);
      w.x = fmaf(-lr, v.x, w.x);
      w.y = fmaf(-lr, v.y, w.y);
      w.z = fmaf(-lr, v.z, w.z);
      w.w = fmaf(-lr, v.w, w.w);
      reinterpret_cast<float4*>(velocity)[q] = v;
      reinterpret_cast<float4*>(master)[q] = w;
      if (copy != nullptr) {
        T* out = copy + 4 * q;
        out[0] = from_f32<T>(w.x);
        out[1] = from_f32<T>(w.y);
        out[2] = from_f32<T>(w.z);
        out[3] = from_f32<T>(w.w);
      }
    }
    done = quads * 4;
  }
  for (std::size_t i = done + tid; i < count; i += stride) {
    sgd_one(master, velocity, grad, copy, i, lr, momentum, scale);
  }
}

template <typename T>
__global__ void round_copy_kernel(const float* __restrict__ master, T* __restrict__ copy,
                                  std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    copy[i] = from_f32<T>(master[i]);
  }
}

__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__global__ void weight_hash_kernel(const float* __restrict__ w, std::size_t count,
                                   unsigned long long* __restrict__ out) {
  unsigned long long hash = 0, bad = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float v = w[i];
    const unsigned bits = __float_as_uint(v);
    hash += mix64((static_cast<unsigned long long>(i) << 32) ^ bits);
    if (!isfinite(v)) ++bad;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    hash += __shfl_down_sync(0xffffffffu, hash, offset);
    bad += __shfl_down_sync(0xffffffffu, bad, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out[0], hash);  // addition modulo 2^64 commutes: the order does not matter
    if (bad != 0) atomicAdd(&out[1], bad);
  }
}

}  // namespace

cudaError_t launch_bias_act_forward(void* z, const void* bias, void* a, DType dtype,
                                    std::size_t rows, std::size_t cols, TrainActivation act,
                                    cudaStream_t stream) {
  if (!is_train_dtype(dtype) || z == nullptr || bias == nullptr) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const unsigned threads = 128;
  const std::size_t col_blocks = (cols + threads - 1) / threads;
  if (col_blocks > 0x7fffffffULL) return cudaErrorInvalidValue;
  // Enough row blocks to fill the GPU; each thread walks rows with stride gridDim.y.
  const std::size_t want = std::max<std::size_t>(1, 2048 / col_blocks);
  const unsigned row_blocks = static_cast<unsigned>(std::min<std::size_t>({rows, want, 65535}));
  const dim3 grid(static_cast<unsigned>(col_blocks), row_blocks);
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    bias_act_forward_kernel<T><<<grid, threads, 0, stream>>>(
        static_cast<T*>(z), static_cast<const T*>(bias), static_cast<T*>(a), rows, cols, act);
  });
}

cudaError_t launch_act_backward(const void* da, const void* z, void* dz, DType dtype,
                                std::size_t count, TrainActivation act, cudaStream_t stream) {
  if (!is_train_dtype(dtype)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    act_backward_kernel<T><<<grid_for(count, 4), kThreads, 0, stream>>>(
        static_cast<const T*>(da), static_cast<const T*>(z), static_cast<T*>(dz), count, act);
  });
}

cudaError_t launch_mse_grad(const void* y, const void* t, void* dy, DType dtype,
                            std::size_t count, cudaStream_t stream) {
  if (!is_train_dtype(dtype)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    mse_grad_kernel<T><<<grid_for(count, 4), kThreads, 0, stream>>>(
        static_cast<const T*>(y), static_cast<const T*>(t), static_cast<T*>(dy), count);
  });
}

std::size_t bias_grad_workspace_floats(std::size_t rows, std::size_t cols) {
  return bias_grad_chunks(rows) * cols;
}

cudaError_t launch_bias_grad(const void* dz, DType dtype, std::size_t rows, std::size_t cols,
                             float* grad, bool accumulate, float* workspace,
                             cudaStream_t stream) {
  if (!is_train_dtype(dtype) || grad == nullptr || workspace == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (cols == 0) return cudaSuccess;
  const std::size_t chunks = bias_grad_chunks(rows);
  const std::size_t rows_per_chunk = rows == 0 ? 1 : (rows + chunks - 1) / chunks;
  const std::size_t col_blocks = (cols + kBgCols - 1) / kBgCols;
  if (col_blocks > 0x7fffffffULL) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks));
  const dim3 block(kBgCols, kBgRows);
  const cudaError_t first = dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    bias_grad_partial_kernel<T><<<grid, block, 0, stream>>>(static_cast<const T*>(dz), rows, cols,
                                                            rows_per_chunk, workspace);
  });
  if (first != cudaSuccess) return first;
  bias_grad_final_kernel<<<grid_for(cols), kThreads, 0, stream>>>(workspace, chunks, cols, grad,
                                                                  accumulate);
  return cudaGetLastError();
}

cudaError_t launch_sgd_momentum(float* master, float* velocity, const float* grad, void* copy,
                                DType copy_dtype, std::size_t count, float lr, float momentum,
                                float grad_scale, cudaStream_t stream) {
  if (!is_train_dtype(copy_dtype) || master == nullptr || velocity == nullptr || grad == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (count == 0) return cudaSuccess;
  return dispatch(copy_dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    sgd_momentum_kernel<T><<<grid_for(count, 4), kThreads, 0, stream>>>(
        master, velocity, grad, static_cast<T*>(copy), count, lr, momentum, grad_scale);
  });
}

cudaError_t launch_round_copy(const float* master, void* copy, DType dtype, std::size_t count,
                              cudaStream_t stream) {
  if (!is_train_dtype(dtype) || master == nullptr || copy == nullptr) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    round_copy_kernel<T><<<grid_for(count, 4), kThreads, 0, stream>>>(master, static_cast<T*>(copy),
                                                                      count);
  });
}

cudaError_t launch_weight_hash(const float* w, std::size_t count, unsigned long long* out,
                               cudaStream_t stream) {
  if (w == nullptr || out == nullptr) return cudaErrorInvalidValue;
  const cudaError_t reset = cudaMemsetAsync(out, 0, 2 * sizeof(unsigned long long), stream);
  if (reset != cudaSuccess) return reset;
  if (count == 0) return cudaSuccess;
  weight_hash_kernel<<<grid_for(count, 8), kThreads, 0, stream>>>(w, count, out);
  return cudaGetLastError();
}

}  // namespace mgbench::kernels
