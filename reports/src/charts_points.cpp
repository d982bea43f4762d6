// Charts of a workload's points as its presentation declares them: a metric vs an x axis, peak
// memory vs an axis with the OOM boundary, and stacked time breakdowns.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "chart_common.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports::detail {
namespace {


// Parameters that split a chart into series: those that vary, except the axis, its companions
// and `drop`.
std::vector<std::string> series_keys(const Points& points, const AxisSpec& axis,
                                     const std::vector<std::string>& drop) {
  std::set<std::string> skip(drop.begin(), drop.end());
  skip.insert(axis.param);
  skip.insert(axis.companions.begin(), axis.companions.end());
  return without(varying_params(points), skip);
}

// A value flagged impossible for the hardware is never drawn as if it were plain (the Flags
// section lists it); the chart says how many it left out.
YFn metric_fn(const std::string& metric, std::optional<double> median_scale) {
  return [metric, median_scale](const PointResult& p) -> std::optional<double> {
    if (metric_flagged(p.flags, metric)) return std::nullopt;
    if (const auto v = point_metric(p, metric)) return v;
    if (median_scale && p.stats.n > 0) return p.stats.median * *median_scale;
    return std::nullopt;
  };
}

// Smallest GPU count solid, largest dashed in the colour of the same series.
std::vector<svg::Series> dashed_by_gpus(const Points& points, const std::string& x,
                                        const std::vector<std::string>& keys, const YFn& y,
                                        const std::string& word, std::string& note) {
  int lo = points.front()->gpus, hi = lo;
  for (const auto* p : points) {
    lo = std::min(lo, p->gpus);
    hi = std::max(hi, p->gpus);
  }
  Points at_lo, at_hi;
  for (const auto* p : points) {
    if (p->gpus == lo) at_lo.push_back(p);
    if (p->gpus == hi && hi != lo) at_hi.push_back(p);
  }
  note = hi != lo ? "solid " + gpus_label(lo) + ", dashed " + gpus_label(hi) : gpus_label(lo);
  std::vector<svg::Series> solid = make_series(at_lo, x, keys, false, y, word);
  std::vector<svg::Series> dashed = make_series(at_hi, x, keys, false, y, word);
  for (auto& d : dashed) {
    for (const auto& s : solid) {
      if (s.name == d.name) d.colour = s.colour;
    }
    d.name += " · " + gpus_label(hi);
    d.line = svg::LineStyle::dashed;
  }
  if (!dashed.empty()) {
    for (auto& s : solid) s.name += " · " + gpus_label(lo);
  }
  for (auto& d : dashed) solid.push_back(std::move(d));
  return solid;
}

std::string flagged_note(const Points& points, const std::string& metric) {
  const auto n = std::count_if(points.begin(), points.end(), [&](const PointResult* p) {
    return metric_flagged(p->flags, metric);
  });
  if (n == 0) return "";
  return fmt::format("{} impossible value{} left out (see Flags)", n, n == 1 ? "" : "s");
}

bool any_positive(const Points& points, const std::string& metric) {
  return std::any_of(points.begin(), points.end(), [&](const PointResult* p) {
    return point_metric(*p, metric).value_or(0) > 0;
  });
}

void line_chart(const std::string& workload, const Presentation& presentation,
                const ChartSpec& spec, const std::string& split, const Points& points,
                ChartList& charts) {
  const auto axis = x_axis_of(presentation, spec, points);
  if (!axis) return;
  const bool alt = !spec.alt_metric.empty() && !any_positive(points, spec.metric);
  const std::string metric = alt ? spec.alt_metric : spec.metric;
  const std::string label = axis_label(*axis, points);
  svg::LineChart c;
  c.title = workload + ": " +
            (alt ? spec.alt_title
                 : !spec.title.empty() ? spec.title
                                       : presentation.metric_label(metric) + " vs " + label);
  c.subtitle = split;
  if (alt && !spec.alt_note.empty()) {
    c.subtitle += (c.subtitle.empty() ? "" : " · ") + spec.alt_note;
  }
  if (const std::string note = flagged_note(points, metric); !note.empty()) {
    c.subtitle += (c.subtitle.empty() ? "" : " · ") + note;
  }
  c.x = x_axis_for(*axis, label, x_values(points, axis->param));
  c.y = make_axis(!spec.y_label.empty() && !alt ? spec.y_label
                                                 : presentation.metric_axis_label(metric),
                  scale_of(spec.y_scale_, {}), svg::TickFormat::number);
  const auto keys = series_keys(points, *axis, spec.split_by_);
  const YFn y = metric_fn(metric, spec.median_scale);
  const std::string word = axis->word.empty() ? axis->param : axis->word;
  if (spec.gpus_dashed_) {
    std::string note;
    c.series = dashed_by_gpus(points, axis->param, keys, y, word, note);
    c.subtitle += (c.subtitle.empty() ? "" : " · ") + note;
  } else {
    c.series = make_series(points, axis->param, keys, gpus_vary(points), y, word);
  }
  if (axis->format_ == ValueFormat::bytes) {
    for (auto& s : c.series) {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        s.point_titles[i] = fmt::format("{}: {}, {} {}", s.name, format_bytes_iec(s.x[i]),
                                        format_sig(s.y[i], 4), c.y.label);
      }
    }
  }
  charts.add(workload, spec.id, c, split);
}

}  // namespace

// ---- overlay: one metric of several workloads on one chart -----------------------------------

namespace {

struct OverlayMember {
  std::string workload;
  Presentation presentation;
  ChartSpec spec;
};

std::string unit_of(const Presentation& p, const std::string& metric) {
  const MetricSpec* m = p.find_metric(metric);
  return m != nullptr ? m->unit : "";
}

// Every workload of the run (in order) that declares an overlay with the id of `spec` and a
// metric of the same unit.
std::vector<OverlayMember> overlay_members(const RunResult& run, const ChartSpec& spec,
                                           const std::string& unit) {
  std::vector<OverlayMember> members;
  for (const auto& w : workloads_of(run)) {
    Presentation p = presentation_for(run, w);
    for (const ChartSpec& c : p.charts) {
      if (c.kind == ChartKind::overlay && c.id == spec.id && unit_of(p, c.metric) == unit) {
        members.push_back({w, p, c});
        break;
      }
    }
  }
  return members;
}

// One member's lines at one GPU count and split value: one per set of its varying parameters,
// named after the workload.
void add_member_series(const OverlayMember& m, const AxisSpec& axis, const Points& points,
                       std::vector<svg::Series>& out) {
  const auto keys = series_keys(points, axis, m.spec.split_by_);
  const std::string word = axis.word.empty() ? axis.param : axis.word;
  for (svg::Series s : make_series(points, axis.param, keys, false,
                                   metric_fn(m.spec.metric, m.spec.median_scale), word)) {
    s.name = s.name == "measured" ? m.workload : m.workload + " · " + s.name;
    s.in_legend = true;
    out.push_back(std::move(s));
  }
}

}  // namespace

// Drawn in the section of the first member only, per GPU count (and split value) where at least
// two workloads have points.
void overlay_charts(const RunResult& run, const std::string& workload, const ChartSpec& spec,
                    ChartList& charts) {
  const std::vector<OverlayMember> members =
      overlay_members(run, spec, unit_of(presentation_for(run, workload), spec.metric));
  if (members.size() < 2 || members.front().workload != workload) return;
  // (GPU count, split value) -> lines and the workloads that drew them; the x axis of the first.
  using Lines = std::pair<std::vector<svg::Series>, std::set<std::string>>;
  std::map<std::pair<int, std::string>, Lines> charted;
  std::optional<AxisSpec> axis;
  Points all;
  for (const OverlayMember& m : members) {
    const Points points = ok_points(points_of(run, m.workload));
    const auto own_axis = x_axis_of(m.presentation, m.spec, points);
    if (!own_axis) continue;
    if (!axis) axis = own_axis;
    if (own_axis->param != axis->param) continue;
    std::map<int, Points> by_gpus;
    for (const auto* p : points) by_gpus[p->gpus].push_back(p);
    for (const auto& [gpus, at_gpus] : by_gpus) {
      for (const auto& [split, group] : split_by(at_gpus, m.spec.split_by_)) {
        auto& [lines, drawn] = charted[{gpus, split}];
        const std::size_t before = lines.size();
        add_member_series(m, *axis, group, lines);
        if (lines.size() > before) drawn.insert(m.workload);
        all.insert(all.end(), group.begin(), group.end());
      }
    }
  }
  int made = 0;
  for (auto& [key, content] : charted) {
    auto& [lines, drawn] = content;
    if (drawn.size() < 2 || ++made > spec.max_charts) continue;
    svg::LineChart c;
    c.title = spec.title.empty() ? members.front().presentation.metric_label(spec.metric)
                                 : spec.title;
    c.subtitle = gpus_label(key.first) + (key.second.empty() ? "" : " · " + key.second);
    c.x = x_axis_for(*axis, axis_label(*axis, all), x_values(all, axis->param));
    const Presentation& first = members.front().presentation;
    c.y = make_axis(spec.y_label.empty() ? first.metric_axis_label(spec.metric) : spec.y_label,
                    scale_of(spec.y_scale_, {}), svg::TickFormat::number);
    if (lines.size() > 16) lines.resize(16);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      lines[i].colour = static_cast<int>(i % 7);
      lines[i].line = i >= 7 ? svg::LineStyle::dashed : svg::LineStyle::solid;
    }
    c.series = std::move(lines);
    charts.add(workload, spec.id, c, c.subtitle);
  }
}

void line_charts(const RunResult& run, const std::string& workload,
                 const Presentation& presentation, const std::vector<const ChartSpec*>& specs,
                 ChartList& charts) {
  const ChartSpec& first = *specs.front();
  const Points all = points_of(run, workload);
  const Points points = first.ok_only ? ok_points(all) : all;
  if (points.empty()) return;
  int made = 0;
  for (const auto& [split, group] : split_by(points, first.split_by_)) {
    if (++made > first.max_charts) break;
    for (const ChartSpec* spec : specs) {
      line_chart(workload, presentation, *spec, split, group, charts);
    }
  }
}

}  // namespace mgbench::reports::detail
