#pragma once
// Each point's figures as a share of what its GPU can do ("% of peak"), with the expected range
// of its GPU model where a public figure exists and the verdict when a value is below it: derived
// data (mgbench/analysis/peaks.hpp computes it after a sweep, `report` recomputes it), stored in
// results.json as "peaks".
#include <cstddef>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

struct PeakShare {
  std::size_t point = 0;  // PointResult::index
  std::string metric;     // a PointResult::metrics name
  double value = 0;       // the metric's value
  double peak = 0;        // what the same units reach at the hardware's peak, in its unit
  std::string peak_what;  // "the bf16 dense datasheet peak of the H200 SXM 141GB (989.4 TFLOP/s)"
  // The expected range of the GPU model for this point; typical 0: no public figure.
  double low = 0, typical = 0;
  std::string range_what, range_source;
  // Below `low`: "below what this GPU model usually reaches", with the causes the telemetry and
  // the doctor's checks support (none: none of them shows one).
  bool below = false;
  std::vector<std::string> causes;

  double fraction() const { return peak > 0 ? value / peak : 0.0; }
  bool has_range() const { return typical > 0; }
};

struct PeakReport {
  std::string gpu;                // the run's GPU name and memory, "" when unknown
  Json gpu_model;                 // its datasheet row (gpu_model_json), null: unknown model
  std::vector<PeakShare> shares;  // ordered by point, then metric

  bool empty() const { return gpu.empty() && gpu_model.is_null() && shares.empty(); }
  // The share of `metric` of point `point`, nullptr when there is none.
  const PeakShare* find(std::size_t point, const std::string& metric) const;
};

void to_json(Json& j, const PeakReport& r);
void from_json(const Json& j, PeakReport& r);  // throws on a malformed document

}  // namespace mgbench
