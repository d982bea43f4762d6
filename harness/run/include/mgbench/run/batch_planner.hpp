#pragma once
// `--batch-sizes auto` (issue 5): grows the per-GPU batch x2 after every `ok` point until the
// first `oom` (the memory boundary) or the maximum, and keeps the peak memory per batch (the
// headroom curve). One planner per GPU count and parameter set: the largest batch that fits is
// recorded per GPU count by its own planner. Pure logic, no GPU.
//
//   BatchAutoPlanner planner(8, 4096);
//   while (auto batch = planner.next()) {
//     PointResult p = run_point(*batch);
//     planner.record(*batch, p.status, peak_bytes_of(p));
//   }
//   planner.largest_fit();  // e.g. 256 when 512 ran out of memory
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

class BatchAutoPlanner {
 public:
  // Tries start, 2 start, 4 start, ... and finally `max` itself when the doubling passes it
  // (start 8, max 100: 8 16 32 64 100). Throws UsageError when start < 1 or max < start.
  BatchAutoPlanner(std::int64_t start, std::int64_t max);

  // The batch to run next (the same value until it is recorded); nullopt once finished.
  std::optional<std::int64_t> next();
  // The outcome of a batch. For the pending batch: `ok` grows it (or finishes at `max`);
  // `oom` finishes with the memory boundary found; any other status (failed, wrong, timeout,
  // skipped, waived) finishes without a boundary (stop_reason() names the status), because a
  // larger batch cannot be expected to do better. Records of other batches only join the
  // curve (and largest_fit() when ok).
  void record(std::int64_t batch, Status status, std::optional<double> peak_bytes);

  bool done() const { return done_; }
  // The largest batch recorded `ok`; 0 when none fit.
  std::int64_t largest_fit() const { return largest_fit_; }
  // The first batch that ran out of memory, if any.
  std::optional<std::int64_t> oom_batch() const { return oom_batch_; }
  // "" while running, then "oom", "max" or the status that ended the growth.
  const std::string& stop_reason() const { return stop_reason_; }
  // {start, max, largest_fit, oom_batch (null), stop_reason,
  //  points: [{batch, status, peak_bytes (null when unknown)}, ...] in record order}
  Json headroom_curve() const;

 private:
  struct Entry {
    std::int64_t batch;
    Status status;
    std::optional<double> peak_bytes;
  };
  std::int64_t start_, max_;
  std::int64_t pending_;
  bool done_ = false;
  std::int64_t largest_fit_ = 0;
  std::optional<std::int64_t> oom_batch_;
  std::string stop_reason_;
  std::vector<Entry> entries_;
};

}  // namespace mgbench
