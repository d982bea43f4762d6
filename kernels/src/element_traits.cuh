#pragma once
// Element types of the reduction and verification kernels (internal to kernels/src): raw bits in
// memory, accumulation type in registers, exact small integers in and out, and a dispatch from
// the run-time DType to these traits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels::elements {

struct Fp32 {
  using Bits = std::uint32_t;
  using Acc = float;
  __device__ static Acc to_acc(Bits b) { return __uint_as_float(b); }
  __device__ static Bits from_acc(Acc a) { return __float_as_uint(a); }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static Bits from_int(int v) { return __float_as_uint(static_cast<float>(v)); }
  __device__ static bool equals_int(Bits b, int v) {
    return __uint_as_float(b) == static_cast<float>(v);
  }
};

// bf16 (H = __nv_bfloat16) and fp16 (H = __half): 16-bit storage, fp32 accumulation, the
// sum rounded to nearest.
template <typename H>
struct Float16 {
  using Bits = std::uint16_t;
  using Acc = float;
  __device__ static Acc to_acc(Bits b) {
    if constexpr (std::is_same_v<H, __nv_bfloat16>) {
      return __bfloat162float(__ushort_as_bfloat16(b));
    } else {
      return __half2float(__ushort_as_half(b));
    }
  }
  __device__ static Bits from_acc(Acc a) {
    if constexpr (std::is_same_v<H, __nv_bfloat16>) {
      return __bfloat16_as_ushort(__float2bfloat16_rn(a));
    } else {
      return __half_as_ushort(__float2half_rn(a));
    }
  }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static Bits from_int(int v) { return from_acc(static_cast<float>(v)); }
  __device__ static bool equals_int(Bits b, int v) { return to_acc(b) == static_cast<float>(v); }
};
using Bf16 = Float16<__nv_bfloat16>;
using Fp16 = Float16<__half>;

struct Int32 {
  using Bits = std::uint32_t;
  using Acc = std::uint32_t;  // wrap-around addition, no signed overflow
  __device__ static Acc to_acc(Bits b) { return b; }
  __device__ static Bits from_acc(Acc a) { return a; }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
  __device__ static Bits from_int(int v) { return static_cast<Bits>(v); }
  __device__ static bool equals_int(Bits b, int v) { return static_cast<std::int32_t>(b) == v; }
};

// Calls f(T{}) with the element-type traits T of `dtype`, then returns the launch status;
// cudaErrorInvalidValue for a type the reductions do not sum.
template <typename F>
cudaError_t with_traits(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp32: f(Fp32{}); break;
    case DType::bf16: f(Bf16{}); break;
    case DType::fp16: f(Fp16{}); break;
    case DType::int32: f(Int32{}); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace mgbench::kernels::elements
