#pragma once
// What the training-step workloads (train_step, transformer_step) share around their replicas:
// the peak device memory of a point, the set-up meeting of the ranks, and the parts of a
// verification that one rank may fail alone.
//
// Peak memory per rank: device memory in use above the point's set-up baseline, less what the
// libraries allocate lazily (NCCL's buffers, once per group: every collective the point uses
// runs once at the end of set-up, warm(); CUDA's and cuBLAS's on the first op, first_ops()),
// which is reported apart as library_lazy_bytes; at least the bytes the point allocated.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>

#include "mgbench/bench/executor.hpp"

namespace mgbench::bench {

// Device memory in use on the current device (total - free).
std::size_t device_used_bytes();

class StepMemory {
 public:
  // The baseline of `device` (made current): before the point allocates anything.
  explicit StepMemory(int device);
  // Runs `collectives` (which enqueue every collective of the point once and synchronise) and
  // counts what the device gained as the libraries' lazy allocation; then notes the set-up.
  void warm(const std::function<void()>& collectives);
  // Call at the start of every timed op: the device's gain between set-up and the second op is
  // the libraries' first-use allocation (a host query before the gate opens; nothing timed
  // waits for it).
  void first_ops();
  // Samples the memory in use (after set-up, after the samples, after the verification).
  void note();
  std::uint64_t peak_bytes(std::uint64_t allocated) const;
  std::uint64_t lazy_bytes() const { return lazy_; }

 private:
  std::size_t before_ = 0, after_setup_ = 0, peak_ = 0, lazy_ = 0;
  int calls_ = 0;
};

// Every rank meets the others exactly once after its set-up, failed (`error`) or not, before
// any collective: rethrows its own error; a rank whose peer failed throws WaivedError (the
// mildest status, so that the point's status is the failing rank's).
void meet_after_setup(const RankEnv& env, std::exception_ptr error);

// Runs a part of a verification that this rank may fail alone while the other ranks go on to a
// collective: the failure fails the group, so that no rank waits for this one, then propagates.
template <typename F>
auto alone(const RankEnv& env, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    env.fail_group(e.what());
    throw;
  }
}

}  // namespace mgbench::bench
