// Per-GPU batch auto-growth for `--batch-sizes auto` (see batch_planner.hpp).
#include "mgbench/run/batch_planner.hpp"

#include <algorithm>

#include "mgbench/core/error.hpp"

namespace mgbench {

BatchAutoPlanner::BatchAutoPlanner(std::int64_t start, std::int64_t max)
    : start_(start), max_(max), pending_(start) {
  if (start < 1) {
    throw UsageError("invalid automatic batch start " + std::to_string(start) +
                     ": expected a positive integer");
  }
  if (max < start) {
    throw UsageError("invalid automatic batch maximum " + std::to_string(max) +
                     ": expected at least the start batch " + std::to_string(start));
  }
}

std::optional<std::int64_t> BatchAutoPlanner::next() {
  if (done_) return std::nullopt;
  return pending_;
}

void BatchAutoPlanner::record(std::int64_t batch, Status status,
                              std::optional<double> peak_bytes) {
  entries_.push_back({batch, status, peak_bytes});
  if (status == Status::ok) largest_fit_ = std::max(largest_fit_, batch);
  if (done_ || batch != pending_) return;

  if (status == Status::ok) {
    if (pending_ >= max_) {
      done_ = true;
      stop_reason_ = "max";
    } else {
      // No overflow: pending_ < max_ <= INT64_MAX, so compare before doubling.
      pending_ = pending_ > max_ / 2 ? max_ : pending_ * 2;
    }
    return;
  }
  done_ = true;
  stop_reason_ = to_string(status);
  if (status == Status::oom) oom_batch_ = batch;
}

Json BatchAutoPlanner::headroom_curve() const {
  Json points = Json::array();
  for (const Entry& e : entries_) {
    points.push_back(Json{{"batch", e.batch},
                          {"status", to_string(e.status)},
                          {"peak_bytes", e.peak_bytes ? Json(*e.peak_bytes) : Json(nullptr)}});
  }
  return Json{{"start", start_},
              {"max", max_},
              {"largest_fit", largest_fit_},
              {"oom_batch", oom_batch_ ? Json(*oom_batch_) : Json(nullptr)},
              {"stop_reason", stop_reason_},
              {"points", points}};
}

}  // namespace mgbench
