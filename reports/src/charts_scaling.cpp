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

// A series sorted by GPU count, with a distinct GPU count at least twice.
struct Curve {
  const ScalingSeries* series = nullptr;
  std::vector<double> gpus, throughput, efficiency;
  std::vector<int> nodes;
};

std::vector<Curve> curves_of(const RunResult& run, const std::string& workload) {
  std::vector<Curve> out;
  for (const ScalingSeries& s : run.scaling) {
    if (s.workload != workload) continue;
    std::vector<const ScalingRow*> rows;
    for (const ScalingRow& r : s.rows) rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ScalingRow* a, const ScalingRow* b) { return a->gpus < b->gpus; });
    Curve c{&s, {}, {}, {}, {}};
    for (const ScalingRow* r : rows) {
      c.gpus.push_back(r->gpus);
      c.throughput.push_back(r->throughput);
      c.efficiency.push_back(r->efficiency);
      c.nodes.push_back(r->nodes);
    }
    if (std::set<double>(c.gpus.begin(), c.gpus.end()).size() >= 2) out.push_back(std::move(c));
  }
  return out;
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
    Json rest = c.series->params;
    for (const auto& k : axis_params) rest.erase(k);
    const std::string key = rest.dump();
    const double size = json_number(c.series->params, size_key).value_or(0);
    if (!best.count(key)) {
      keep_order.push_back(key);
      best[key] = c;
    } else if (size > json_number(best[key].series->params, size_key).value_or(0)) {
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

}  // namespace

void scaling_charts(const RunResult& run, const std::string& workload,
                    const Presentation& presentation, ChartList& charts) {
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
  for (std::size_t i = 0; i < shown; ++i) {
    const Curve& c = all[i];
    std::string label = vary.empty() ? std::string() : params_short_label(c.series->params, vary);
    if (label.empty()) label = c.series->mode.empty() ? "measured" : c.series->mode;
    charts.add(workload, "scaling", throughput_chart(workload, presentation, c, label, eff.x),
               label);
    svg::Series e;
    e.name = label;
    e.colour = static_cast<int>(i % 7);
    e.x = c.gpus;
    for (double v : c.efficiency) {
      e.y.push_back(v * 100.0);
      if (std::isfinite(v)) lowest = std::min(lowest, v * 100.0);
    }
    eff.series.push_back(std::move(e));
  }
  // Start the axis below the lowest efficiency (at most at 50 %) so differences show.
  eff.y.zero_based = false;
  eff.y.min = std::max(0.0, std::min(50.0, std::floor((lowest - 5) / 10) * 10));
  mark_node_boundaries(all, shown, eff);
  charts.add(workload, "efficiency", eff);
}

}  // namespace mgbench::reports::detail
