// Builds the report's charts from a RunResult and the workloads' presentation (charts.hpp),
// and the helpers the chart kinds share (chart_common.hpp).
#include "mgbench/reports/charts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "chart_common.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {

std::string gpus_label(int n) { return n == 1 ? "1 GPU" : fmt::format("{} GPUs", n); }

namespace detail {
namespace {

constexpr std::size_t kMaxSeriesPerChart = 8;

bool positive_ratio_at_least(const std::vector<double>& xs, double ratio) {
  double lo = INFINITY, hi = 0;
  for (double x : xs) {
    if (!(x > 0)) return false;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  return !xs.empty() && hi / lo >= ratio;
}

}  // namespace

void ChartList::add(const std::string& section, const std::string& kind, svg::LineChart chart,
                    const std::string& key) {
  if (!svg::has_data(chart)) return;
  chart.id = make_id(section, kind, key);
  entries.push_back({section, chart.id, chart.title, kind, svg::render(chart), false});
}

void ChartList::add(const std::string& section, const std::string& kind,
                    svg::StackedBarChart chart, const std::string& key) {
  if (!svg::has_data(chart)) return;
  chart.id = make_id(section, kind, key);
  entries.push_back({section, chart.id, chart.title, kind, svg::render(chart), false});
}

std::string ChartList::make_id(const std::string& section, const std::string& kind,
                               const std::string& key) {
  std::string id = slug(section + "-" + kind + (key.empty() ? "" : "-" + key));
  if (id.size() > 64) id.resize(64);
  while (!id.empty() && id.back() == '-') id.pop_back();
  if (used_.insert(id).second) return id;
  for (int k = 2;; ++k) {
    const std::string candidate = id + "-" + std::to_string(k);
    if (used_.insert(candidate).second) return candidate;
  }
}

svg::Scale scale_of(AxisScale scale, const std::vector<double>& xs) {
  switch (scale) {
    case AxisScale::linear: return svg::Scale::linear;
    case AxisScale::log2: return svg::Scale::log2;
    case AxisScale::log10: return svg::Scale::log10;
    case AxisScale::automatic: break;
  }
  return positive_ratio_at_least(xs, 3) ? svg::Scale::log2 : svg::Scale::linear;
}

svg::Axis x_axis_for(const AxisSpec& axis, const std::string& label,
                     const std::vector<double>& xs) {
  const svg::TickFormat format =
      axis.format_ == ValueFormat::bytes ? svg::TickFormat::bytes : svg::TickFormat::integer;
  svg::Axis a = make_axis(label, scale_of(axis.scale, xs), format);
  a.zero_based = false;
  if (a.scale == svg::Scale::linear) {
    std::set<double> ticks(xs.begin(), xs.end());
    if (ticks.size() <= 8) a.ticks.assign(ticks.begin(), ticks.end());
  }
  return a;
}

svg::Axis make_axis(std::string label, svg::Scale scale, svg::TickFormat format) {
  svg::Axis a;
  a.label = std::move(label);
  a.scale = scale;
  a.format = format;
  return a;
}

std::string series_name(const PointResult& p, const std::vector<std::string>& keys,
                        bool with_gpus) {
  std::string out;
  if (with_gpus) out = gpus_label(p.gpus);
  if (!keys.empty()) {
    const std::string params = params_short_label(p.params, keys);
    if (!params.empty()) out += (out.empty() ? "" : " · ") + params;
  }
  return out.empty() ? "measured" : out;
}

// Groups points into series keyed by (GPU count when it varies, `series_keys`), x from the
// parameter `x_key`, y from `y`; points where y is missing are left out.
std::vector<svg::Series> make_series(const Points& points, const std::string& x_key,
                                     const std::vector<std::string>& series_keys, bool with_gpus,
                                     const YFn& y, const std::string& x_word) {
  std::map<std::string, std::vector<const PointResult*>> groups;
  std::vector<std::string> order;
  for (const auto* p : points) {
    const std::string name = series_name(*p, series_keys, with_gpus);
    if (!groups.count(name)) order.push_back(name);
    groups[name].push_back(p);
  }
  // Order series by GPU count, then by name.
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    const int ga = groups[a].front()->gpus, gb = groups[b].front()->gpus;
    if (ga != gb) return ga < gb;
    return a < b;
  });
  std::vector<svg::Series> out;
  for (const auto& name : order) {
    auto pts = groups[name];
    std::stable_sort(pts.begin(), pts.end(), [&](const PointResult* a, const PointResult* b) {
      return param_number(a->params, x_key).value_or(0) <
             param_number(b->params, x_key).value_or(0);
    });
    svg::Series s;
    s.name = name;
    for (const auto* p : pts) {
      const auto x = param_number(p->params, x_key);
      const auto v = y(*p);
      if (!x || !v) continue;
      s.x.push_back(*x);
      s.y.push_back(*v);
      s.point_titles.push_back(fmt::format("{}: {} {}, {}", name, x_word,
                                           param_string(p->params, x_key), format_sig(*v, 4)));
    }
    if (!s.x.empty()) out.push_back(std::move(s));
  }
  if (out.size() > kMaxSeriesPerChart * 2) out.resize(kMaxSeriesPerChart * 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].colour = static_cast<int>(i % 7);
    if (i >= 7) out[i].line = svg::LineStyle::dashed;
  }
  // A single unnamed line needs no legend.
  if (out.size() == 1 && out[0].name == "measured") out[0].in_legend = false;
  return out;
}

bool gpus_vary(const Points& points) {
  std::set<int> g;
  for (const auto* p : points) g.insert(p->gpus);
  return g.size() > 1;
}

std::vector<std::string> without(std::vector<std::string> keys, const std::set<std::string>& drop) {
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [&](const std::string& k) { return drop.count(k) > 0; }),
             keys.end());
  return keys;
}

Points ok_points(const Points& points) {
  Points out;
  for (const auto* p : points) {
    if (p->status == Status::ok) out.push_back(p);
  }
  return out;
}

std::vector<double> x_values(const Points& points, const std::string& key) {
  std::vector<double> xs;
  for (const auto* p : points) {
    if (const auto v = param_number(p->params, key)) xs.push_back(*v);
  }
  return xs;
}

// Splits points by the values of `keys` (one chart each), in order of appearance.
std::vector<std::pair<std::string, Points>> split_by(const Points& points,
                                                     const std::vector<std::string>& keys) {
  return group_in_order(points, [&](const PointResult* p) {
    return keys.empty() ? std::string() : params_short_label(p->params, keys);
  });
}

namespace {
bool varies(const Points& points, const std::string& key) {
  const auto vary = varying_params(points);
  return std::find(vary.begin(), vary.end(), key) != vary.end();
}

}  // namespace

// The x axis of a chart: the declared one, else the first declared axis that varies.
std::optional<AxisSpec> x_axis_of(const Presentation& presentation, const ChartSpec& spec,
                                  const Points& points) {
  for (const AxisSpec& a : presentation.axes) {
    if (spec.x.empty() ? varies(points, a.param) : a.param == spec.x) return a;
  }
  if (!spec.x.empty() && varies(points, spec.x)) return AxisSpec(spec.x, spec.x);
  return std::nullopt;
}

// The axis label: `equal_label` when every companion equals the axis value in every point.
std::string axis_label(const AxisSpec& axis, const Points& points) {
  bool equal = !axis.companions.empty() && !axis.equal_label.empty();
  for (const auto* p : points) {
    for (const auto& c : axis.companions) {
      const ParamValue* companion = p->params.find(c);
      const ParamValue* value = p->params.find(axis.param);
      if (companion == nullptr || value == nullptr || *companion != *value) equal = false;
    }
  }
  if (equal) return axis.equal_label;
  return axis.label.empty() ? axis.param : axis.label;
}

}  // namespace detail

std::vector<ChartEntry> build_charts(const RunResult& run, const Prediction* prediction) {
  detail::ChartList charts;
  const auto order = workloads_of(run);
  for (const auto& w : order) {
    const Presentation presentation = presentation_for(run, w);
    const auto& specs = presentation.charts;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      switch (specs[i].kind) {
        case ChartKind::scaling:
          detail::scaling_charts(run, w, presentation, charts, prediction);
          break;
        case ChartKind::line: {
          // Consecutive line charts split the same way interleave per split value.
          std::vector<const ChartSpec*> group{&specs[i]};
          while (i + 1 < specs.size() && specs[i + 1].kind == ChartKind::line &&
                 specs[i + 1].split_by_ == specs[i].split_by_) {
            group.push_back(&specs[++i]);
          }
          detail::line_charts(run, w, presentation, group, charts);
          break;
        }
        case ChartKind::memory:
          detail::memory_charts(run, w, presentation, specs[i], charts);
          break;
        case ChartKind::breakdown:
          detail::breakdown_charts(run, w, presentation, specs[i], charts);
          break;
        case ChartKind::timeseries: detail::timeseries_charts(run, w, specs[i], charts); break;
        case ChartKind::overlay: detail::overlay_charts(run, w, specs[i], charts); break;
      }
    }
  }
  detail::telemetry_charts(run, charts);
  // Stable order: by workload appearance, then telemetry.
  std::vector<ChartEntry> out;
  for (const auto& w : order) {
    for (const auto& e : charts.entries) {
      if (e.section == w) out.push_back(e);
    }
  }
  for (const auto& e : charts.entries) {
    if (std::find(order.begin(), order.end(), e.section) == order.end()) out.push_back(e);
  }
  return out;
}

}  // namespace mgbench::reports
