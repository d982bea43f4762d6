// A run's derived analysis from its points: scaling series, verdicts, baseline outliers
// (verdict.hpp). The sweep computes it at its end and `mgbench report` again from the points, so
// results written by an older build get this build's explanations.
#include "mgbench/analysis/scaling.hpp"
#include "mgbench/analysis/verdict.hpp"

namespace mgbench {

void analyse_run(RunResult& run, ScalingMode mode, bool baseline_each) {
  const ThroughputLookup throughput = presentation_throughput(run);
  run.scaling = compute_scaling(run.points, mode, throughput);
  std::vector<PointResult> single;
  for (const auto& p : run.points) {
    if (p.gpus == 1) single.push_back(p);
  }
  const auto outliers =
      baseline_each ? baseline_outliers(single, 0.05, throughput) : std::vector<Json>{};
  if (baseline_each) run.summaries["baseline_each"] = outliers;
  run.verdicts = compute_verdicts(run.scaling, run.points, outliers, run.environment);
  for (RunVerdict& v : compute_link_verdicts(run)) run.verdicts.push_back(std::move(v));
}

}  // namespace mgbench
