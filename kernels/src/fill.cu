// Random and poison fills and the non-finite count (see fill.hpp).
#include "mgbench/kernels/fill.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <type_traits>

namespace mgbench::kernels {

namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 8192;

unsigned grid_for(std::size_t count) {
  const std::size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::min(std::max<std::size_t>(blocks, 1), kMaxBlocks));
}

// splitmix64's finaliser: a bijective 64-bit mix.
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Everything a fill needs, computed once on the host so device and fill_value() agree.
struct UniformSpec {
  std::uint64_t seed_mix;  // mix64(seed)
  float lo, scale;         // floating-point types: value = fma(scale, u, lo)
  long long ilo;           // int32: value = ilo + h % irange
  unsigned long long irange;
  int negative;            // sign used when the range itself gives an exact zero
};

__host__ __device__ inline std::uint64_t element_hash(const UniformSpec& s, std::uint64_t i) {
  return mix64(i ^ s.seed_mix);
}

__host__ __device__ inline float element_float(const UniformSpec& s, std::uint64_t i) {
  const float u = static_cast<float>(element_hash(s, i) >> 40) * 0x1p-24f;  // [0, 1)
  return fmaf(s.scale, u, s.lo);
}

__host__ __device__ inline bool sign_of(const UniformSpec& s, float raw) {
  return raw != 0.0f ? raw < 0.0f : s.negative != 0;
}

// Raw bits of element i for each element type. A value that rounds to zero becomes the
// smallest normal magnitude of the type with the sign of the unrounded value.
__host__ __device__ inline std::uint32_t uniform_fp32(const UniformSpec& s, std::uint64_t i) {
  float v = element_float(s, i);
  if (v == 0.0f) v = sign_of(s, v) ? -FLT_MIN : FLT_MIN;
  std::uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

// The bits of f rounded to nearest into bf16 (Half = __nv_bfloat16) or fp16 (__half).
template <typename Half>
__host__ __device__ inline std::uint16_t round_16(float f) {
  std::uint16_t bits;
  if constexpr (std::is_same_v<Half, __nv_bfloat16>) {
    const __nv_bfloat16 b = __float2bfloat16_rn(f);
    memcpy(&bits, &b, sizeof bits);
  } else {
    const __half h = __float2half_rn(f);
    memcpy(&bits, &h, sizeof bits);
  }
  return bits;
}

// bf16 (Half = __nv_bfloat16, smallest normal 0x0080) or fp16 (__half, 0x0400).
template <typename Half>
__host__ __device__ inline std::uint16_t uniform_16(const UniformSpec& s, std::uint64_t i,
                                                    std::uint16_t min_normal) {
  const float raw = element_float(s, i);
  std::uint16_t bits = round_16<Half>(raw);
  if ((bits & 0x7fffu) == 0) bits = sign_of(s, raw) ? (0x8000u | min_normal) : min_normal;
  return bits;
}

__host__ __device__ inline std::uint16_t uniform_bf16(const UniformSpec& s, std::uint64_t i) {
  return uniform_16<__nv_bfloat16>(s, i, 0x0080u);
}

__host__ __device__ inline std::uint16_t uniform_fp16(const UniformSpec& s, std::uint64_t i) {
  return uniform_16<__half>(s, i, 0x0400u);
}

__host__ __device__ inline std::uint8_t uniform_fp8(const UniformSpec& s, std::uint64_t i) {
  const float raw = element_float(s, i);
  std::uint8_t bits = __nv_cvt_float_to_fp8(raw, __NV_SATFINITE, __NV_E4M3);
  if ((bits & 0x7fu) == 0) bits = sign_of(s, raw) ? 0x88u : 0x08u;
  return bits;
}

__host__ __device__ inline std::int32_t uniform_int32(const UniformSpec& s, std::uint64_t i) {
  long long v = s.ilo + static_cast<long long>(element_hash(s, i) % s.irange);
  if (v == 0) v = s.negative ? -1 : 1;
  return static_cast<std::int32_t>(v);
}

template <typename Bits, typename Gen>
__global__ void fill_uniform_kernel(Bits* out, std::uint64_t count, UniformSpec spec, Gen gen) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    out[i] = static_cast<Bits>(gen(spec, i));
  }
}

// The generator of element type D (the fill kernel is instantiated per type).
template <DType D>
struct Gen {
  __device__ auto operator()(const UniformSpec& s, std::uint64_t i) const {
    if constexpr (D == DType::fp32) {
      return uniform_fp32(s, i);
    } else if constexpr (D == DType::bf16) {
      return uniform_bf16(s, i);
    } else if constexpr (D == DType::fp16) {
      return uniform_fp16(s, i);
    } else if constexpr (D == DType::fp8_e4m3) {
      return uniform_fp8(s, i);
    } else {
      return uniform_int32(s, i);
    }
  }
};

template <DType D, typename Bits>
void launch_uniform(void* data, std::size_t count, const UniformSpec& spec, cudaStream_t stream) {
  fill_uniform_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<Bits*>(data), count,
                                                                 spec, Gen<D>{});
}

// Builds the spec; false when the range is invalid for the type.
bool make_spec(DType dtype, std::uint64_t seed, double lo, double hi, UniformSpec* spec) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi || (lo == 0.0 && hi == 0.0)) {
    return false;
  }
  spec->seed_mix = mix64(seed);
  spec->lo = static_cast<float>(lo);
  spec->scale = static_cast<float>(hi - lo);
  spec->negative = hi <= 0.0 ? 1 : 0;
  spec->ilo = 0;
  spec->irange = 1;
  if (dtype == DType::int32) {
    const double ilo = std::ceil(lo), ihi = std::floor(hi);
    if (ilo > ihi || ilo < static_cast<double>(INT32_MIN) ||
        ihi > static_cast<double>(INT32_MAX) || (ilo == 0.0 && ihi == 0.0)) {
      return false;
    }
    spec->ilo = static_cast<long long>(ilo);
    spec->irange = static_cast<unsigned long long>(static_cast<long long>(ihi) - spec->ilo + 1);
    spec->negative = ihi <= 0.0 ? 1 : 0;
  }
  return true;
}

template <typename Bits>
__global__ void fill_pattern_kernel(Bits* out, std::uint64_t count, Bits pattern) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    out[i] = pattern;
  }
}

cudaError_t fill_pattern(void* data, std::size_t count, DType dtype, std::uint32_t pattern,
                         cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (data == nullptr) return cudaErrorInvalidValue;
  const unsigned grid = grid_for(count);
  switch (dtype_size(dtype)) {
    case 4:
      fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(static_cast<std::uint32_t*>(data),
                                                         count, pattern);
      break;
    case 2:
      fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(
          static_cast<std::uint16_t*>(data), count, static_cast<std::uint16_t>(pattern));
      break;
    default:
      fill_pattern_kernel<<<grid, kThreads, 0, stream>>>(
          static_cast<std::uint8_t*>(data), count, static_cast<std::uint8_t>(pattern));
      break;
  }
  return cudaGetLastError();
}

// Non-finite test on raw bits.
template <typename Bits>
__device__ inline bool is_bad(Bits bits, int kind);

template <>
__device__ inline bool is_bad<std::uint32_t>(std::uint32_t bits, int kind) {
  // kind 0: fp32, 1: int32
  return kind == 0 ? (bits & 0x7f800000u) == 0x7f800000u
                   : bits == static_cast<std::uint32_t>(kInt32Poison);
}
template <>
__device__ inline bool is_bad<std::uint16_t>(std::uint16_t bits, int kind) {
  // kind 0: bf16, 1: fp16
  return kind == 0 ? (bits & 0x7f80u) == 0x7f80u : (bits & 0x7c00u) == 0x7c00u;
}
template <>
__device__ inline bool is_bad<std::uint8_t>(std::uint8_t bits, int kind) {
  return (bits & 0x7fu) == 0x7fu;  // e4m3 NaN (no infinities)
}

template <typename Bits>
__global__ void count_bad_kernel(const Bits* data, std::uint64_t count, int kind,
                                 unsigned long long* counter) {
  unsigned long long mine = 0;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    mine += is_bad<Bits>(data[i], kind) ? 1 : 0;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    mine += __shfl_down_sync(0xffffffffu, mine, offset);
  }
  if ((threadIdx.x & 31) == 0 && mine != 0) atomicAdd(counter, mine);
}

}  // namespace

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::int32: return "int32";
  }
  return "unknown";
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::fp32:
    case DType::tf32:
    case DType::int32: return 4;
    case DType::bf16:
    case DType::fp16: return 2;
    case DType::fp8_e4m3: return 1;
  }
  return 0;
}

cudaError_t fill_uniform(void* data, std::size_t count, DType dtype, std::uint64_t seed, double lo,
                         double hi, cudaStream_t stream) {
  dtype = storage_dtype(dtype);
  UniformSpec spec{};
  if (!make_spec(dtype, seed, lo, hi, &spec)) return cudaErrorInvalidValue;
  if (count == 0) return cudaSuccess;
  if (data == nullptr) return cudaErrorInvalidValue;
  switch (dtype) {
    case DType::fp32:
    case DType::tf32: launch_uniform<DType::fp32, std::uint32_t>(data, count, spec, stream); break;
    case DType::bf16: launch_uniform<DType::bf16, std::uint16_t>(data, count, spec, stream); break;
    case DType::fp16: launch_uniform<DType::fp16, std::uint16_t>(data, count, spec, stream); break;
    case DType::fp8_e4m3:
      launch_uniform<DType::fp8_e4m3, std::uint8_t>(data, count, spec, stream);
      break;
    case DType::int32: launch_uniform<DType::int32, std::int32_t>(data, count, spec, stream); break;
  }
  return cudaGetLastError();
}

cudaError_t fill_poison(void* data, std::size_t count, DType dtype, cudaStream_t stream) {
  dtype = storage_dtype(dtype);
  std::uint32_t pattern = 0;
  switch (dtype) {
    case DType::fp32:
    case DType::tf32: pattern = 0x7fc00000u; break;
    case DType::bf16: pattern = 0x7fc0u; break;
    case DType::fp16: pattern = 0x7e00u; break;
    case DType::fp8_e4m3: pattern = 0x7fu; break;
    case DType::int32: pattern = static_cast<std::uint32_t>(kInt32Poison); break;
  }
  return fill_pattern(data, count, dtype, pattern, stream);
}

cudaError_t count_nonfinite(const void* data, std::size_t count, DType dtype,
                            unsigned long long* device_counter, cudaStream_t stream) {
  if (device_counter == nullptr) return cudaErrorInvalidValue;
  dtype = storage_dtype(dtype);
  cudaError_t err = cudaMemsetAsync(device_counter, 0, sizeof(unsigned long long), stream);
  if (err != cudaSuccess || count == 0) return err;
  if (data == nullptr) return cudaErrorInvalidValue;
  // The kind of is_bad: 0 for fp32, bf16 and fp8, 1 for int32 and fp16.
  const int kind = dtype == DType::int32 || dtype == DType::fp16 ? 1 : 0;
  const auto launch = [&](auto* typed) {
    count_bad_kernel<<<grid_for(count), kThreads, 0, stream>>>(typed, count, kind, device_counter);
  };
  switch (dtype_size(dtype)) {
    case 4: launch(static_cast<const std::uint32_t*>(data)); break;
    case 2: launch(static_cast<const std::uint16_t*>(data)); break;
    default: launch(static_cast<const std::uint8_t*>(data)); break;
  }
  return cudaGetLastError();
}

cudaError_t count_nonfinite_sync(const void* data, std::size_t count, DType dtype,
                                 std::uint64_t* result, cudaStream_t stream) {
  if (result == nullptr) return cudaErrorInvalidValue;
  unsigned long long* counter = nullptr;
  cudaError_t err = cudaMalloc(&counter, sizeof(unsigned long long));
  if (err != cudaSuccess) return err;
  unsigned long long host = 0;
  err = count_nonfinite(data, count, dtype, counter, stream);
  if (err == cudaSuccess) {
    err = cudaMemcpyAsync(&host, counter, sizeof host, cudaMemcpyDeviceToHost, stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  const cudaError_t free_err = cudaFree(counter);
  if (err == cudaSuccess) err = free_err;
  if (err == cudaSuccess) *result = host;
  return err;
}

double fill_value(DType dtype, std::uint64_t seed, std::size_t index, double lo, double hi) {
  dtype = storage_dtype(dtype);
  UniformSpec spec{};
  if (!make_spec(dtype, seed, lo, hi, &spec)) return NAN;
  switch (dtype) {
    case DType::fp32:
    case DType::tf32: return decode_fp32(uniform_fp32(spec, index));
    case DType::bf16: return decode_bf16(uniform_bf16(spec, index));
    case DType::fp16: return decode_fp16(uniform_fp16(spec, index));
    case DType::fp8_e4m3: return decode_fp8_e4m3(uniform_fp8(spec, index));
    case DType::int32: return static_cast<double>(uniform_int32(spec, index));
  }
  return NAN;
}

}  // namespace mgbench::kernels
