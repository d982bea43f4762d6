#include "point_record.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "mgbench/model/measurement.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "timing_methods.hpp"

namespace mgbench::bench {

void record_hosts(PointResult& result, const std::vector<Json>& details) {
  std::vector<std::string> hosts;
  for (const Json& d : details) {
    const std::string host = d.value("host", "");
    if (!host.empty() && std::find(hosts.begin(), hosts.end(), host) == hosts.end()) {
      hosts.push_back(host);
    }
  }
  if (result.placement.hosts.empty() &&
      static_cast<int>(hosts.size()) == result.placement.nodes) {
    result.placement.hosts = hosts;
  }
}

void record_method_and_noise(PointResult& result, const RankEnv& env, double max_noise) {
  result.measured.timing = env.timing;
  result.measured.cache = env.cache;
  if (result.samples.empty()) return;
  const NoiseAssessment noise = assess_noise(result.stats, max_noise, result.telemetry);
  result.noisy = noise.noisy;
  result.spread = spread_of(noise);
}

void add_method_metrics(PointResult& result, double second_s,
                        const std::vector<LimitCheck>& limits,
                        const std::vector<int>& devices) {
  const TimingMethod method = result.measured.timing.value_or(TimingMethod::device);
  if (second_s > 0) {
    result.metrics[std::string(to_string(method)) + "_time_us"] = result.stats.median * 1e6;
    result.metrics[std::string(to_string(other_method(method))) + "_time_us"] = second_s * 1e6;
  }
  if (!limits.empty()) {
    result.flags =
        impossible_values(result.metrics, result.params, limits, group_limits(devices));
  }
}

void check_stopping(const StoppingCriteria& c) {
  const bool ok = std::isfinite(c.max_noise) && c.max_noise >= 0 && std::isfinite(c.min_time_s) &&
                  c.min_time_s >= 0 && std::isfinite(c.max_time_s) && c.max_time_s > 0;
  if (!ok) {
    throw std::invalid_argument(fmt::format(
        "stop rule: invalid criteria (max_noise {}, min_time_s {}, max_time_s {})", c.max_noise,
        c.min_time_s, c.max_time_s));
  }
}

bool observes_telemetry(const GroupContext& ctx, int rank) {
  return ctx.observer != nullptr && (ctx.processes != nullptr || rank == 0);
}

Json end_point_telemetry(const GroupContext& ctx, int rank, const std::string& step) {
  Json mine = observes_telemetry(ctx, rank) ? ctx.observer->end_point() : Json();
  if (ctx.processes != nullptr && ctx.spec.settings.telemetry) {
    mine = gather_node_telemetry(*ctx.processes, mine, step);
  }
  return rank == 0 ? mine : Json();
}

}  // namespace mgbench::bench
