// The comparison report's metric-vs-axis charts: the workload's first declared line chart
// (e.g. a metric vs size or batch) with the runs overlaid, one chart per combination of the
// other parameters and GPU count (the largest count, plus the count with the most important
// verdict when that is another one).
#include <algorithm>

#include <fmt/format.h>

#include "chart_common.hpp"
#include "compare_internal.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports::cmp {
namespace {

constexpr std::size_t kMaxSizeCharts = 8;

struct SizeSpec {
  AxisSpec axis;
  std::string x_label, metric, y_label, title;
  std::optional<double> median_scale;
  std::set<std::string> drop;  // parameters that move with x (not a reason for another chart)
};

std::optional<SizeSpec> size_spec(const std::string& workload, const Presentation& presentation,
                                  const Points& all) {
  for (const ChartSpec& chart : presentation.charts) {
    if (chart.kind != ChartKind::line) continue;
    const auto axis = detail::x_axis_of(presentation, chart, all);
    if (!axis) continue;
    const bool any = std::any_of(all.begin(), all.end(), [&](const PointResult* p) {
      return point_metric(*p, chart.metric).value_or(0) > 0;
    });
    const bool alt = !any && !chart.alt_metric.empty();
    SizeSpec s;
    s.axis = *axis;
    s.x_label = detail::axis_label(*axis, all);
    s.metric = alt ? chart.alt_metric : chart.metric;
    s.y_label = !chart.y_label.empty() && !alt ? chart.y_label
                                               : presentation.metric_axis_label(s.metric);
    s.title = workload + ": " +
              (alt ? chart.alt_title
                   : !chart.title.empty() ? chart.title
                                          : presentation.metric_label(s.metric) + " vs " +
                                                s.x_label);
    s.median_scale = chart.median_scale;
    s.drop = axis_params(presentation);
    return s;
  }
  return std::nullopt;
}

std::optional<double> y_of(const SizeSpec& spec, const PointResult& p) {
  if (const auto v = point_metric(p, spec.metric)) return v;
  if (spec.median_scale && p.stats.n > 0) return p.stats.median * *spec.median_scale;
  return std::nullopt;
}

std::string x_text(const SizeSpec& spec, double x) {
  return spec.axis.format_ == ValueFormat::bytes ? format_bytes_iec(x) : format_plain(x);
}

struct Candidate {
  std::string label;
  int gpus = 1;
  std::vector<Points> by_run;
  int interest = 0;
  std::size_t split = 0;
};

// One candidate chart per (other parameters, GPU count), with two x values at least.
std::vector<Candidate> candidates_of(const Context& ctx, const SizeSpec& spec,
                                     const Presentation& presentation,
                                     const std::vector<Points>& runs,
                                     const std::vector<std::string>& split_keys,
                                     std::size_t& splits) {
  std::vector<Candidate> out;
  std::vector<std::string> split_order;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto* p : runs[r]) {
      if (!param_number(p->params, spec.axis.param) || !y_of(spec, *p)) continue;
      const std::string label =
          split_keys.empty() ? "" : set_label(p->params, split_keys, presentation);
      auto so = std::find(split_order.begin(), split_order.end(), label);
      if (so == split_order.end()) so = split_order.insert(split_order.end(), label);
      auto it = std::find_if(out.begin(), out.end(), [&](const Candidate& c) {
        return c.label == label && c.gpus == p->gpus;
      });
      if (it == out.end()) {
        out.push_back({label, p->gpus, std::vector<Points>(runs.size()), 0,
                       static_cast<std::size_t>(so - split_order.begin())});
        it = out.end() - 1;
      }
      it->by_run[r].push_back(p);
      if (const PointComparison* v = ctx.verdict_of(*p))
        it->interest = std::max(it->interest, verdict_style(to_string(v->verdict)).rank);
    }
  }
  splits = split_order.size();
  const auto distinct_x = [&](const Candidate& c) {
    std::set<double> xs;
    for (const auto& pts : c.by_run) {
      for (const auto* p : pts) xs.insert(*param_number(p->params, spec.axis.param));
    }
    return xs.size();
  };
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const Candidate& c) { return distinct_x(c) < 2; }),
            out.end());
  return out;
}

// Per split: the largest GPU count, and the count with the most important verdict.
std::vector<Candidate> choose(const std::vector<Candidate>& candidates, std::size_t splits,
                              std::size_t& counts_total, std::size_t& before_cap) {
  std::vector<Candidate> chosen;
  counts_total = 0;
  for (std::size_t split = 0; split < splits; ++split) {
    const Candidate* largest = nullptr;
    const Candidate* interesting = nullptr;
    for (const auto& c : candidates) {
      if (c.split != split) continue;
      ++counts_total;
      if (!largest || c.gpus > largest->gpus) largest = &c;
      if (c.interest > 0 && (!interesting || c.interest > interesting->interest)) interesting = &c;
    }
    if (!largest) continue;
    if (interesting && interesting != largest && interesting->interest > largest->interest)
      chosen.push_back(*interesting);
    chosen.push_back(*largest);
  }
  before_cap = chosen.size();
  if (chosen.size() > kMaxSizeCharts) {
    std::stable_sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) {
      return a.interest > b.interest;
    });
    chosen.resize(kMaxSizeCharts);
  }
  return chosen;
}

svg::LineChart size_chart(const Context& ctx, const SizeSpec& spec, const Candidate& cand) {
  std::vector<double> xs;
  for (const auto& pts : cand.by_run) {
    for (const auto* p : pts) xs.push_back(*param_number(p->params, spec.axis.param));
  }
  svg::LineChart c;
  c.title = spec.title;
  c.subtitle = cand.label + (cand.label.empty() ? "" : " · ") + gpus_label(cand.gpus);
  c.x = detail::x_axis_for(spec.axis, spec.x_label, xs);
  c.y.label = spec.y_label;
  const std::string word = spec.axis.word.empty() ? spec.axis.param : spec.axis.word;
  VerdictOverlay overlay;
  std::vector<std::pair<std::size_t, svg::Series>> series;
  for (std::size_t r = 0; r < ctx.runs.size(); ++r) {
    Points pts = cand.by_run[r];
    if (pts.empty()) continue;
    std::stable_sort(pts.begin(), pts.end(), [&](const PointResult* a, const PointResult* b) {
      return *param_number(a->params, spec.axis.param) <
             *param_number(b->params, spec.axis.param);
    });
    svg::Series s;
    s.name = ctx.labels[r];
    s.colour = run_colour(r);
    for (const auto* p : pts) {
      const double x = *param_number(p->params, spec.axis.param);
      const double y = *y_of(spec, *p);
      add_point(ctx, r, *p, x, y,
                fmt::format("{} · {}: {} {}, {} {}", s.name, gpus_label(cand.gpus), word,
                            x_text(spec, x), format_sig(y, 4), spec.y_label),
                s, overlay);
    }
    series.emplace_back(r, std::move(s));
  }
  add_run_series(ctx, c, std::move(series));
  overlay.append_to(c);
  return c;
}

}  // namespace

void size_charts(Context& ctx, const std::string& workload, std::vector<std::string>& svgs,
                 std::string& note) {
  std::vector<Points> runs;
  Points all;
  for (const RunResult* r : ctx.runs) {
    runs.push_back(ok_points(*r, workload));
    all.insert(all.end(), runs.back().begin(), runs.back().end());
  }
  const Presentation& presentation = ctx.presentation_of(workload);
  const auto spec = size_spec(workload, presentation, all);
  if (!spec) return;
  std::vector<const Params*> params;
  for (const auto* p : all) params.push_back(&p->params);
  std::vector<std::string> split_keys;
  for (const auto& k : varying_keys(params)) {
    if (spec->drop.count(k) == 0) split_keys.push_back(k);
  }
  std::size_t splits = 0, counts_total = 0, before_cap = 0;
  const auto candidates = candidates_of(ctx, *spec, presentation, runs, split_keys, splits);
  const auto chosen = choose(candidates, splits, counts_total, before_cap);
  if (chosen.size() < counts_total) {
    note += (note.empty() ? "" : " ") +
            fmt::format(
                "{}: {} of {} charts shown (per combination of parameters, the largest GPU "
                "count and the count with the most important verdict{}).",
                spec->title, chosen.size(), counts_total,
                before_cap > chosen.size() ? ", most important first" : "");
  }
  for (const Candidate& cand : chosen) {
    svg::LineChart c = size_chart(ctx, *spec, cand);
    if (!svg::has_data(c)) continue;
    c.id = ctx.chart_id(workload + "-size-" + cand.label + "-" + std::to_string(cand.gpus));
    svgs.push_back(svg::render(c));
  }
}

}  // namespace mgbench::reports::cmp
