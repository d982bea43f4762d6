// Device helpers shared by the element-wise kernels of the training steps (train.cu,
// transformer.cu; internal to kernels/src): conversions between the stored types and fp32, the
// launch grid of a grid-strided loop and the dispatch of a launcher on the element type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels::detail {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 16384;

// Blocks of kThreads for `count` elements, `per_thread` each, capped (grid-strided loops).
inline unsigned grid_for(std::size_t count, std::size_t per_thread = 1) {
  const std::size_t threads = (count + per_thread - 1) / per_thread;
  const std::size_t blocks = (threads + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min(std::max<std::size_t>(blocks, 1), kMaxBlocks));
}

inline bool is_train_dtype(DType dtype) {
  return dtype == DType::fp32 || dtype == DType::bf16 || dtype == DType::fp16;
}

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }

// Rounded to nearest.
template <typename T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) {
  return __float2half_rn(v);
}

// Calls f with a null pointer of the element type of `dtype` (fp32, bf16, fp16) and returns the
// launch status; cudaErrorInvalidValue for other types.
template <typename F>
cudaError_t dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp32: f(static_cast<float*>(nullptr)); return cudaGetLastError();
    case DType::bf16: f(static_cast<__nv_bfloat16*>(nullptr)); return cudaGetLastError();
    case DType::fp16: f(static_cast<__half*>(nullptr)); return cudaGetLastError();
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace mgbench::kernels::detail
