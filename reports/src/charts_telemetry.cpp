// Telemetry timelines of a run: power, temperature and SM clock per GPU, throttled intervals
// shaded.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "chart_common.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports::detail {
namespace {

constexpr std::size_t kMaxTimelinePoints = 1500;

std::vector<double> numbers_of(const Json& a) {
  std::vector<double> out;
  if (!a.is_array()) return out;
  out.reserve(a.size());
  for (const auto& v : a) out.push_back(v.is_number() ? v.get<double>() : NAN);
  return out;
}

// Throttled intervals from the 0/1 flags at full resolution.
std::vector<svg::Band> throttle_bands(const std::vector<double>& t,
                                      const std::vector<double>& thr) {
  std::vector<svg::Band> bands;
  for (std::size_t i = 0; i < std::min(thr.size(), t.size()); ++i) {
    if (!(thr[i] > 0)) continue;
    const double x0 = t[i];
    const double dt = i > 0 ? t[i] - t[i - 1] : t[1] - t[0];
    const double x1 = i + 1 < t.size() ? t[i + 1] : t[i] + dt;
    if (!bands.empty() && std::fabs(bands.back().x1 - x0) < 1e-12) {
      bands.back().x1 = x1;
    } else {
      bands.push_back({x0, x1});
    }
  }
  return bands;
}

// "GPU 3", or with a process per GPU "GPU 3 on host" (and the node past the first, whose
// host may have the same name), and the charts' id prefix.
std::pair<std::string, std::string> gpu_label(const Json& g, std::size_t index) {
  const std::string device =
      g.contains("device") ? format_json_value(g["device"]) : std::to_string(index);
  const int node = g.contains("node") && g["node"].is_number_integer() ? g["node"].get<int>() : 0;
  std::string title = "GPU " + device;
  if (g.contains("host") && g["host"].is_string()) {
    title += " on " + one_line(g["host"].get<std::string>());
  }
  if (node > 0) title += fmt::format(" (node {})", node);
  return {title, (node > 0 ? fmt::format("node{}-", node) : std::string()) + "gpu-" + device};
}

}  // namespace

void telemetry_charts(const RunResult& run, ChartList& charts) {
  const Json& ts = run.telemetry_series;
  if (!ts.is_object() || !ts.contains("per_gpu") || !ts["per_gpu"].is_array()) return;
  const std::vector<double> t = numbers_of(ts.value("t_s", Json::array()));
  if (t.size() < 2) return;
  struct Metric {
    const char* key;
    const char* name;
    const char* axis;
    bool zero_based;
  };
  const Metric metrics[] = {{"power_w", "power", "power (W)", true},
                            {"temp_c", "temperature", "temperature (°C)", false},
                            {"sm_clock_mhz", "SM clock", "SM clock (MHz)", false}};
  // Shared y ranges across GPUs so their charts compare at a glance.
  std::map<std::string, std::pair<double, double>> range;
  for (const auto& g : ts["per_gpu"]) {
    for (const auto& m : metrics) {
      for (double v : numbers_of(g.value(m.key, Json::array()))) {
        if (!std::isfinite(v)) continue;
        auto& r = range.try_emplace(m.key, v, v).first->second;
        r.first = std::min(r.first, v);
        r.second = std::max(r.second, v);
      }
    }
  }
  const std::size_t stride = (t.size() + kMaxTimelinePoints - 1) / kMaxTimelinePoints;
  std::size_t gi = 0;
  for (const auto& g : ts["per_gpu"]) {
    if (!g.is_object()) continue;
    const auto [title, id] = gpu_label(g, gi);
    const std::vector<svg::Band> bands =
        throttle_bands(t, numbers_of(g.value("throttled", Json::array())));
    for (const auto& m : metrics) {
      const std::vector<double> v = numbers_of(g.value(m.key, Json::array()));
      if (v.empty()) continue;
      svg::LineChart c;
      c.title = title + ": " + m.name;
      c.width = 480;
      c.height = 300;
      // The run-level series joins the measured points back to back ("points" lists them).
      c.x = make_axis(ts.contains("points") ? "time in measured points (s)" : "time (s)",
                      svg::Scale::linear, svg::TickFormat::number);
      c.y = make_axis(m.axis, svg::Scale::linear, svg::TickFormat::number);
      c.y.zero_based = m.zero_based;
      if (range.count(m.key)) {
        const auto [lo, hi] = range[m.key];
        const double pad = std::max(1.0, (hi - lo) * 0.05);
        if (!m.zero_based) c.y.min = std::floor(lo - pad);
        c.y.max = hi + pad;
      }
      svg::Series s;
      s.name = "";
      s.colour = static_cast<int>(gi % 7);
      s.markers = false;
      s.in_legend = false;
      for (std::size_t i = 0; i < std::min(v.size(), t.size()); i += stride) {
        s.x.push_back(t[i]);
        s.y.push_back(v[i]);
      }
      c.series.push_back(std::move(s));
      c.bands = bands;
      c.band_label = "throttled";
      charts.add("telemetry", "timeline", c, id + "-" + m.key);
    }
    ++gi;
  }
}


}  // namespace mgbench::reports::detail
