#pragma once
// A reusable barrier for the rank threads of one group that can be poisoned.
//
// wait() blocks until every rank has arrived. When one rank fails outside the steps the
// ranks share (it throws where the others wait, or leaves a phase early), it calls
// poison(): every rank that waits now, and every rank that arrives later, throws
// RankFailure carrying the first failing rank and its message. The barrier stays poisoned:
// the group cannot continue. Each wait names its step; ranks arriving at different steps of
// one round (they lost step with each other) poison the barrier instead of pairing
// unrelated steps.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "mgbench/core/error.hpp"

namespace mgbench::bench {

// Thrown by every waiter of a poisoned barrier.
class RankFailure : public EnvironmentError {
 public:
  RankFailure(int rank, const std::string& reason);
  int failed_rank() const { return rank_; }
  const std::string& reason() const { return reason_; }

 private:
  int rank_;
  std::string reason_;
};

class RankBarrier {
 public:
  explicit RankBarrier(int n);
  RankBarrier(const RankBarrier&) = delete;
  RankBarrier& operator=(const RankBarrier&) = delete;

  // Blocks until all n ranks have arrived at `step` (a string literal: the name of the shared
  // step). Throws RankFailure when the barrier is or becomes poisoned, or when another rank
  // of this round arrived at a different step.
  void wait(int rank, const char* step);
  // Marks the group failed (the first call wins) and wakes every waiter.
  void poison(int rank, const std::string& reason);
  bool poisoned() const;

 private:
  [[noreturn]] void throw_failure() const;  // mutex_ held

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  std::string step_;        // the step of the current round (set by its first arrival)
  int step_rank_ = 0;       // the rank that set it
  bool poisoned_ = false;
  int failed_rank_ = -1;
  std::string reason_;
};

}  // namespace mgbench::bench
