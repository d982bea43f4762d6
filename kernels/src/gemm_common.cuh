// Device helpers shared by the own GEMM kernels (internal to kernels/src).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

namespace mgbench::kernels::detail {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async groups (sm_80+): close the group of copies issued so far; wait until at most N
// groups are still in flight.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Output stores of C, rounded to nearest: Out is __nv_bfloat16, __half or float.
template <typename Out>
__device__ __forceinline__ void store_out2(Out* p, float x, float y) {
  if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
  } else if constexpr (std::is_same_v<Out, __half>) {
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
  } else {
    *reinterpret_cast<float2*>(p) = make_float2(x, y);
  }
}

template <typename Out>
__device__ __forceinline__ void store_out1(Out* p, float x) {
  if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    *p = __float2bfloat16_rn(x);
  } else if constexpr (std::is_same_v<Out, __half>) {
    *p = __float2half_rn(x);
  } else {
    *p = x;
  }
}

// Stores the pair (x, y) at C[row][col], C[row][col + 1], each only inside the M x N matrix;
// `pair_store` says whether N is even and C aligned for one two-element store.
template <typename Out>
__device__ __forceinline__ void store_pair(Out* c, std::int64_t m, std::int64_t n,
                                           std::int64_t row, std::int64_t col, float x, float y,
                                           bool pair_store) {
  if (row >= m || col >= n) return;
  Out* out = c + row * n + col;
  if (pair_store && col + 1 < n) {
    store_out2(out, x, y);
  } else {
    store_out1(out, x);
    if (col + 1 < n) store_out1(out + 1, y);
  }
}

// Grouped rasterisation: tile index -> (tile row, tile column). `group_m` consecutive tile
// rows are walked column by column, so tiles that run at the same time share A and B in L2.
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int group_m,
                                             int& tile_m, int& tile_n) {
  const int per_group = group_m * tiles_n;
  const int first_m = (tile / per_group) * group_m;
  const int group_rows = min(tiles_m - first_m, group_m);
  tile_m = first_m + (tile % per_group) % group_rows;
  tile_n = (tile % per_group) / group_rows;
}

}  // namespace mgbench::kernels::detail
