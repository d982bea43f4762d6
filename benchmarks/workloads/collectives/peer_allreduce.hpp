#pragma once
// The project's own single-node all-reduce over peer pointers (kernels/allreduce), wrapped
// for use inside a RankPoint: buffers and flags are allocated and exchanged once (collective
// constructor), then run() enqueues one sum all-reduce on a stream.
//
// Rules for callers:
// - Every rank of the group calls the constructor together (it is collective) and then
//   issues the same sequence of run() calls (same counts, dtypes and algorithms), each rank
//   on one stream (or with explicit dependencies between its calls).
// - The input is copied into the peer-visible staging buffer as part of each op, so `in`
//   and `out` can be any device buffers of this rank (no registration); in == out is fine.
// - Destroy the objects of a group only when no rank's op is still running on any GPU
//   (e.g. synchronise every rank's stream and meet at a barrier first): a peer may still be
//   reading this rank's staging buffer until its own op finishes.
// - A barrier that waits longer than the settings' gate timeout gives up on the GPU (no
//   hang); the op and every later one are then wrong, and timed_out() returns true.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "mgbench/bench/executor.hpp"
#include "mgbench/kernels/fill.hpp"

namespace mgbench::bench {

// The element types the all-reduce sums: fp32, bf16, fp16 and int32 (UsageError otherwise).
kernels::DType reduce_dtype_from_string(const std::string& name);

enum class PeerAlgo { automatic, one_shot, two_shot };
// Their names, "auto", "one_shot", "two_shot": the all-reduce's "algo" axis (read with
// Params::choice) and to_string.
extern const std::initializer_list<std::pair<const char*, PeerAlgo>> kPeerAlgoNames;
const char* to_string(PeerAlgo algo);

class PeerAllreduce {
 public:
  // Collective over env's ranks: allocates a peer-visible staging buffer of `max_bytes`
  // (twice: double buffering) and the synchronisation flags, exchanges pointers. Throws
  // WaivedError when peer access is missing between any pair of the group (or the group
  // has more than 16 ranks); every rank throws the same kind of error when one fails.
  // `max_blocks` > 0 bounds the grid of every launch (e.g. to leave SMs to kernels the
  // all-reduce overlaps with); 0: one block per SM. Ranks that share a GPU (simulated ranks
  // in tests) share its SMs: the grid is divided among them, so that every block of every
  // rank is resident at once, which the barriers need.
  PeerAllreduce(RankEnv& env, std::size_t max_bytes, int max_blocks = 0);
  ~PeerAllreduce();
  PeerAllreduce(const PeerAllreduce&) = delete;
  PeerAllreduce& operator=(const PeerAllreduce&) = delete;

  // Enqueues out = sum over ranks of in (count elements); in == out is allowed.
  // Returns the algorithm used (automatic picks one-shot for small messages).
  PeerAlgo run(const void* in, void* out, std::size_t count, kernels::DType dtype,
               cudaStream_t stream, PeerAlgo algo = PeerAlgo::automatic);

  // The algorithm run() uses for this message (never automatic).
  PeerAlgo resolve(std::size_t count, kernels::DType dtype, PeerAlgo algo) const;
  // True once a barrier of this rank timed out (reads device memory; synchronous).
  bool timed_out() const;
  // Collective: waits until this rank's streams are idle (env.stream, env.comm_stream), meets
  // every rank, zeroes this rank's sync region (op counter, flags, error word) and meets them
  // again. Afterwards every rank starts from the first epoch, so a group goes on after a
  // barrier timeout (which left the error word set and the counters apart). Every rank's
  // earlier ops must have been issued on those streams.
  void reset(RankEnv& env);
  std::size_t max_bytes() const;
  int nranks() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mgbench::bench
