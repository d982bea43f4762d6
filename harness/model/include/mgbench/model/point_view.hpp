#pragma once
// Typed read access to the parts of a point (and of a run's environment) that are still JSON:
// each GPU's telemetry summary, a rank's own metrics, a GPU's power limit. Absent or malformed
// values read as nullopt / empty, never throw (results files come from other machines).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

// A gauge's statistics over a point (telemetry_keys.hpp); a plain number where the statistics
// were expected is taken for each of them.
struct GaugeStats {
  std::optional<double> min, mean, max, median;
};

// One GPU's telemetry summary (telemetry.gpus[]): `node` is its node's place in rank order and
// `host` its host ("" and 0 on one node). The one reader of these keys.
struct GpuTelemetry {
  int device = -1;
  int node = 0;
  std::string host;
  GaugeStats power_w, temp_c, sm_clock_mhz, mem_clock_mhz;  // the samples'
  std::optional<double> avg_power_w;  // over the point (energy / time), else the samples' mean
  std::optional<double> throttle_fraction;  // of the point's time
  std::optional<double> energy_j;           // over the point
  std::optional<double> throttle_power_s, throttle_thermal_s;  // time the counters say was lost
  bool has_throttle_reasons = false;  // the summary lists the reasons seen (maybe none)
  std::vector<std::string> throttle_reasons;
};
GpuTelemetry read_gpu_telemetry(const Json& gpu);  // one entry; defaults where not an object
std::vector<GpuTelemetry> gpu_telemetry(const Json& telemetry);  // every object of its "gpus"
std::vector<GpuTelemetry> gpu_telemetry(const PointResult& point);

// A number of PointResult::metrics.
std::optional<double> metric_number(const PointResult& point, const std::string& name);
// A rank's detail (extra.ranks[i].details.<name>, the i-th entry); null when absent.
Json rank_detail(const PointResult& point, std::size_t i, const std::string& name);
// A rank's own metric (extra.ranks[i].details.metrics.<name>, the i-th entry), e.g. the training
// step's compute time without communication on that rank.
std::optional<double> rank_metric(const PointResult& point, std::size_t i, const std::string& name);

// A GPU's power limits from the environment (environment.gpus[] with "index" == device).
struct PowerLimit {
  std::optional<double> enforced_w, default_w;
};
PowerLimit power_limit(const Json& environment, int device);

}  // namespace mgbench
