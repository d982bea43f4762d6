// Time-series charts (ChartSpec::timeseries): a per-GPU field of the run's time windows against
// time, one line per GPU, the throttled spans shaded. Renders whatever the windows hold; it
// knows no workload.
#include <cmath>
#include <map>

#include "chart_common.hpp"
#include "mgbench/model/telemetry_keys.hpp"

namespace mgbench::reports::detail {
namespace {

double number_or_nan(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

std::vector<svg::Band> span_bands(const Json& section) {
  std::vector<svg::Band> bands;
  const Json analysis = section.value("analysis", Json::object());
  if (!analysis.is_object() || !analysis.contains("throttled_spans")) return bands;
  for (const auto& s : analysis["throttled_spans"]) {
    const double x0 = number_or_nan(s, "t_start_s");
    const double x1 = number_or_nan(s, "t_end_s");
    if (std::isfinite(x0) && std::isfinite(x1) && x1 > x0) bands.push_back({x0, x1});
  }
  return bands;
}

// One series per device: the field at the middle of each window.
std::vector<svg::Series> window_series(const Json& windows, const std::string& field) {
  std::map<int, svg::Series> by_device;
  for (const auto& w : windows) {
    const double t = 0.5 * (number_or_nan(w, "t_start_s") + number_or_nan(w, "t_end_s"));
    if (!std::isfinite(t) || !w.contains("gpus") || !w["gpus"].is_array()) continue;
    for (const auto& g : w["gpus"]) {
      const double v = number_or_nan(g, field.c_str());
      const int device = g.is_object() ? g.value("device", -1) : -1;
      if (!std::isfinite(v)) continue;
      svg::Series& s = by_device[device];
      s.name = "GPU " + std::to_string(device);
      s.x.push_back(t);
      s.y.push_back(v);
    }
  }
  std::vector<svg::Series> out;
  for (auto& [device, s] : by_device) {
    s.colour = static_cast<int>(out.size() % 7);
    s.markers = s.x.size() <= 60;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

void timeseries_charts(const RunResult& run, const std::string& workload, const ChartSpec& spec,
                       ChartList& charts) {
  const Json& section = run.soak;
  if (!section.is_object() || !section.contains("windows") || !section["windows"].is_array()) {
    return;
  }
  std::vector<svg::Series> series = window_series(section["windows"], spec.metric);
  if (series.empty()) return;
  svg::LineChart c;
  c.title = workload + ": " + (spec.title.empty() ? spec.metric + " over time" : spec.title);
  c.x = make_axis("time (s)", svg::Scale::linear, svg::TickFormat::number);
  c.y = make_axis(spec.y_label.empty() ? spec.metric : spec.y_label, svg::Scale::linear,
                  svg::TickFormat::number);
  c.y.zero_based = false;
  c.series = std::move(series);
  c.bands = span_bands(section);
  c.band_label = telemetry_keys::kThrottled;
  charts.add(workload, spec.id, c, spec.metric);
}

}  // namespace mgbench::reports::detail
