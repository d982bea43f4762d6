// Scaling charts of a workload: headline throughput vs GPU count with the ideal line (one chart
// per parameter set) and the efficiency of all sets in one chart.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "chart_common.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports::detail {
namespace {

constexpr std::size_t kMaxScalingCharts = 6;

// A series sorted by GPU count, with a distinct GPU count at least twice. `left_out`: rows
// whose point carries an impossible value; `efficiency` is empty when the baseline is one.
struct Curve {
  const ScalingSeries* series = nullptr;
  std::vector<double> gpus, throughput, efficiency;
  std::vector<int> nodes;
  std::size_t left_out = 0;
};

// The indices of the points with an impossible value. Every metric of a point comes from the
// same measured time, so one impossible metric makes its headline throughput impossible too.
std::set<std::size_t> flagged_points(const RunResult& run) {
  std::set<std::size_t> out;
  for (const PointResult& p : run.points) {
    if (!p.flags.empty()) out.insert(p.index);
  }
  return out;
}

Curve curve_of(const ScalingSeries& s, const std::set<std::size_t>& flagged) {
  std::vector<const ScalingRow*> rows;
  for (const ScalingRow& r : s.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ScalingRow* a, const ScalingRow* b) { return a->gpus < b->gpus; });
  Curve c{&s, {}, {}, {}, {}, 0};
  // The efficiencies are ratios to the baseline (rows[0]): none is drawn if it is impossible.
  const bool baseline_flagged = !s.rows.empty() && flagged.count(s.rows.front().point_index);
  for (const ScalingRow* r : rows) {
    if (flagged.count(r->point_index)) {
      ++c.left_out;
      continue;
    }
    c.gpus.push_back(r->gpus);
    c.throughput.push_back(r->throughput);
    c.efficiency.push_back(r->efficiency);
    c.nodes.push_back(r->nodes);
  }
  if (baseline_flagged) c.efficiency.clear();
  return c;
}

std::vector<Curve> curves_of(const RunResult& run, const std::string& workload) {
  const std::set<std::size_t> flagged = flagged_points(run);
  std::vector<Curve> out;
  for (const ScalingSeries& s : run.scaling) {
    if (s.workload != workload) continue;
    Curve c = curve_of(s, flagged);
    if (std::set<double>(c.gpus.begin(), c.gpus.end()).size() >= 2) out.push_back(std::move(c));
  }
  return out;
}

std::string left_out_note(std::size_t n) {
  return fmt::format("{} point{} with impossible values left out (see Flags)", n,
                     n == 1 ? "" : "s");
}

// Too many parameter sets: the largest value of the first declared axis that varies, per
// combination of the other (non-axis) parameters.
std::vector<Curve> reduce(std::vector<Curve> all, const std::vector<std::string>& vary,
                          const Presentation& presentation) {
  std::string size_key;
  std::set<std::string> axis_params;
  for (const AxisSpec& a : presentation.axes) {
    if (size_key.empty() && std::find(vary.begin(), vary.end(), a.param) != vary.end()) {
      size_key = a.param;
    }
    axis_params.insert(a.param);
    axis_params.insert(a.companions.begin(), a.companions.end());
  }
  if (all.size() <= kMaxScalingCharts || size_key.empty()) return all;
  std::map<std::string, Curve> best;
  std::vector<std::string> keep_order;
  for (const auto& c : all) {
    Params rest = c.series->params;
    for (const auto& k : axis_params) rest.erase(k);
    const std::string key = rest.dump();
    const double size = param_number(c.series->params, size_key).value_or(0);
    if (!best.count(key)) {
      keep_order.push_back(key);
      best[key] = c;
    } else if (size > param_number(best[key].series->params, size_key).value_or(0)) {
      best[key] = c;
    }
  }
  std::vector<Curve> out;
  for (const auto& k : keep_order) out.push_back(best[k]);
  return out;
}

svg::LineChart throughput_chart(const std::string& workload, const Presentation& presentation,
                                const Curve& c, const std::string& label, const svg::Axis& x) {
  const ScalingSeries& s = *c.series;
  svg::LineChart chart;
  chart.title = workload + ": " + presentation.metric_label(s.metric) + " vs GPU count";
  chart.subtitle = label + (s.mode.empty() ? "" : " · " + s.mode + " scaling");
  if (c.left_out > 0) chart.subtitle += " · " + left_out_note(c.left_out);
  chart.height = 360;
  chart.x = x;
  chart.y = make_axis(presentation.metric_axis_label(s.metric), svg::Scale::linear,
                      svg::TickFormat::number);
  svg::Series measured;
  measured.name = "measured";
  measured.colour = 0;
  measured.x = c.gpus;
  measured.y = c.throughput;
  svg::Series ideal;
  ideal.name = "ideal (linear)";
  ideal.colour = 6;
  ideal.line = svg::LineStyle::dashed;
  ideal.markers = false;
  // Ideal: the smallest GPU count's throughput scaled linearly.
  for (double g : c.gpus) {
    ideal.x.push_back(g);
    ideal.y.push_back(c.throughput.front() * g / c.gpus.front());
  }
  chart.series = {ideal, measured};
  return chart;
}

// A vertical line where each node count starts ("2 nodes" at 16 GPUs), from the first curve
// that ran on several nodes; nothing for single-node runs.
void mark_node_boundaries(const std::vector<Curve>& curves, std::size_t shown,
                          svg::LineChart& chart) {
  for (std::size_t i = 0; i < shown; ++i) {
    const Curve& c = curves[i];
    if (*std::max_element(c.nodes.begin(), c.nodes.end()) <= 1) continue;
    for (std::size_t k = 1; k < c.nodes.size(); ++k) {
      if (c.nodes[k] != c.nodes[k - 1]) {
        chart.ref_lines.push_back({c.gpus[k], fmt::format("{} nodes", c.nodes[k]), true});
      }
    }
    chart.subtitle += (chart.subtitle.empty() ? "" : " · ") +
                      std::string("vertical lines: where the run spans more nodes");
    return;
  }
}

// "dashed: predicted (nvlink4, ib-ndr, 8 GPUs/node)": the links and node size predicted on.
std::string predicted_note(const Prediction& p) {
  return fmt::format("dashed: predicted ({}, {}, {} GPUs/node)", p.intra.link.name,
                     p.inter.link.name, p.gpus_per_node);
}

// The lowest finite value of `series`, or `lowest`.
double lowest_of(const svg::Series& series, double lowest) {
  for (double v : series.y) {
    if (std::isfinite(v)) lowest = std::min(lowest, v);
  }
  return lowest;
}

// The efficiency of curve `i` (in %), and its prediction beside it when there is one; `lowest`
// and `ticks` widen to hold them.
void add_efficiency(svg::LineChart& eff, const Curve& c, std::size_t i, const std::string& label,
                    const Prediction* prediction, double& lowest, std::set<double>& ticks) {
  svg::Series e;
  e.name = label;
  e.colour = static_cast<int>(i % 7);
  e.x = c.gpus;
  for (double v : c.efficiency) e.y.push_back(v * 100.0);
  lowest = lowest_of(e, lowest);
  if (prediction != nullptr) {
    auto p = predicted_efficiency(*prediction, *c.series,
                                  label == "measured" ? "predicted" : label + " (predicted)",
                                  e.colour);
    if (p) {
      lowest = lowest_of(*p, lowest);
      ticks.insert(p->x.begin(), p->x.end());
      eff.series.push_back(std::move(e));
      eff.series.push_back(std::move(*p));
      return;
    }
  }
  eff.series.push_back(std::move(e));
}

}  // namespace

std::optional<svg::Series> predicted_efficiency(const Prediction& prediction,
                                                const ScalingSeries& series,
                                                const std::string& name, int colour) {
  if (series.baseline_gpus != 1) return std::nullopt;
  for (const PredictedSeries& p : prediction.series) {
    if (p.workload != series.workload || p.params != series.params) continue;
    svg::Series out;
    out.name = name;
    out.colour = colour;
    out.line = svg::LineStyle::dashed;
    for (const PredictedRow& r : p.rows) {
      if (!r.efficiency) continue;
      out.x.push_back(r.gpus);
      out.y.push_back(*r.efficiency * 100.0);
      out.point_titles.push_back(fmt::format("{}: {}, {} ({} - {})", name, gpus_label(r.gpus),
                                             format_percent(*r.efficiency, 1),
                                             format_percent(r.efficiency_band.low, 0),
                                             format_percent(r.efficiency_band.high, 0)));
    }
    if (out.x.empty()) return std::nullopt;
    return out;
  }
  return std::nullopt;
}

void scaling_charts(const RunResult& run, const std::string& workload,
                    const Presentation& presentation, ChartList& charts,
                    const Prediction* prediction) {
  std::vector<Curve> all = curves_of(run, workload);
  if (all.empty()) return;
  std::vector<const ScalingSeries*> series;
  for (const auto& c : all) series.push_back(c.series);
  const std::vector<std::string> vary = scaling_varying_params(series);
  const std::size_t total = all.size();
  all = reduce(std::move(all), vary, presentation);
  const std::size_t shown = std::min(all.size(), kMaxScalingCharts);
  std::set<double> gpu_ticks;
  for (std::size_t i = 0; i < shown; ++i) gpu_ticks.insert(all[i].gpus.begin(), all[i].gpus.end());

  svg::LineChart eff;
  eff.title = workload + ": scaling efficiency";
  eff.subtitle = shown < total ? fmt::format("showing {} of {} parameter sets", shown, total) : "";
  eff.x = make_axis("GPUs", svg::Scale::linear, svg::TickFormat::integer);
  eff.x.zero_based = false;
  eff.x.ticks.assign(gpu_ticks.begin(), gpu_ticks.end());
  eff.y = make_axis("efficiency (%)", svg::Scale::linear, svg::TickFormat::number);
  eff.ref_lines.push_back({100.0, "ideal 100 %", false});
  double lowest = 100;
  std::size_t left_out = 0;
  for (std::size_t i = 0; i < shown; ++i) {
    const Curve& c = all[i];
    std::string label = vary.empty() ? std::string() : params_short_label(c.series->params, vary);
    if (label.empty()) label = c.series->mode.empty() ? "measured" : c.series->mode;
    charts.add(workload, "scaling", throughput_chart(workload, presentation, c, label, eff.x),
               label);
    left_out += c.left_out;
    if (c.efficiency.empty()) continue;  // measured against an impossible baseline
    add_efficiency(eff, c, i, label, prediction, lowest, gpu_ticks);
  }
  eff.x.ticks.assign(gpu_ticks.begin(), gpu_ticks.end());
  // Start the axis below the lowest efficiency (at most at 50 %) so differences show.
  eff.y.zero_based = false;
  eff.y.min = std::max(0.0, std::min(50.0, std::floor((lowest - 5) / 10) * 10));
  if (left_out > 0) eff.subtitle += (eff.subtitle.empty() ? "" : " · ") + left_out_note(left_out);
  const bool predicted = std::any_of(eff.series.begin(), eff.series.end(), [](const auto& s) {
    return s.line == svg::LineStyle::dashed;
  });
  if (predicted) eff.subtitle += (eff.subtitle.empty() ? "" : " · ") + predicted_note(*prediction);
  mark_node_boundaries(all, shown, eff);
  if (!eff.series.empty()) charts.add(workload, "efficiency", eff);
}

}  // namespace mgbench::reports::detail
