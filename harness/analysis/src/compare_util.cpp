// The comparison's shared helpers: text and JSON look-ups, the walk over a point's telemetry,
// and the rule that keeps a throttled or noisy point from being judged.
#include <algorithm>
#include <cctype>
#include <iomanip>
#include <sstream>

#include "compare_detail.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/point_view.hpp"

namespace mgbench {
namespace compare_detail {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

bool starts_with(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string format_percent(double fraction) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << fraction * 100.0 << " %";
  return out.str();
}

std::string format_p(double p) {
  std::ostringstream out;
  out << std::setprecision(p < 0.001 ? 2 : 3) << p;
  return out.str();
}

std::string find_string(const Json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return "";
  for (const char* key : keys) {
    if (object.contains(key) && object[key].is_string() &&
        !object[key].get<std::string>().empty()) {
      return object[key].get<std::string>();
    }
    if (object.contains(key) && object[key].is_number()) return object[key].dump();
  }
  return "";
}

Json optional_json(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json test_json(const std::optional<MannWhitneyResult>& test) {
  if (!test) return nullptr;
  return Json{{"u_base", test->u1}, {"u_new", test->u2},    {"p_value", test->p_value},
              {"z", test->z},       {"exact", test->exact}, {"ties", test->ties}};
}

Json quantity_json(const Quantity& q) {
  return Json{{"metric", q.metric.empty() ? Json("time") : Json(q.metric)},
              {"unit", q.unit},
              {"higher_is_better", q.higher_is_better}};
}

// ---- telemetry walking ---------------------------------------------------------------------

std::vector<const Json*> telemetry_gpus(const Json& telemetry) {
  std::vector<const Json*> out;
  if (telemetry.is_object() && telemetry.contains("gpus") && telemetry["gpus"].is_array()) {
    for (const Json& gpu : telemetry["gpus"]) {
      if (gpu.is_object()) out.push_back(&gpu);
    }
  } else if (telemetry.is_array()) {
    for (const Json& gpu : telemetry) {
      if (gpu.is_object()) out.push_back(&gpu);
    }
  } else if (telemetry.is_object()) {
    out.push_back(&telemetry);
  }
  return out;
}

std::string gpu_label(const Json& gpu, std::size_t index) {
  for (const char* key : {"device", "index", "gpu"}) {
    if (gpu.contains(key) && gpu[key].is_number_integer()) {
      return "GPU " + std::to_string(gpu[key].get<long long>());
    }
  }
  return "GPU " + std::to_string(index);
}

bool is_severe_reason(const std::string& name_raw) {
  const std::string name = lower(name_raw);
  return contains(name, "thermal") || contains(name, "power_brake") ||
         contains(name, "powerbrake") || contains(name, "hw_slowdown");
}

void collect_severe_reasons(const Json& node, bool under_reason, std::set<std::string>& out) {
  if (node.is_string()) {
    if (under_reason && is_severe_reason(node.get<std::string>()))
      out.insert(node.get<std::string>());
    return;
  }
  if (node.is_array()) {
    for (const Json& item : node) collect_severe_reasons(item, under_reason, out);
    return;
  }
  if (!node.is_object()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const bool reason_key = contains(lower(it.key()), "reason");
    const Json& value = it.value();
    if (under_reason && is_severe_reason(it.key())) {
      const bool seen = (value.is_boolean() && value.get<bool>()) ||
                        (value.is_number() && value.get<double>() > 0) ||
                        (value.is_object() && !value.empty());
      if (seen) out.insert(it.key());
    }
    collect_severe_reasons(value, under_reason || reason_key, out);
  }
}

}  // namespace compare_detail

using namespace compare_detail;

namespace {

// True when everything that held this GPU below its clocks was the software power cap (the
// normal state of a GPU running at its power limit), judging from the reasons seen, else from
// the throttle-time counters. Unknown -> false.
bool only_power_capped(const GpuTelemetry& gpu) {
  if (gpu.has_throttle_reasons) {
    bool power_cap = false;
    for (const std::string& r : gpu.throttle_reasons) {
      const std::string name = lower(r);
      if (is_severe_reason(name)) return false;
      if (contains(name, "power_cap")) power_cap = true;
    }
    return power_cap;
  }
  return gpu.throttle_thermal_s.value_or(0) <= 0 && gpu.throttle_power_s.value_or(0) > 0;
}

}  // namespace

std::string unreliable_reason(const PointResult& point, double limit, bool power_cap_throttles) {
  std::vector<std::string> reasons;
  if (point.noisy) reasons.push_back("noisy (stopped at max time above the noise target)");
  const std::vector<const Json*> gpus = telemetry_gpus(point.telemetry);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const Json& gpu = *gpus[i];
    const GpuTelemetry figures = read_gpu_telemetry(gpu);
    const std::optional<double> fraction = figures.throttle_fraction;
    if (fraction && *fraction > limit && (power_cap_throttles || !only_power_capped(figures))) {
      reasons.push_back("throttled " + format_percent(*fraction) + " of the time on " +
                        gpu_label(gpu, i));
    }
    std::set<std::string> severe;
    collect_severe_reasons(gpu, false, severe);
    for (const std::string& reason : severe) reasons.push_back(reason + " on " + gpu_label(gpu, i));
  }
  std::string text;
  for (const std::string& r : reasons) text += (text.empty() ? "" : ", ") + r;
  return text;
}

}  // namespace mgbench
