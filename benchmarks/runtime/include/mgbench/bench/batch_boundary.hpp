#pragma once
// The out-of-memory boundary of `--batch-sizes auto`: points of one batch-size series (the
// same parameters but "batch") run in growing batch order; once a batch ran out of memory,
// every larger batch of that series is skipped instead of run. Host-only, no CUDA.
#include <cstdint>
#include <map>
#include <string>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::bench {

class BatchBoundary {
 public:
  // The parameters without "batch" (serialised): the key of a batch-size series.
  static std::string series_key(const Params& params);

  // Why a point with these parameters is skipped: its batch is above the smallest batch of
  // its series that ran out of memory. Empty when it runs (also without a "batch" param).
  std::string skip_reason(const Params& params) const;
  // Records a finished point: an `oom` point with a batch lowers its series' boundary.
  void record(const Params& params, Status status);

 private:
  std::map<std::string, std::int64_t> oom_batch_;  // series key -> smallest batch that ran out
};

}  // namespace mgbench::bench
