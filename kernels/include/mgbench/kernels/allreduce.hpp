#pragma once
// mgbench's own single-node sum all-reduce over peer pointers (host launchers).
//
// Every rank owns two device regions that its peers can address (peer access enabled):
// - staging: two halves of `half_bytes` each (double buffering). Op k uses half k % 2.
//   The input is copied into the staging half as part of the op, so user buffers need no
//   registration; out may equal in (in-place).
// - sync: a few counters and one flag word per (block, source rank), written by peers.
//
// Algorithms (the grid and the data partition are the same on every rank for a given op):
// - one-shot: copy in -> staging, one barrier, then every rank reads all peers' staging
//   and reduces locally (latency-bound sizes).
// - two-shot: copy in -> staging, barrier, reduce-scatter (rank r reduces slice r from all
//   peers into its own staging), barrier, all-gather (rank r reads slice p from peer p).
//
// Synchronisation: block b of every rank meets block b of every other rank at each barrier.
// A barrier writes the epoch into each peer's flag[b][me] with st.release.sys after a
// __syncthreads, then waits with ld.acquire.sys until its own flag[b][peer] >= epoch.
// Epochs come from an op counter (`seq`) kept in device memory and advanced by the last
// block of each launch, so they are monotonic, identical on all ranks and never reset (no
// reset races; CUDA-graph safe). Double buffering makes a barrier at the end unnecessary:
// when rank r starts op k+2 it has passed a barrier of op k+1 that every peer entered, so
// every peer has finished op k (stream order) and nobody still reads that staging half.
// Requirement: the ops of one group are issued in the same order on every rank and are
// stream-ordered on each rank (one stream, or explicit dependencies).
//
// Hang safety: a barrier that waits longer than `timeout_ns` (GPU %globaltimer) sets the
// rank's error word and gives up; every later op of that rank returns at once. The result is
// then wrong (the caller checks allreduce_read_status) instead of a hung GPU. Correctness
// never depends on timing.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "mgbench/kernels/collective_check.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::kernels {

inline constexpr int kAllreduceMaxRanks = 16;
inline constexpr int kAllreduceMaxBlocks = 256;
inline constexpr int kAllreduceThreads = 512;

enum class AllreduceAlgo { one_shot, two_shot };
const char* to_string(AllreduceAlgo algo);

// Bytes of the per-rank sync region (allocate in device memory and zero it once).
std::size_t allreduce_sync_bytes();

// One rank's view of the group. Pointers are valid on this rank's device (own memory or
// peer memory through peer access).
struct AllreducePeers {
  void* staging[kAllreduceMaxRanks] = {};
  std::uint32_t* sync[kAllreduceMaxRanks] = {};
  std::size_t half_bytes = 0;  // capacity of one staging half (a multiple of 16)
  int rank = 0;
  int nranks = 1;
  int max_blocks = 1;               // grid cap, identical on every rank (min SM count)
  std::uint64_t timeout_ns = 10000000000ULL;  // barrier give-up time
};

struct AllreduceOp {
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t count = 0;  // elements
  DType dtype = DType::fp32;  // fp32, bf16, fp16 or int32
  AllreduceAlgo algo = AllreduceAlgo::one_shot;
};

// The automatic choice: one-shot below a size threshold that shrinks with the rank count
// (one-shot moves (n-1)*S bytes per rank, two-shot 2(n-1)/n*S with one more barrier).
AllreduceAlgo allreduce_auto_algo(std::size_t bytes, int nranks);
// The grid a launch uses (a pure function of group-uniform values).
int allreduce_grid(const AllreducePeers& peers, AllreduceAlgo algo, std::size_t count, DType dtype);

// Enqueues out = sum over ranks of in. cudaErrorInvalidValue for an unsupported dtype, a
// message larger than half_bytes or a bad rank layout. count == 0 enqueues nothing.
cudaError_t allreduce_launch(const AllreducePeers& peers, const AllreduceOp& op,
                             cudaStream_t stream);
// Loads every all-reduce kernel on the current device now. With lazy module loading (the
// default since CUDA 12.2) a first launch may need a context synchronisation, which must
// not happen while a spinning kernel (a start gate, a peer's barrier) waits for it.
cudaError_t allreduce_preload();
// Reads the rank's error word (0: ok, 1: a barrier timed out). Synchronous.
cudaError_t allreduce_read_status(const std::uint32_t* sync, std::uint32_t* status);

// ---- verification data (nccl-tests style): small integers, exact in every dtype ------------

// Element `index` of rank `rank`'s input: one of -2, -1, 1, 2 (collective_check.hpp, the narrow
// range), so any sum over up to kAllreduceMaxRanks ranks (|sum| <= 32) is exact in
// bf16/fp16/fp32.
MGBENCH_HOST_DEVICE inline int allreduce_input_value(int rank, std::uint64_t index,
                                                     std::uint32_t seed) {
  return collective_input_value(ValueRange::narrow, rank, index, seed);
}

// The exact sum over ranks 0..nranks-1 of element `index`.
MGBENCH_HOST_DEVICE inline int allreduce_expected_value(int nranks, std::uint64_t index,
                                                        std::uint32_t seed) {
  return collective_expected_value(ExpectedPattern::sum_of(nranks, 0), index, seed);
}

// Fills `data` with rank `rank`'s input pattern.
cudaError_t allreduce_fill_input(void* data, std::size_t count, DType dtype, int rank,
                                 std::uint32_t seed, cudaStream_t stream);
// Adds to *device_counter (device memory; the caller zeroes it) the number of elements that
// differ from allreduce_expected_value(nranks, i, seed).
cudaError_t allreduce_count_wrong(const void* data, std::size_t count, DType dtype, int nranks,
                                  std::uint32_t seed, unsigned long long* device_counter,
                                  cudaStream_t stream);

}  // namespace mgbench::kernels
