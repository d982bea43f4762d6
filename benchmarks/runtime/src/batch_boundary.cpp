// The `--batch-sizes auto` out-of-memory boundary (see batch_boundary.hpp).
#include "mgbench/bench/batch_boundary.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace mgbench::bench {

std::string BatchBoundary::series_key(const Params& params) {
  Params p = params;
  p.erase("batch");
  return p.dump();
}

std::string BatchBoundary::skip_reason(const Params& params) const {
  if (!params.contains("batch")) return {};
  const auto it = oom_batch_.find(series_key(params));
  if (it == oom_batch_.end() || params.integer("batch") <= it->second) return {};
  return fmt::format("above the OOM boundary: batch {} ran out of memory", it->second);
}

void BatchBoundary::record(const Params& params, Status status) {
  if (status != Status::oom || !params.contains("batch")) return;
  auto& known = oom_batch_[series_key(params)];
  const std::int64_t batch = params.integer("batch");
  known = known == 0 ? batch : std::min(known, batch);
}

}  // namespace mgbench::bench
