// Which part of a step changed between two runs: the parts of the workload's step-time breakdown
// (its presentation's breakdown chart) in both points (compare.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mgbench/analysis/compare.hpp"
#include "mgbench/model/point_view.hpp"

namespace mgbench {
namespace {

// A metric of the point, else of its first rank (where the training step records the parts).
std::optional<double> part_value(const PointResult& p, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (auto v = metric_number(p, name)) return v;
    if (auto v = rank_metric(p, 0, name)) return v;
  }
  return std::nullopt;
}

std::string signed_ms(double seconds) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%+.2f ms", seconds * 1e3);
  return buffer;
}

}  // namespace

std::vector<PartChange> step_parts(const PointResult& base, const PointResult& next,
                                   const Presentation& presentation) {
  for (const ChartSpec& chart : presentation.charts) {
    if (chart.kind != ChartKind::breakdown) continue;
    const auto total_b = part_value(base, chart.total), total_n = part_value(next, chart.total);
    if (!total_b || !total_n) return {};
    std::vector<PartChange> parts;
    double sum_b = 0, sum_n = 0;
    for (const StackPart& part : chart.parts) {
      const auto b = part_value(base, part.metrics), n = part_value(next, part.metrics);
      if (!b && !n) continue;
      parts.push_back({part.label, b.value_or(0.0), n.value_or(0.0)});
      sum_b += b.value_or(0.0);
      sum_n += n.value_or(0.0);
    }
    parts.push_back({chart.remainder_label.empty() ? "the rest" : chart.remainder_label,
                     std::max(0.0, *total_b - sum_b), std::max(0.0, *total_n - sum_n)});
    return parts;
  }
  return {};
}

std::string parts_change_text(const PointComparison& p) {
  if (p.parts.empty()) return "";
  double base = 0, next = 0;
  const PartChange* most = nullptr;
  std::string list;
  for (const PartChange& part : p.parts) {
    base += part.base_s;
    next += part.new_s;
    list += (list.empty() ? "" : ", ") + part.label + " " + signed_ms(part.new_s - part.base_s);
    if (most == nullptr ||
        std::fabs(part.new_s - part.base_s) > std::fabs(most->new_s - most->base_s)) {
      most = &part;
    }
  }
  char change[64];
  std::snprintf(change, sizeof change, "%+.1f %%", base > 0 ? 100.0 * (next / base - 1.0) : 0.0);
  return "step " + signed_ms(next - base) + " (" + change + "): " + list +
         "; most of the change is in " + most->label;
}

}  // namespace mgbench
