// Element-wise kernels of the transformer training step (see transformer.hpp).
//
// Row kernels (norms, softmax) give one warp to a row; a row is read as 16-byte vectors of VEC
// elements when its length and start allow it (VEC = 16 / element size), else element by element.
#include "mgbench/kernels/transformer.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "elementwise.cuh"

namespace mgbench::kernels {

namespace {

using detail::dispatch;
using detail::from_f32;
using detail::grid_for;
using detail::is_train_dtype;
using detail::kThreads;
using detail::to_f32;

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = kThreads / kWarp;  // one warp per row

// VEC consecutive elements as one 16-byte access (VEC = 16 / sizeof(T)), or one element.
template <typename T, int VEC>
struct Chunk {
  T v[VEC];
  __device__ __forceinline__ void load(const T* p) {
    if constexpr (VEC == 1) {
      v[0] = *p;
    } else {
      static_assert(VEC * sizeof(T) == 16, "16-byte chunks");
      *reinterpret_cast<uint4*>(v) = *reinterpret_cast<const uint4*>(p);
    }
  }
  __device__ __forceinline__ void store(T* p) const {
    if constexpr (VEC == 1) {
      *p = v[0];
    } else {
      *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(v);
    }
  }
};

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}

__device__ __forceinline__ std::size_t warp_row() {
  return (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
}

unsigned row_blocks(std::size_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

// Whether rows of `n` elements of `size` bytes starting at `p` (and at p + every stride) can be
// read as 16-byte chunks.
bool vector_ok(const void* p, std::size_t n, std::size_t size, std::size_t stride = 0) {
  const std::size_t vec = 16 / size;
  return size < 16 && n % vec == 0 && stride % vec == 0 &&
         reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// ---- RMSNorm ---------------------------------------------------------------------------------

template <typename T, int VEC>
__global__ void rmsnorm_kernel(const T* __restrict__ x, const T* __restrict__ g,
                               T* __restrict__ y, float* __restrict__ rstd, std::size_t rows,
                               std::size_t cols, float eps) {
  const std::size_t row = warp_row();
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const T* xr = x + row * cols;
  float ss = 0.0f;
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < cols; c += kWarp * VEC) {
    Chunk<T, VEC> a;
    a.load(xr + c);
    for (int k = 0; k < VEC; ++k) ss += to_f32(a.v[k]) * to_f32(a.v[k]);
  }
  const float r = rsqrtf(warp_sum(ss) / static_cast<float>(cols) + eps);
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < cols; c += kWarp * VEC) {
    Chunk<T, VEC> a, w, out;
    a.load(xr + c);
    w.load(g + c);
    for (int k = 0; k < VEC; ++k) out.v[k] = from_f32<T>(to_f32(a.v[k]) * r * to_f32(w.v[k]));
    out.store(y + row * cols + c);
  }
  if (lane == 0) rstd[row] = r;
}

template <typename T, int VEC>
__global__ void rmsnorm_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                        const T* __restrict__ g, const float* __restrict__ rstd,
                                        const T* resid, T* dx, float* __restrict__ gprod,
                                        std::size_t rows, std::size_t cols) {
  const std::size_t row = warp_row();
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::size_t base = row * cols;
  const float r = rstd[row];
  float dot = 0.0f;
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < cols; c += kWarp * VEC) {
    Chunk<T, VEC> d, a, w;
    d.load(dy + base + c);
    a.load(x + base + c);
    w.load(g + c);
    for (int k = 0; k < VEC; ++k) dot += to_f32(w.v[k]) * to_f32(d.v[k]) * to_f32(a.v[k]) * r;
  }
  dot = warp_sum(dot) / static_cast<float>(cols);
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < cols; c += kWarp * VEC) {
    Chunk<T, VEC> d, a, w, res, out;
    d.load(dy + base + c);
    a.load(x + base + c);
    w.load(g + c);
    res.load(resid + base + c);
    for (int k = 0; k < VEC; ++k) {
      const float xhat = to_f32(a.v[k]) * r, dyk = to_f32(d.v[k]);
      gprod[base + c + static_cast<std::size_t>(k)] = dyk * xhat;
      out.v[k] = from_f32<T>(to_f32(res.v[k]) + r * (to_f32(w.v[k]) * dyk - xhat * dot));
    }
    out.store(dx + base + c);
  }
}

// ---- causal softmax --------------------------------------------------------------------------

// Online maximum and sum of exponentials of one lane, merged across the warp.
struct MaxSum {
  float max = -INFINITY, sum = 0.0f;
  __device__ __forceinline__ void add(float v) {
    if (v > max) {
      sum = sum * __expf(max - v) + 1.0f;
      max = v;
    } else {
      sum += __expf(v - max);
    }
  }
  __device__ __forceinline__ void merge_warp() {
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      const float m2 = __shfl_xor_sync(0xffffffffu, max, offset);
      const float s2 = __shfl_xor_sync(0xffffffffu, sum, offset);
      const float m = fmaxf(max, m2);
      const float a = max == -INFINITY ? 0.0f : sum * __expf(max - m);
      const float b = m2 == -INFINITY ? 0.0f : s2 * __expf(m2 - m);
      max = m;
      sum = a + b;
    }
  }
};

template <typename T, int VEC>
__global__ void causal_softmax_kernel(T* s, std::size_t rows, std::size_t n) {
  const std::size_t row = warp_row();
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::size_t valid = row % n + 1;  // row i keeps columns 0..i
  T* p = s + row * n;
  MaxSum ms;
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < valid; c += kWarp * VEC) {
    Chunk<T, VEC> a;
    a.load(p + c);
    for (int k = 0; k < VEC; ++k) {
      if (c + static_cast<std::size_t>(k) < valid) ms.add(to_f32(a.v[k]));
    }
  }
  ms.merge_warp();
  const float inv = 1.0f / ms.sum;
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < n; c += kWarp * VEC) {
    Chunk<T, VEC> a, out;
    if (c < valid) a.load(p + c);
    for (int k = 0; k < VEC; ++k) {
      const bool keep = c + static_cast<std::size_t>(k) < valid;
      out.v[k] = from_f32<T>(keep ? __expf(to_f32(a.v[k]) - ms.max) * inv : 0.0f);
    }
    out.store(p + c);
  }
}

template <typename T, int VEC>
__global__ void causal_softmax_backward_kernel(const T* __restrict__ p, std::size_t p_stride,
                                               T* __restrict__ d, std::size_t d_stride,
                                               std::size_t rows, std::size_t n) {
  const std::size_t row = warp_row();
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const std::size_t mat = row / n, i = row % n, valid = i + 1;
  const T* pr = p + mat * p_stride + i * n;
  T* dr = d + mat * d_stride + i * n;
  float dot = 0.0f;
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < valid; c += kWarp * VEC) {
    Chunk<T, VEC> a, b;
    a.load(pr + c);
    b.load(dr + c);
    for (int k = 0; k < VEC; ++k) {
      if (c + static_cast<std::size_t>(k) < valid) dot += to_f32(a.v[k]) * to_f32(b.v[k]);
    }
  }
  dot = warp_sum(dot);
  for (std::size_t c = static_cast<std::size_t>(lane) * VEC; c < n; c += kWarp * VEC) {
    Chunk<T, VEC> a, b, out;
    if (c < valid) {
      a.load(pr + c);
      b.load(dr + c);
    }
    for (int k = 0; k < VEC; ++k) {
      const bool keep = c + static_cast<std::size_t>(k) < valid;
      out.v[k] = from_f32<T>(keep ? to_f32(a.v[k]) * (to_f32(b.v[k]) - dot) : 0.0f);
    }
    out.store(dr + c);
  }
}

// ---- SwiGLU ----------------------------------------------------------------------------------

__device__ __forceinline__ float sigmoid(float g) { return 1.0f / (1.0f + __expf(-g)); }

// 2-D launch: x over columns, y over rows (grid-strided), so no division per element.
template <typename T>
__global__ void swiglu_kernel(const T* __restrict__ gu, T* __restrict__ act, std::size_t rows,
                              std::size_t cols) {
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float g = to_f32(gu[r * 2 * cols + c]), u = to_f32(gu[r * 2 * cols + cols + c]);
    act[r * cols + c] = from_f32<T>(g * sigmoid(g) * u);
  }
}

template <typename T>
__global__ void swiglu_backward_kernel(const T* __restrict__ dact, const T* __restrict__ gu,
                                       T* __restrict__ dgu, std::size_t rows, std::size_t cols) {
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const float g = to_f32(gu[r * 2 * cols + c]), u = to_f32(gu[r * 2 * cols + cols + c]);
    const float s = sigmoid(g), da = to_f32(dact[r * cols + c]);
    dgu[r * 2 * cols + c] = from_f32<T>(da * u * s * (1.0f + g * (1.0f - s)));
    dgu[r * 2 * cols + cols + c] = from_f32<T>(da * g * s);
  }
}

dim3 column_grid(std::size_t rows, std::size_t cols, unsigned threads) {
  const std::size_t col_blocks = (cols + threads - 1) / threads;
  const std::size_t want = std::max<std::size_t>(1, 2048 / col_blocks);
  return dim3(static_cast<unsigned>(col_blocks),
              static_cast<unsigned>(std::min<std::size_t>({rows, want, 65535})));
}

// ---- optimizer -------------------------------------------------------------------------------

template <typename T>
__global__ void adamw_kernel(float* __restrict__ w, float* __restrict__ m, float* __restrict__ v,
                             const float* __restrict__ grad, T* __restrict__ copy,
                             std::size_t count, AdamWStep s) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float g = s.grad_scale * grad[i];
    const float mi = fmaf(s.beta1, m[i], (1.0f - s.beta1) * g);
    const float vi = fmaf(s.beta2, v[i], (1.0f - s.beta2) * g * g);
    const float update = (mi / s.bias1) / (sqrtf(vi / s.bias2) + s.eps) + s.weight_decay * w[i];
    const float wi = fmaf(-s.lr, update, w[i]);
    m[i] = mi;
    v[i] = vi;
    w[i] = wi;
    if (copy != nullptr) copy[i] = from_f32<T>(wi);
  }
}

__global__ void add_f32_kernel(float* __restrict__ dst, const float* __restrict__ src,
                               std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dst[i] += src[i];
  }
}

// Launches kernel<T, VEC> with VEC = 16 / sizeof(T) when `vector` holds, else VEC = 1.
#define MGBENCH_ROW_LAUNCH(kernel, vector, rows, ...)                                  \
  do {                                                                                 \
    constexpr int kVec = static_cast<int>(16 / sizeof(T));                             \
    if (vector) {                                                                      \
      kernel<T, kVec><<<row_blocks(rows), kThreads, 0, stream>>>(__VA_ARGS__);         \
    } else {                                                                           \
      kernel<T, 1><<<row_blocks(rows), kThreads, 0, stream>>>(__VA_ARGS__);            \
    }                                                                                  \
  } while (0)

}  // namespace

cudaError_t launch_rmsnorm(const void* x, const void* g, void* y, float* rstd, DType dtype,
                           std::size_t rows, std::size_t cols, float eps, cudaStream_t stream) {
  if (!is_train_dtype(dtype) || x == nullptr || g == nullptr || y == nullptr || rstd == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  const std::size_t size = dtype_size(dtype);
  const bool vec = vector_ok(x, cols, size) && vector_ok(g, cols, size) && vector_ok(y, cols, size);
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    MGBENCH_ROW_LAUNCH(rmsnorm_kernel, vec, rows, static_cast<const T*>(x),
                       static_cast<const T*>(g), static_cast<T*>(y), rstd, rows, cols, eps);
  });
}

cudaError_t launch_rmsnorm_backward(const void* dy, const void* x, const void* g,
                                    const float* rstd, const void* resid, void* dx, float* gprod,
                                    DType dtype, std::size_t rows, std::size_t cols,
                                    cudaStream_t stream) {
  if (!is_train_dtype(dtype) || dy == nullptr || x == nullptr || g == nullptr ||
      rstd == nullptr || resid == nullptr || dx == nullptr || gprod == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  const std::size_t size = dtype_size(dtype);
  const bool vec = vector_ok(dy, cols, size) && vector_ok(x, cols, size) &&
                   vector_ok(g, cols, size) && vector_ok(resid, cols, size) &&
                   vector_ok(dx, cols, size);
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    MGBENCH_ROW_LAUNCH(rmsnorm_backward_kernel, vec, rows, static_cast<const T*>(dy),
                       static_cast<const T*>(x), static_cast<const T*>(g), rstd,
                       static_cast<const T*>(resid), static_cast<T*>(dx), gprod, rows, cols);
  });
}

cudaError_t launch_causal_softmax(void* s, DType dtype, std::size_t mats, std::size_t n,
                                  cudaStream_t stream) {
  if (!is_train_dtype(dtype) || s == nullptr) return cudaErrorInvalidValue;
  if (mats == 0 || n == 0) return cudaSuccess;
  const std::size_t rows = mats * n;
  const bool vec = vector_ok(s, n, dtype_size(dtype));
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    MGBENCH_ROW_LAUNCH(causal_softmax_kernel, vec, rows, static_cast<T*>(s), rows, n);
  });
}

cudaError_t launch_causal_softmax_backward(const void* p, std::size_t p_stride, void* d,
                                           std::size_t d_stride, DType dtype, std::size_t mats,
                                           std::size_t n, cudaStream_t stream) {
  if (!is_train_dtype(dtype) || p == nullptr || d == nullptr) return cudaErrorInvalidValue;
  if (mats == 0 || n == 0) return cudaSuccess;
  const std::size_t rows = mats * n, size = dtype_size(dtype);
  const bool vec = vector_ok(p, n, size, p_stride) && vector_ok(d, n, size, d_stride);
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    MGBENCH_ROW_LAUNCH(causal_softmax_backward_kernel, vec, rows, static_cast<const T*>(p),
                       p_stride, static_cast<T*>(d), d_stride, rows, n);
  });
}

cudaError_t launch_swiglu(const void* gu, void* act, DType dtype, std::size_t rows,
                          std::size_t cols, cudaStream_t stream) {
  if (!is_train_dtype(dtype) || gu == nullptr || act == nullptr) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const unsigned threads = 128;
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swiglu_kernel<T><<<column_grid(rows, cols, threads), threads, 0, stream>>>(
        static_cast<const T*>(gu), static_cast<T*>(act), rows, cols);
  });
}

cudaError_t launch_swiglu_backward(const void* dact, const void* gu, void* dgu, DType dtype,
                                   std::size_t rows, std::size_t cols, cudaStream_t stream) {
  if (!is_train_dtype(dtype) || dact == nullptr || gu == nullptr || dgu == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  const unsigned threads = 128;
  return dispatch(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    swiglu_backward_kernel<T><<<column_grid(rows, cols, threads), threads, 0, stream>>>(
        static_cast<const T*>(dact), static_cast<const T*>(gu), static_cast<T*>(dgu), rows, cols);
  });
}

cudaError_t launch_adamw(float* master, float* m, float* v, const float* grad, void* copy,
                         DType copy_dtype, std::size_t count, const AdamWStep& step,
                         cudaStream_t stream) {
  if (!is_train_dtype(copy_dtype) || master == nullptr || m == nullptr || v == nullptr ||
      grad == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (count == 0) return cudaSuccess;
  return dispatch(copy_dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    adamw_kernel<T><<<grid_for(count, 4), kThreads, 0, stream>>>(
        master, m, v, grad, static_cast<T*>(copy), count, step);
  });
}

cudaError_t launch_add_f32(float* dst, const float* src, std::size_t count, cudaStream_t stream) {
  if (dst == nullptr || src == nullptr) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  add_f32_kernel<<<grid_for(count, 4), kThreads, 0, stream>>>(dst, src, count);
  return cudaGetLastError();
}

}  // namespace mgbench::kernels
