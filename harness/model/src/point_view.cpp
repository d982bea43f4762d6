// Typed read access to a point's JSON parts (see point_view.hpp).
#include "mgbench/model/point_view.hpp"

#include "mgbench/model/telemetry_keys.hpp"

namespace mgbench {
namespace {

std::optional<double> number_at(const Json& object, const char* key, const char* sub = nullptr) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  // A plain number where statistics were expected is taken as it is.
  if (sub != nullptr) return it->is_number() ? it->get<double>() : number_at(*it, sub);
  if (!it->is_number()) return std::nullopt;
  return it->get<double>();
}

int integer_at(const Json& object, const char* key, int fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

GaugeStats gauge_at(const Json& gpu, const telemetry_keys::Gauge& gauge) {
  namespace tk = telemetry_keys;
  return GaugeStats{number_at(gpu, gauge.key, tk::kMin), number_at(gpu, gauge.key, tk::kMean),
                    number_at(gpu, gauge.key, tk::kMax), number_at(gpu, gauge.key, tk::kMedian)};
}

}  // namespace

GpuTelemetry read_gpu_telemetry(const Json& g) {
  namespace tk = telemetry_keys;
  GpuTelemetry gpu;
  if (!g.is_object()) return gpu;
  gpu.device = integer_at(g, tk::kDevice, -1);
  gpu.node = integer_at(g, tk::kNode, 0);
  if (g.contains(tk::kHost) && g.at(tk::kHost).is_string()) {
    gpu.host = g.at(tk::kHost).get<std::string>();
  }
  gpu.power_w = gauge_at(g, tk::kPower);
  gpu.temp_c = gauge_at(g, tk::kTemp);
  gpu.sm_clock_mhz = gauge_at(g, tk::kSmClock);
  gpu.mem_clock_mhz = gauge_at(g, tk::kMemClock);
  gpu.avg_power_w = number_at(g, tk::kAvgPowerW);
  if (!gpu.avg_power_w) gpu.avg_power_w = gpu.power_w.mean;
  gpu.throttle_fraction = number_at(g, tk::kThrottleFraction);
  gpu.energy_j = number_at(g, tk::kEnergyJ);
  if (g.contains(tk::kThrottleTimeS) && g.at(tk::kThrottleTimeS).is_object()) {
    gpu.throttle_power_s = number_at(g.at(tk::kThrottleTimeS), tk::kThrottlePower);
    gpu.throttle_thermal_s = number_at(g.at(tk::kThrottleTimeS), tk::kThrottleThermal);
  }
  if (g.contains(tk::kThrottleReasons) && g.at(tk::kThrottleReasons).is_array()) {
    gpu.has_throttle_reasons = true;
    for (const Json& r : g.at(tk::kThrottleReasons)) {
      if (r.is_string()) gpu.throttle_reasons.push_back(r.get<std::string>());
    }
  }
  return gpu;
}

std::vector<GpuTelemetry> gpu_telemetry(const Json& telemetry) {
  std::vector<GpuTelemetry> out;
  const char* gpus = telemetry_keys::kGpus;
  if (!telemetry.is_object() || !telemetry.contains(gpus) || !telemetry.at(gpus).is_array()) {
    return out;
  }
  for (const Json& g : telemetry.at(gpus)) {
    if (g.is_object()) out.push_back(read_gpu_telemetry(g));
  }
  return out;
}

std::vector<GpuTelemetry> gpu_telemetry(const PointResult& point) {
  return gpu_telemetry(point.telemetry);
}

std::optional<double> metric_number(const PointResult& point, const std::string& name) {
  return number_at(point.metrics, name.c_str());
}

Json rank_detail(const PointResult& point, std::size_t i, const std::string& name) {
  const Json& extra = point.extra;
  if (!extra.is_object() || !extra.contains("ranks") || !extra.at("ranks").is_array()) {
    return Json();
  }
  const Json& ranks = extra.at("ranks");
  if (i >= ranks.size() || !ranks[i].is_object() || !ranks[i].contains("details")) return Json();
  const Json& details = ranks[i].at("details");
  if (!details.is_object() || !details.contains(name)) return Json();
  return details.at(name);
}

std::optional<double> rank_metric(const PointResult& point, std::size_t i,
                                  const std::string& name) {
  const Json metrics = rank_detail(point, i, "metrics");
  if (!metrics.is_object()) return std::nullopt;
  return number_at(metrics, name.c_str());
}

PowerLimit power_limit(const Json& environment, int device) {
  PowerLimit limit;
  if (!environment.is_object() || !environment.contains("gpus") ||
      !environment.at("gpus").is_array()) {
    return limit;
  }
  for (const Json& g : environment.at("gpus")) {
    if (!g.is_object() || integer_at(g, "index", -1) != device) continue;
    limit.enforced_w = number_at(g, "power_limit_w", "enforced");
    limit.default_w = number_at(g, "power_limit_w", "default");
    break;
  }
  return limit;
}

}  // namespace mgbench
