#pragma once
// Device buffer initialisation and output checks shared by every workload.
//
// - fill_uniform: counter-based random fill (a hash of seed and element index, so the
//   value of element i is reproducible on the host with fill_value()). Values are uniform
//   in [lo, hi) and rounded to nearest into the element type; an element that would be
//   zero after rounding is replaced by the smallest non-zero magnitude of the type with the
//   sign of the range (integers: +1 or -1), so a buffer is never zero anywhere.
// - fill_poison: NaN for the floating-point types, kInt32Poison for int32; an element that
//   is never written afterwards is caught by count_nonfinite().
// - count_nonfinite: number of NaN/Inf elements (int32: elements equal to kInt32Poison).
//
// Launchers enqueue on `stream` and return the launch status; the caller checks it.
// The decode helpers at the bottom are plain C++ (no CUDA needed) for host-side checks.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mgbench::kernels {

// The one element-type enum of the project. tf32 is stored as fp32 and selects TF32 tensor-core
// math where a GEMM computes (inputs rounded to a 10-bit mantissa); fills, checks, sizes and
// decoding treat it as fp32 (see storage_dtype()).
enum class DType { fp32, bf16, fp16, fp8_e4m3, int32, tf32 };

// The type the elements are stored in: tf32 -> fp32, every other type itself.
inline constexpr DType storage_dtype(DType dtype) {
  return dtype == DType::tf32 ? DType::fp32 : dtype;
}

const char* to_string(DType dtype);
std::size_t dtype_size(DType dtype);

inline constexpr std::int32_t kInt32Poison = INT32_MIN;

// Element i of the fill takes the value fill_value(dtype, seed, i, lo, hi). Requires
// lo <= hi and not lo == hi == 0 (cudaErrorInvalidValue otherwise). For int32 the range is
// [ceil(lo), floor(hi)] inclusive.
cudaError_t fill_uniform(void* data, std::size_t count, DType dtype, std::uint64_t seed, double lo,
                         double hi, cudaStream_t stream);
cudaError_t fill_poison(void* data, std::size_t count, DType dtype, cudaStream_t stream);

// Enqueues the count into *device_counter (device memory, reset by this call).
cudaError_t count_nonfinite(const void* data, std::size_t count, DType dtype,
                            unsigned long long* device_counter, cudaStream_t stream);
// Convenience for verification: allocates a counter, synchronises `stream`, returns the
// count in *result. Not for timed regions.
cudaError_t count_nonfinite_sync(const void* data, std::size_t count, DType dtype,
                                 std::uint64_t* result, cudaStream_t stream);

// Host replica of fill_uniform: the exact value element `index` receives, as a double.
double fill_value(DType dtype, std::uint64_t seed, std::size_t index, double lo, double hi);

// ---- host-side decoding of raw elements (bit-exact, no CUDA) ------------------------------

inline double decode_fp32(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return static_cast<double>(f);
}

inline double decode_bf16(std::uint16_t bits) {
  return decode_fp32(static_cast<std::uint32_t>(bits) << 16);
}

inline double decode_fp16(std::uint16_t bits) {
  const int sign = (bits >> 15) & 1;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0x1f) {
    value = mantissa ? NAN : INFINITY;
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), -24);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -value : value;
}

// OCP FP8 E4M3 (as __nv_fp8_e4m3): bias 7, no infinities, S.1111.111 is NaN.
inline double decode_fp8_e4m3(std::uint8_t bits) {
  const int sign = (bits >> 7) & 1;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  double value;
  if (exponent == 0xf && mantissa == 0x7) {
    value = NAN;
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), -9);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | 0x8), exponent - 10);
  }
  return sign ? -value : value;
}

// Element `index` of a host copy of a buffer of `dtype`.
inline double decode_element(DType dtype, const void* data, std::size_t index) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  switch (dtype) {
    case DType::fp32:
    case DType::tf32: {
      std::uint32_t v;
      std::memcpy(&v, bytes + index * 4, 4);
      return decode_fp32(v);
    }
    case DType::bf16: {
      std::uint16_t v;
      std::memcpy(&v, bytes + index * 2, 2);
      return decode_bf16(v);
    }
    case DType::fp16: {
      std::uint16_t v;
      std::memcpy(&v, bytes + index * 2, 2);
      return decode_fp16(v);
    }
    case DType::fp8_e4m3: return decode_fp8_e4m3(bytes[index]);
    case DType::int32: {
      std::int32_t v;
      std::memcpy(&v, bytes + index * 4, 4);
      return static_cast<double>(v);
    }
  }
  return NAN;
}

}  // namespace mgbench::kernels
