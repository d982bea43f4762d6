// mgbench's own all-reduce kernels over peer pointers, and its verification data (through the
// collectives' check kernels, collective_check.cu). Algorithms, data partition and the barrier
// protocol are described in allreduce.hpp.
#include "mgbench/kernels/allreduce.hpp"

#include <algorithm>
#include <cstdint>

#include "element_traits.cuh"
#include "mgbench/kernels/collective_check.hpp"

namespace mgbench::kernels {

namespace {

using elements::Bf16;
using elements::Fp16;
using elements::Fp32;
using elements::Int32;

// Sync region layout, in 32-bit words.
constexpr int kSeqWord = 0;     // ops this rank has completed (advanced by the last block)
constexpr int kDoneWord = 1;    // blocks of the running launch that have finished
constexpr int kErrorWord = 2;   // 1 once a barrier of this rank has timed out
constexpr int kFlagsWord = 32;  // flags[block][source rank], written by the peers
// Barrier back-off: after 256 tight spins, sleeps of 32 ns doubling up to 1 us.
constexpr unsigned kMinBackoffNs = 32;
constexpr unsigned kMaxBackoffNs = 1024;
constexpr std::size_t kSyncWords =
    kFlagsWord + static_cast<std::size_t>(kAllreduceMaxBlocks) * kAllreduceMaxRanks;

// A 16-byte pack of elements.
template <class T>
struct Pack {
  using Bits = typename T::Bits;
  static constexpr int kElems = 16 / sizeof(Bits);
  union U {
    uint4 v;
    Bits e[kElems];
  };
};

template <class T>
__device__ __forceinline__ uint4 load_user(const typename T::Bits* base, std::size_t pack,
                                           bool aligned) {
  if (aligned) return reinterpret_cast<const uint4*>(base)[pack];
  typename Pack<T>::U u;
#pragma unroll
  for (int k = 0; k < Pack<T>::kElems; ++k) u.e[k] = base[pack * Pack<T>::kElems + k];
  return u.v;
}

template <class T>
__device__ __forceinline__ void store_user(typename T::Bits* base, std::size_t pack, uint4 v,
                                           bool aligned) {
  if (aligned) {
    reinterpret_cast<uint4*>(base)[pack] = v;
    return;
  }
  typename Pack<T>::U u;
  u.v = v;
#pragma unroll
  for (int k = 0; k < Pack<T>::kElems; ++k) base[pack * Pack<T>::kElems + k] = u.e[k];
}

template <class T>
struct Accum {
  typename T::Acc a[Pack<T>::kElems];
  __device__ __forceinline__ void set(uint4 v) {
    typename Pack<T>::U u;
    u.v = v;
#pragma unroll
    for (int k = 0; k < Pack<T>::kElems; ++k) a[k] = T::to_acc(u.e[k]);
  }
  __device__ __forceinline__ void add(uint4 v) {
    typename Pack<T>::U u;
    u.v = v;
#pragma unroll
    for (int k = 0; k < Pack<T>::kElems; ++k) a[k] = T::add(a[k], T::to_acc(u.e[k]));
  }
  __device__ __forceinline__ uint4 get() const {
    typename Pack<T>::U u;
#pragma unroll
    for (int k = 0; k < Pack<T>::kElems; ++k) u.e[k] = T::from_acc(a[k]);
    return u.v;
  }
};

// ---- memory-model helpers -----------------------------------------------------------------

__device__ __forceinline__ void store_release_sys(std::uint32_t* addr, std::uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(addr), "r"(value) : "memory");
}

__device__ __forceinline__ std::uint32_t load_acquire_sys(const std::uint32_t* addr) {
  std::uint32_t value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(addr) : "memory");
  return value;
}

__device__ __forceinline__ std::uint32_t load_volatile(const std::uint32_t* addr) {
  return *reinterpret_cast<const volatile std::uint32_t*>(addr);
}

__device__ __forceinline__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint4* staging_of(const AllreducePeers& p, int rank,
                                             std::size_t parity_offset) {
  return reinterpret_cast<uint4*>(static_cast<char*>(p.staging[rank]) + parity_offset);
}

// Block b of this rank meets block b of every rank (itself included). Every thread's prior
// writes are published by the release stores (after __syncthreads), and every thread may
// read the peers' data after it (acquire, then __syncthreads).
__device__ void block_barrier(const AllreducePeers& p, std::uint32_t epoch) {
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < p.nranks) {
    const std::size_t slot = static_cast<std::size_t>(blockIdx.x) * kAllreduceMaxRanks;
    store_release_sys(p.sync[peer] + kFlagsWord + slot + p.rank, epoch);
    const std::uint32_t* flag = p.sync[p.rank] + kFlagsWord + slot + peer;
    std::uint32_t* error = p.sync[p.rank] + kErrorWord;
    std::uint64_t start = 0;
    unsigned spins = 0;
    unsigned backoff_ns = 0;
    // Wrap-safe "flag >= epoch": a fast peer may already have written a later epoch.
    while (static_cast<std::int32_t>(load_acquire_sys(flag) - epoch) < 0) {
      // A short tight spin (latency), then sleeps that double up to kMaxBackoffNs, so that
      // a waiting block leaves its SM's issue slots to the kernels it overlaps with.
      if (backoff_ns != 0) __nanosleep(backoff_ns);
      if ((++spins & 255u) != 0) continue;
      backoff_ns = backoff_ns == 0 ? kMinBackoffNs : min(2u * backoff_ns, kMaxBackoffNs);
      if (load_volatile(error) != 0) break;  // another block of this rank gave up
      const std::uint64_t now = global_timer_ns();
      if (start == 0) {
        start = now;
      } else if (now - start > p.timeout_ns) {
        atomicExch(error, 1u);
        break;
      }
    }
  }
  __syncthreads();
}

// The last block of a launch advances the op counter for the next launch.
__device__ void finish_launch(const AllreducePeers& p, std::uint32_t seq) {
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t* sync = p.sync[p.rank];
    __threadfence();
    const std::uint32_t before = atomicAdd(sync + kDoneWord, 1u);
    if (before == gridDim.x - 1) {
      atomicExch(sync + kDoneWord, 0u);
      atomicExch(sync + kSeqWord, seq + 1u);
    }
  }
}

template <class T>
__device__ __forceinline__ typename T::Bits reduce_element(const AllreducePeers& p,
                                                           std::size_t parity_offset,
                                                           std::size_t index) {
  using Bits = typename T::Bits;
  typename T::Acc acc =
      T::to_acc(__ldcg(reinterpret_cast<const Bits*>(staging_of(p, 0, parity_offset)) + index));
  for (int r = 1; r < p.nranks; ++r) {
    acc = T::add(acc, T::to_acc(__ldcg(
                          reinterpret_cast<const Bits*>(staging_of(p, r, parity_offset)) + index)));
  }
  return T::from_acc(acc);
}

// Sum of pack i over ranks 0..n-1 in rank order (so every rank computes identical bits);
// `own` replaces this rank's staging copy when given (two-shot reads its own slice in place).
template <class T>
__device__ __forceinline__ uint4 reduce_pack(const AllreducePeers& p, std::size_t parity_offset,
                                             std::size_t i, const typename T::Bits* own,
                                             bool own_aligned) {
  uint4 v[kAllreduceMaxRanks];
#pragma unroll
  for (int r = 0; r < kAllreduceMaxRanks; ++r) {
    if (r < p.nranks) {
      v[r] = (own != nullptr && r == p.rank) ? load_user<T>(own, i, own_aligned)
                                             : __ldcg(staging_of(p, r, parity_offset) + i);
    }
  }
  Accum<T> acc;
  acc.set(v[0]);
#pragma unroll
  for (int r = 1; r < kAllreduceMaxRanks; ++r) {
    if (r < p.nranks) acc.add(v[r]);
  }
  return acc.get();
}

template <class T, bool kTwoShot>
__global__ void __launch_bounds__(kAllreduceThreads, 1)
    allreduce_kernel(AllreducePeers p, const void* in_ptr, void* out_ptr, std::size_t count,
                     bool in_aligned, bool out_aligned) {
  using Bits = typename T::Bits;
  constexpr int kElems = Pack<T>::kElems;
  __shared__ std::uint32_t s_seq, s_error;
  if (threadIdx.x == 0) {
    s_seq = load_volatile(p.sync[p.rank] + kSeqWord);
    s_error = load_volatile(p.sync[p.rank] + kErrorWord);
  }
  __syncthreads();
  if (s_error != 0) return;  // poisoned by an earlier timeout: the caller sees it in status
  const std::uint32_t seq = s_seq;
  const std::size_t parity_offset = (seq & 1u) ? p.half_bytes : 0;
  const std::uint32_t epoch = 2u * seq + 1u;

  const Bits* in = static_cast<const Bits*>(in_ptr);
  Bits* out = static_cast<Bits*>(out_ptr);
  const std::size_t npacks = count / kElems;
  const std::size_t tail_base = npacks * kElems;
  const int tail = static_cast<int>(count - tail_base);
  const bool tail_thread = blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail;
  uint4* const mine = staging_of(p, p.rank, parity_offset);
  Bits* const mine_elems = reinterpret_cast<Bits*>(mine);
  const std::size_t first =
      static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;

  if constexpr (!kTwoShot) {
    for (std::size_t i = first; i < npacks; i += stride) mine[i] = load_user<T>(in, i, in_aligned);
    if (tail_thread) mine_elems[tail_base + threadIdx.x] = in[tail_base + threadIdx.x];
    block_barrier(p, epoch);
    for (std::size_t i = first; i < npacks; i += stride) {
      store_user<T>(out, i, reduce_pack<T>(p, parity_offset, i, nullptr, false), out_aligned);
    }
    if (tail_thread) {
      out[tail_base + threadIdx.x] = reduce_element<T>(p, parity_offset, tail_base + threadIdx.x);
    }
  } else {
    const int n = p.nranks;
    const std::size_t per = (npacks + n - 1) / n;  // packs per slice; slice r is rank r's
    const std::size_t own_base = static_cast<std::size_t>(p.rank) * per;
    // Copy-in: the slices the peers reduce (this rank's own slice is read in place).
    for (std::size_t o = first; o < per; o += stride) {
      for (int s = 0; s < n; ++s) {
        const std::size_t i = static_cast<std::size_t>(s) * per + o;
        if (s != p.rank && i < npacks) mine[i] = load_user<T>(in, i, in_aligned);
      }
    }
    if (tail_thread) mine_elems[tail_base + threadIdx.x] = in[tail_base + threadIdx.x];
    block_barrier(p, epoch);
    // Reduce-scatter: this rank's slice, from every rank, into its staging and its output.
    for (std::size_t o = first; o < per; o += stride) {
      const std::size_t i = own_base + o;
      if (i < npacks) {
        const uint4 v = reduce_pack<T>(p, parity_offset, i, in, in_aligned);
        mine[i] = v;
        store_user<T>(out, i, v, out_aligned);
      }
    }
    // The few elements after the last whole pack: reduced by every rank (one-shot style).
    if (tail_thread) {
      out[tail_base + threadIdx.x] = reduce_element<T>(p, parity_offset, tail_base + threadIdx.x);
    }
    block_barrier(p, epoch + 1u);
    // All-gather: slice s from rank s.
    for (std::size_t o = first; o < per; o += stride) {
      for (int s = 0; s < n; ++s) {
        const std::size_t i = static_cast<std::size_t>(s) * per + o;
        if (s != p.rank && i < npacks) {
          store_user<T>(out, i, __ldcg(staging_of(p, s, parity_offset) + i), out_aligned);
        }
      }
    }
  }
  finish_launch(p, seq);
}

template <class T>
cudaError_t launch_typed(const AllreducePeers& peers, const AllreduceOp& op, int grid,
                         cudaStream_t stream) {
  const bool in_aligned = reinterpret_cast<std::uintptr_t>(op.in) % 16 == 0;
  const bool out_aligned = reinterpret_cast<std::uintptr_t>(op.out) % 16 == 0;
  if (op.algo == AllreduceAlgo::two_shot) {
    allreduce_kernel<T, true><<<grid, kAllreduceThreads, 0, stream>>>(
        peers, op.in, op.out, op.count, in_aligned, out_aligned);
  } else {
    allreduce_kernel<T, false><<<grid, kAllreduceThreads, 0, stream>>>(
        peers, op.in, op.out, op.count, in_aligned, out_aligned);
  }
  return cudaGetLastError();
}

}  // namespace

const char* to_string(AllreduceAlgo algo) {
  return algo == AllreduceAlgo::two_shot ? "two_shot" : "one_shot";
}

std::size_t allreduce_sync_bytes() { return kSyncWords * sizeof(std::uint32_t); }

AllreduceAlgo allreduce_auto_algo(std::size_t bytes, int nranks) {
  std::size_t limit;
  if (nranks <= 1) {
    return AllreduceAlgo::one_shot;
  } else if (nranks == 2) {
    limit = std::size_t{1} << 20;
  } else if (nranks <= 4) {
    limit = std::size_t{512} << 10;
  } else {
    limit = std::size_t{256} << 10;
  }
  return bytes <= limit ? AllreduceAlgo::one_shot : AllreduceAlgo::two_shot;
}

int allreduce_grid(const AllreducePeers& peers, AllreduceAlgo algo, std::size_t count,
                   DType dtype) {
  const std::size_t size = dtype_size(dtype);
  const std::size_t elems = size == 0 ? 1 : 16 / size;
  const std::size_t npacks = count / elems;
  const std::size_t n = static_cast<std::size_t>(std::max(peers.nranks, 1));
  const std::size_t work = algo == AllreduceAlgo::one_shot ? npacks : (npacks + n - 1) / n;
  const std::size_t blocks = (work + kAllreduceThreads - 1) / kAllreduceThreads;
  const std::size_t cap =
      static_cast<std::size_t>(std::clamp(peers.max_blocks, 1, kAllreduceMaxBlocks));
  return static_cast<int>(std::clamp<std::size_t>(blocks, 1, cap));
}

cudaError_t allreduce_launch(const AllreducePeers& peers, const AllreduceOp& op,
                             cudaStream_t stream) {
  if (peers.nranks < 1 || peers.nranks > kAllreduceMaxRanks || peers.rank < 0 ||
      peers.rank >= peers.nranks || peers.half_bytes % 16 != 0) {
    return cudaErrorInvalidValue;
  }
  for (int r = 0; r < peers.nranks; ++r) {
    if (peers.staging[r] == nullptr || peers.sync[r] == nullptr) return cudaErrorInvalidValue;
  }
  if (op.dtype != DType::fp32 && op.dtype != DType::bf16 && op.dtype != DType::fp16 &&
      op.dtype != DType::int32) {
    return cudaErrorInvalidValue;
  }
  if (op.count == 0) return cudaSuccess;
  if (op.in == nullptr || op.out == nullptr || op.count > peers.half_bytes / dtype_size(op.dtype)) {
    return cudaErrorInvalidValue;
  }
  const int grid = allreduce_grid(peers, op.algo, op.count, op.dtype);
  switch (op.dtype) {
    case DType::fp32: return launch_typed<Fp32>(peers, op, grid, stream);
    case DType::bf16: return launch_typed<Bf16>(peers, op, grid, stream);
    case DType::fp16: return launch_typed<Fp16>(peers, op, grid, stream);
    case DType::int32: return launch_typed<Int32>(peers, op, grid, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t allreduce_preload() {
  cudaFuncAttributes attr;
  const cudaError_t results[] = {
      cudaFuncGetAttributes(&attr, allreduce_kernel<Fp32, false>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Fp32, true>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Bf16, false>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Bf16, true>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Fp16, false>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Fp16, true>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Int32, false>),
      cudaFuncGetAttributes(&attr, allreduce_kernel<Int32, true>),
  };
  for (cudaError_t e : results) {
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

cudaError_t allreduce_read_status(const std::uint32_t* sync, std::uint32_t* status) {
  return cudaMemcpy(status, sync + kErrorWord, sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
}

cudaError_t allreduce_fill_input(void* data, std::size_t count, DType dtype, int rank,
                                 std::uint32_t seed, cudaStream_t stream) {
  return collective_fill(data, count, dtype, FillPattern{ValueRange::narrow, rank, 0}, seed,
                         stream);
}

cudaError_t allreduce_count_wrong(const void* data, std::size_t count, DType dtype, int nranks,
                                  std::uint32_t seed, unsigned long long* device_counter,
                                  cudaStream_t stream) {
  return collective_count_wrong(data, count, dtype, ExpectedPattern::sum_of(nranks, 0), seed,
                                device_counter, stream);
}

}  // namespace mgbench::kernels
