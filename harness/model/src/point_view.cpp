// Typed read access to a point's JSON parts (see point_view.hpp).
#include "mgbench/model/point_view.hpp"

namespace mgbench {
namespace {

std::optional<double> number_at(const Json& object, const char* key, const char* sub = nullptr) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  // A plain number where statistics were expected ({"temp_c": 71}) is taken as it is.
  if (sub != nullptr) return it->is_number() ? it->get<double>() : number_at(*it, sub);
  if (!it->is_number()) return std::nullopt;
  return it->get<double>();
}

int integer_at(const Json& object, const char* key, int fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

}  // namespace

std::vector<GpuTelemetry> gpu_telemetry(const PointResult& point) {
  std::vector<GpuTelemetry> out;
  const Json& t = point.telemetry;
  if (!t.is_object() || !t.contains("gpus") || !t.at("gpus").is_array()) return out;
  for (const Json& g : t.at("gpus")) {
    if (!g.is_object()) continue;
    GpuTelemetry gpu;
    gpu.device = integer_at(g, "device", -1);
    gpu.node = integer_at(g, "node", 0);
    if (g.contains("host") && g.at("host").is_string()) gpu.host = g.at("host").get<std::string>();
    gpu.power_w = number_at(g, "avg_power_w");
    if (!gpu.power_w) gpu.power_w = number_at(g, "power_w", "mean");
    gpu.sm_clock_mhz = number_at(g, "sm_clock_mhz", "median");
    gpu.throttle_fraction = number_at(g, "throttle_fraction");
    gpu.max_temp_c = number_at(g, "temp_c", "max");
    gpu.energy_j = number_at(g, "energy_j");
    if (g.contains("throttle_reasons") && g.at("throttle_reasons").is_array()) {
      for (const Json& r : g.at("throttle_reasons")) {
        if (r.is_string()) gpu.throttle_reasons.push_back(r.get<std::string>());
      }
    }
    out.push_back(std::move(gpu));
  }
  return out;
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
