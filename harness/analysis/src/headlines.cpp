// The compared quantity of each workload, from the runs' presentation (see compare.hpp).
#include "mgbench/analysis/compare.hpp"

namespace mgbench {

CompareOptions with_headlines(CompareOptions options, const std::vector<const RunResult*>& runs) {
  for (const RunResult* run : runs) {
    if (run == nullptr) continue;
    for (const PointResult& point : run->points) {
      if (options.headlines.count(point.workload) != 0) continue;
      const Presentation p = presentation_for(*run, point.workload);
      if (p.headline_) options.headlines.emplace(point.workload, *p.headline_);
    }
  }
  return options;
}

}  // namespace mgbench
