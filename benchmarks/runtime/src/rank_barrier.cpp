// The poisonable rank barrier (see rank_barrier.hpp).
#include "mgbench/bench/rank_barrier.hpp"

#include <fmt/format.h>

namespace mgbench::bench {

RankFailure::RankFailure(int rank, const std::string& reason)
    : EnvironmentError(fmt::format("rank {} failed: {}", rank, reason)), rank_(rank),
      reason_(reason) {}

RankBarrier::RankBarrier(int n) : n_(n) {
  if (n < 1) throw UsageError("a rank barrier needs at least one rank");
}

void RankBarrier::wait(int rank, const char* step) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (poisoned_) throw_failure();
  if (arrived_ == 0) {
    step_ = step;
    step_rank_ = rank;
  } else if (step_ != step) {
    poisoned_ = true;
    failed_rank_ = rank;
    reason_ = fmt::format("ranks out of step: rank {} reached '{}' while rank {} waits at '{}'",
                          rank, step, step_rank_, step_);
    cv_.notify_all();
    throw_failure();
  }
  const std::uint64_t gen = generation_;
  if (++arrived_ == n_) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != gen || poisoned_; });
  // A completed round counts even when a poison follows before this waiter wakes.
  if (generation_ == gen) throw_failure();
}

void RankBarrier::poison(int rank, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (poisoned_) return;
    poisoned_ = true;
    failed_rank_ = rank;
    reason_ = reason;
  }
  cv_.notify_all();
}

bool RankBarrier::poisoned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return poisoned_;
}

void RankBarrier::throw_failure() const { throw RankFailure(failed_rank_, reason_); }

}  // namespace mgbench::bench
