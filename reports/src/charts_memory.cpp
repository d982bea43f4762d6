// Peak memory vs an x axis with the OOM boundary, and stacked time breakdowns per GPU count,
// as a workload's presentation declares them.
#include <algorithm>
#include <map>
#include <set>

#include "chart_common.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports::detail {
namespace {

constexpr std::size_t kMaxBars = 12;

// The declared axis, else the first declared axis that varies; nullptr when none.
const AxisSpec* chart_axis(const Presentation& presentation, const ChartSpec& spec,
                           const Points& points) {
  const auto vary = varying_params(points);
  for (const AxisSpec& a : presentation.axes) {
    const bool varying = std::find(vary.begin(), vary.end(), a.param) != vary.end();
    if (spec.x.empty() ? varying : a.param == spec.x) return &a;
  }
  return nullptr;
}

std::vector<std::string> other_keys(const Points& points, const AxisSpec* axis) {
  std::set<std::string> skip;
  if (axis != nullptr) {
    skip.insert(axis->param);
    skip.insert(axis->companions.begin(), axis->companions.end());
  }
  return without(varying_params(points), skip);
}

// Series with identical points (memory per GPU rarely depends on the GPU count) merge into one
// line named after all of them.
std::vector<svg::Series> merge_identical(std::vector<svg::Series> series) {
  std::vector<svg::Series> merged;
  for (auto& s : series) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const svg::Series& o) {
      return o.x == s.x && o.y == s.y;
    });
    if (same == merged.end()) {
      merged.push_back(std::move(s));
    } else {
      same->name += ", " + s.name;
    }
  }
  for (std::size_t i = 0; i < merged.size(); ++i) merged[i].colour = static_cast<int>(i % 7);
  return merged;
}

// A vertical line at the smallest x that ran out of memory, per series.
void add_oom_lines(svg::LineChart& m, const Points& all, const AxisSpec& axis,
                   const std::vector<std::string>& keys, bool with_gpus) {
  std::map<std::string, double> first_oom;
  for (const auto* p : all) {
    if (p->status != Status::oom) continue;
    const auto x = param_number(p->params, axis.param);
    if (!x) continue;
    const std::string name = series_name(*p, keys, with_gpus);
    if (!first_oom.count(name) || *x < first_oom[name]) first_oom[name] = *x;
  }
  std::map<double, std::vector<std::string>> oom_at;
  for (const auto& [name, x] : first_oom) oom_at[x].push_back(name);
  const std::string word = axis.word.empty() ? axis.param : axis.word;
  for (const auto& [x, names] : oom_at) {
    std::string label = "OOM at " + word + " " + format_plain(x);
    if (oom_at.size() > 1 || names.size() < m.series.size()) {
      std::string who;
      for (const auto& n : names) who += (who.empty() ? "" : ", ") + n;
      if (names.size() <= 2) label += " (" + who + ")";
    }
    m.ref_lines.push_back({x, label, true});
  }
  if (!m.ref_lines.empty() && m.series.empty()) {
    svg::Series none;  // nothing fitted at all: still show where it ran out of memory
    none.name = "no " + word + " fitted";
    m.series.push_back(none);
  }
}

// Keeps the largest x that every GPU count ran when there are too many bars.
Points thin_bars(Points usable, const std::string& x) {
  if (usable.size() <= kMaxBars || x.empty()) return usable;
  std::map<double, std::set<int>> counts;
  std::set<int> all_counts;
  for (const auto* p : usable) {
    counts[param_number(p->params, x).value_or(0)].insert(p->gpus);
    all_counts.insert(p->gpus);
  }
  double chosen = counts.rbegin()->first;
  for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
    if (it->second == all_counts) {
      chosen = it->first;
      break;
    }
  }
  Points keep;
  for (const auto* p : usable) {
    if (param_number(p->params, x).value_or(0) == chosen) keep.push_back(p);
  }
  if (keep.size() > kMaxBars) keep.resize(kMaxBars);
  return keep;
}

std::optional<double> first_metric(const PointResult& p, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (const auto v = point_metric(p, n)) return v;
  }
  return std::nullopt;
}

svg::StackedBarChart breakdown_chart(const std::string& workload, const ChartSpec& spec,
                                     const AxisSpec* axis, const Points& bars) {
  svg::StackedBarChart c;
  c.title = workload + ": " + (spec.title.empty() ? "time breakdown" : spec.title);
  c.x_label = axis == nullptr ? "GPUs" : "GPUs and " + axis->label;
  c.y = make_axis(spec.y_label.empty() ? "time (ms)" : spec.y_label, svg::Scale::linear,
                  svg::TickFormat::number);
  svg::Stack rest{spec.remainder_label, {}, 0};
  std::vector<svg::Stack> parts;
  for (const StackPart& part : spec.parts) parts.push_back({part.label, {}, part.colour});
  for (const auto* p : bars) {
    // The breakdown's own total (same measurement as its parts) when recorded.
    const double total = first_metric(*p, spec.total).value_or(p->stats.median);
    double sum = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const double v = first_metric(*p, spec.parts[i].metrics).value_or(0);
      parts[i].values.push_back(v * 1e3);
      sum += v;
    }
    rest.values.push_back(std::max(0.0, total - sum) * 1e3);
    std::string cat = gpus_label(p->gpus);
    if (axis != nullptr && p->params.contains(axis->param)) {
      cat += "\n" + (axis->word.empty() ? axis->param : axis->word) + " " +
             param_string(p->params, axis->param);
    }
    c.categories.push_back(cat);
  }
  c.stacks = {rest};
  for (auto& s : parts) {
    const bool required = &s == &parts.back();  // the last part is always drawn
    if (required || std::any_of(s.values.begin(), s.values.end(), [](double v) { return v > 0; }))
      c.stacks.push_back(std::move(s));
  }
  return c;
}

}  // namespace

void memory_charts(const RunResult& run, const std::string& workload,
                   const Presentation& presentation, const ChartSpec& spec, ChartList& charts) {
  const Points all = points_of(run, workload);
  const AxisSpec* axis = chart_axis(presentation, spec, all);
  if (all.empty() || axis == nullptr) return;
  const auto keys = other_keys(all, axis);
  const bool with_gpus = gpus_vary(all);
  svg::LineChart m;
  m.title = workload + ": " + (spec.title.empty() ? "peak memory vs " + axis->label : spec.title);
  m.subtitle = "peak device memory per GPU (max over ranks)";
  m.x = x_axis_for(*axis, axis->label, x_values(all, axis->param));
  m.x.ticks.clear();
  m.y = make_axis("peak memory (GiB)", svg::Scale::linear, svg::TickFormat::number);
  Points with_memory;
  for (const auto* p : all) {
    if (peak_memory_bytes(*p)) with_memory.push_back(p);
  }
  const std::string word = axis->word.empty() ? axis->param : axis->word;
  m.series = merge_identical(make_series(
      with_memory, axis->param, keys, with_gpus,
      [](const PointResult& p) -> std::optional<double> {
        const auto b = peak_memory_bytes(p);
        if (!b) return std::nullopt;
        return *b / (1024.0 * 1024.0 * 1024.0);
      },
      word));
  add_oom_lines(m, all, *axis, keys, with_gpus);
  charts.add(workload, spec.id, m);
}

void breakdown_charts(const RunResult& run, const std::string& workload,
                      const Presentation& presentation, const ChartSpec& spec,
                      ChartList& charts) {
  const Points all = points_of(run, workload);
  const AxisSpec* axis = chart_axis(presentation, spec, all);
  const std::string x = axis == nullptr ? "" : axis->param;
  int made = 0;
  for (const auto& [label, points] : split_by(ok_points(all), other_keys(all, axis))) {
    if (++made > spec.max_charts) break;
    Points usable;
    for (const auto* p : points) {
      if (spec.require.empty() || point_metric(*p, spec.require)) usable.push_back(p);
    }
    if (usable.empty()) continue;
    std::stable_sort(usable.begin(), usable.end(), [&](const PointResult* a, const PointResult* b) {
      if (a->gpus != b->gpus) return a->gpus < b->gpus;
      return param_number(a->params, x).value_or(0) < param_number(b->params, x).value_or(0);
    });
    svg::StackedBarChart c = breakdown_chart(workload, spec, axis, thin_bars(usable, x));
    c.subtitle = label;
    charts.add(workload, spec.id, c, label);
  }
}

}  // namespace mgbench::reports::detail
