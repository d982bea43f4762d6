// Telemetry timelines of a run: power, temperature and SM clock per GPU, throttled intervals
// shaded.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "chart_common.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/telemetry_keys.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports::detail {
namespace {

namespace tk = telemetry_keys;

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
      g.contains(tk::kDevice) ? format_json_value(g[tk::kDevice]) : std::to_string(index);
  const int node =
      g.contains(tk::kNode) && g[tk::kNode].is_number_integer() ? g[tk::kNode].get<int>() : 0;
  std::string title = "GPU " + device;
  if (g.contains(tk::kHost) && g[tk::kHost].is_string()) {
    title += " on " + one_line(g[tk::kHost].get<std::string>());
  }
  if (node > 0) title += fmt::format(" (node {})", node);
  return {title, (node > 0 ? fmt::format("node{}-", node) : std::string()) + "gpu-" + device};
}

}  // namespace

void telemetry_charts(const RunResult& run, ChartList& charts) {
  const Json& ts = run.telemetry_series;
  if (!ts.is_object() || !ts.contains(tk::kPerGpu) || !ts[tk::kPerGpu].is_array()) return;
  const std::vector<double> t = numbers_of(ts.value(tk::kTimes, Json::array()));
  if (t.size() < 2) return;
  struct Metric {
    tk::Gauge gauge;
    bool zero_based;
  };
  const Metric metrics[] = {{tk::kPower, true}, {tk::kTemp, false}, {tk::kSmClock, false}};
  // Shared y ranges across GPUs so their charts compare at a glance.
  std::map<std::string, std::pair<double, double>> range;
  for (const auto& g : ts[tk::kPerGpu]) {
    for (const auto& m : metrics) {
      for (double v : numbers_of(g.value(m.gauge.key, Json::array()))) {
        if (!std::isfinite(v)) continue;
        auto& r = range.try_emplace(m.gauge.key, v, v).first->second;
        r.first = std::min(r.first, v);
        r.second = std::max(r.second, v);
      }
    }
  }
  const std::size_t stride = (t.size() + kMaxTimelinePoints - 1) / kMaxTimelinePoints;
  std::size_t gi = 0;
  for (const auto& g : ts[tk::kPerGpu]) {
    if (!g.is_object()) continue;
    const auto [title, id] = gpu_label(g, gi);
    const std::vector<svg::Band> bands =
        throttle_bands(t, numbers_of(g.value(tk::kThrottled, Json::array())));
    for (const auto& m : metrics) {
      const std::vector<double> v = numbers_of(g.value(m.gauge.key, Json::array()));
      if (v.empty()) continue;
      svg::LineChart c;
      c.title = title + ": " + m.gauge.name;
      c.width = 480;
      c.height = 300;
      // The run-level series joins the measured points back to back ("points" lists them).
      c.x = make_axis(ts.contains(tk::kPoints) ? "time in measured points (s)" : "time (s)",
                      svg::Scale::linear, svg::TickFormat::number);
      c.y = make_axis(m.gauge.axis, svg::Scale::linear, svg::TickFormat::number);
      c.y.zero_based = m.zero_based;
      if (range.count(m.gauge.key)) {
        const auto [lo, hi] = range[m.gauge.key];
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
      c.band_label = tk::kThrottled;
      charts.add("telemetry", "timeline", c, id + "-" + m.gauge.key);
    }
    ++gi;
  }
}


}  // namespace mgbench::reports::detail
