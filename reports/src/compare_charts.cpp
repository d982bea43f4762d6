// The comparison report's charts: the runs overlaid (colour, marker shape and line style per
// run; the base run dashed and drawn over the others), the new run's markers as verdict
// overlays; throughput vs GPU count and scaling efficiency.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compare_internal.hpp"
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports::cmp {
namespace {

constexpr std::size_t kMaxScalingCharts = 6;
constexpr std::size_t kMaxEfficiencySets = 3;
constexpr int kIdealColour = 5;

std::string verdict_tip(const PointComparison& v) {
  std::string tip = to_string(v.verdict);
  if (std::isfinite(v.change)) tip += " (" + format_change(v.change) + ")";
  if (!v.reason.empty()) tip += ": " + v.reason;
  return tip;
}

// Line style of a run: the first (base) dashed, the second solid, the third dotted.
svg::LineStyle run_line(std::size_t run) {
  if (run == 0) return svg::LineStyle::dashed;
  return run == 2 ? svg::LineStyle::dotted : svg::LineStyle::solid;
}

struct ParamSet {
  Params params;
  std::string key;
  std::vector<std::map<int, const PointResult*>> by_run;  // gpus -> point, per run
  int interest = 0;  // verdict rank of its most important point
};

int interest_of(const Context& ctx, const PointResult& p) {
  const PointComparison* v = ctx.verdict_of(p);
  return v == nullptr ? 0 : verdict_style(to_string(v->verdict)).rank;
}

// Parameter sets of a workload over all runs, in order of first appearance.
std::vector<ParamSet> param_sets(const Context& ctx, const std::string& workload) {
  std::vector<ParamSet> sets;
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < ctx.runs.size(); ++r) {
    for (const auto* p : ok_points(*ctx.runs[r], workload)) {
      const std::string key = p->params.dump();
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, sets.size()).first;
        sets.push_back(ParamSet{p->params, key, std::vector<std::map<int, const PointResult*>>(
                                                    ctx.runs.size()), 0});
      }
      ParamSet& s = sets[it->second];
      s.by_run[r].emplace(p->gpus, p);
      s.interest = std::max(s.interest, interest_of(ctx, *p));
    }
  }
  return sets;
}

std::set<int> gpu_counts(const ParamSet& s) {
  std::set<int> out;
  for (const auto& m : s.by_run) {
    for (const auto& [g, p] : m) out.insert(g);
  }
  return out;
}

// The scaling metric of a workload: from the runs' scaling series, so only workloads that have
// scaling tables get throughput-vs-GPU-count charts.
const ScalingSeries* scaling_series(const Context& ctx, const std::string& workload) {
  for (const RunResult* run : ctx.runs) {
    for (const ScalingSeries& s : run->scaling) {
      if (s.workload == workload && !s.metric.empty()) return &s;
    }
  }
  return nullptr;
}

// Too many sets: one per combination of the non-axis parameters (the most important verdict
// first, then the largest size), then the most important ones.
std::vector<ParamSet> reduce_sets(std::vector<ParamSet> sets, const Presentation& presentation) {
  if (sets.size() <= kMaxScalingCharts) return sets;
  const std::set<std::string> moving = axis_params(presentation);
  std::vector<ParamSet> best;
  std::map<std::string, std::size_t> where;
  for (auto& s : sets) {
    Params rest = s.params;
    for (const auto& k : moving) rest.erase(k);
    const auto [it, fresh] = where.emplace(rest.dump(), best.size());
    if (fresh) {
      best.push_back(s);
      continue;
    }
    ParamSet& b = best[it->second];
    const double size = size_value(s.params, presentation).value_or(0);
    const double bsize = size_value(b.params, presentation).value_or(0);
    if (s.interest > b.interest || (s.interest == b.interest && size > bsize)) b = s;
  }
  std::stable_sort(best.begin(), best.end(),
                   [](const ParamSet& a, const ParamSet& b) { return a.interest > b.interest; });
  if (best.size() > kMaxScalingCharts) best.resize(kMaxScalingCharts);
  return best;
}

// Ideal: the first run's smallest GPU count scaled linearly.
void add_ideal(const Context& ctx, const ParamSet& s, const std::string& metric,
               const std::set<int>& counts, svg::LineChart& c) {
  const auto& first = s.by_run[0];
  if (first.empty()) return;
  const int g0 = first.begin()->first;
  const auto v0 = json_number(first.begin()->second->metrics, metric);
  if (!v0) return;
  svg::Series ideal;
  ideal.name = "ideal (linear from " + ctx.labels[0] + ")";
  ideal.colour = kIdealColour;
  ideal.line = svg::LineStyle::dotted;
  ideal.markers = false;
  for (int g : counts) {
    if (g < g0) continue;
    ideal.x.push_back(g);
    ideal.y.push_back(*v0 * g / g0);
  }
  if (ideal.x.size() >= 2) c.series.insert(c.series.begin(), std::move(ideal));
}

svg::LineChart scaling_chart(const Context& ctx, const std::string& workload, const ParamSet& s,
                             const ScalingSeries& scaling, const std::string& label) {
  const Presentation& presentation = ctx.presentation_of(workload);
  svg::LineChart c;
  c.title = workload + ": " + presentation.metric_label(scaling.metric) + " vs GPU count";
  c.subtitle = label;
  c.height = 360;
  const std::set<int> counts = gpu_counts(s);
  c.x = gpu_axis(counts);
  c.y.label = presentation.metric_axis_label(scaling.metric);
  VerdictOverlay overlay;
  std::vector<std::pair<std::size_t, svg::Series>> runs;
  for (std::size_t r = 0; r < ctx.runs.size(); ++r) {
    svg::Series series;
    series.name = ctx.labels[r];
    series.colour = run_colour(r);
    for (const auto& [g, p] : s.by_run[r]) {
      const auto v = json_number(p->metrics, scaling.metric);
      if (!v) continue;
      add_point(ctx, r, *p, g, *v,
                fmt::format("{}: {}, {} {}", ctx.labels[r], gpus_label(g), format_sig(*v, 4),
                            scaling.unit),
                series, overlay);
    }
    runs.emplace_back(r, std::move(series));
  }
  add_run_series(ctx, c, std::move(runs));
  add_ideal(ctx, s, scaling.metric, counts, c);
  overlay.append_to(c);
  return c;
}

// Throughput vs GPU count per parameter set (the runs overlaid, the ideal line from the first
// run). Returns the keys of the sets drawn (for the efficiency chart).
std::vector<std::string> scaling_charts(Context& ctx, const std::string& workload,
                                        std::vector<std::string>& svgs, std::string& note) {
  const ScalingSeries* scaling = scaling_series(ctx, workload);
  if (scaling == nullptr) return {};
  std::vector<ParamSet> sets = param_sets(ctx, workload);
  sets.erase(std::remove_if(sets.begin(), sets.end(),
                            [](const ParamSet& s) { return gpu_counts(s).size() < 2; }),
             sets.end());
  if (sets.empty()) return {};
  std::vector<const Params*> all_params;
  for (const auto& s : sets) all_params.push_back(&s.params);
  const std::vector<std::string> vary = varying_keys(all_params);
  const std::size_t total = sets.size();
  const Presentation& presentation = ctx.presentation_of(workload);
  sets = reduce_sets(std::move(sets), presentation);
  if (sets.size() < total) {
    note = fmt::format(
        "Throughput vs GPU count: {} of {} parameter sets shown (per combination of the other "
        "parameters, the size with the most important verdict, else the largest size); every "
        "point is in the verdict table.",
        sets.size(), total);
  }
  std::vector<std::string> drawn;
  for (const ParamSet& s : sets) {
    const std::string label = set_label(s.params, vary, presentation);
    svg::LineChart c = scaling_chart(ctx, workload, s, *scaling, label);
    if (!svg::has_data(c)) continue;
    c.id = ctx.chart_id(workload + "-scaling-" + label);
    svgs.push_back(svg::render(c));
    drawn.push_back(s.key);
  }
  return drawn;
}

// Efficiency per GPU count of up to kMaxEfficiencySets parameter sets.
struct EffSet {
  Params params;
  std::string key;
  std::map<int, std::vector<std::optional<double>>> by_gpus;  // gpus -> value per run
};

class EffSets {
 public:
  explicit EffSets(std::size_t runs) : runs_(runs) {}
  std::vector<std::optional<double>>& at(const Params& params, int gpus) {
    const std::string key = params.dump();
    auto it = index_.find(key);
    if (it == index_.end()) {
      it = index_.emplace(key, sets.size()).first;
      sets.push_back({params, key, {}});
    }
    auto& values = sets[it->second].by_gpus[gpus];
    values.assign(runs_, std::nullopt);
    return values;
  }
  std::vector<EffSet> sets;

 private:
  std::size_t runs_;
  std::map<std::string, std::size_t> index_;
};

std::vector<EffSet> efficiency_sets(const Context& ctx, const std::string& workload) {
  EffSets sets(ctx.runs.size());
  if (ctx.comparison != nullptr) {
    for (const EfficiencyRow& row : ctx.comparison->efficiency) {
      if (row.workload != workload) continue;
      auto& values = sets.at(row.params, row.gpus);
      if (!values.empty()) values[0] = row.base;
      if (values.size() > 1) values[1] = row.next;
    }
  } else if (ctx.offer_cmp != nullptr) {
    for (const OfferTable& t : ctx.offer_cmp->tables) {
      if (t.workload != workload) continue;
      for (const OfferRow& row : t.rows) {
        if (row.predicted) continue;  // measured efficiencies only
        auto& values = sets.at(row.params, row.gpus);
        for (std::size_t i = 0; i < std::min(values.size(), row.cells.size()); ++i)
          values[i] = row.cells[i].efficiency;
      }
    }
  }
  // Only sets with an efficiency at two or more GPU counts make a curve.
  std::vector<EffSet> out;
  for (auto& s : sets.sets) {
    int with_value = 0;
    for (const auto& [g, v] : s.by_gpus) {
      if (std::any_of(v.begin(), v.end(), [](const auto& x) { return x.has_value(); }))
        ++with_value;
    }
    if (with_value >= 2) out.push_back(std::move(s));
  }
  return out;
}

// How far a set's efficiency moved between the runs (0 below one percentage point).
double moved(const EffSet& s) {
  double most = 0;
  for (const auto& [g, v] : s.by_gpus) {
    for (std::size_t r = 1; r < v.size(); ++r) {
      if (v[0] && v[r]) most = std::max(most, std::fabs(*v[r] - *v[0]));
    }
  }
  return most >= 0.01 ? most : 0.0;
}

// One series per set and run; returns the lowest efficiency drawn (percent).
double add_efficiency_series(const Context& ctx, const std::vector<EffSet>& sets,
                             const Presentation& presentation, svg::LineChart& c) {
  std::vector<const Params*> params;
  for (const auto& s : sets) params.push_back(&s.params);
  const std::vector<std::string> vary = varying_keys(params);
  static const int kSetColours[] = {0, 1, 2};
  double lowest = 100;
  std::vector<std::pair<std::size_t, svg::Series>> series;
  for (std::size_t si = 0; si < sets.size(); ++si) {
    const std::string label = sets.size() > 1 ? set_label(sets[si].params, vary, presentation) : "";
    for (std::size_t r = 0; r < ctx.runs.size(); ++r) {
      svg::Series s;
      s.name = ctx.labels[r] + (label.empty() ? "" : " · " + label);
      s.colour = sets.size() == 1 ? run_colour(r) : kSetColours[si % 3];
      for (const auto& [g, v] : sets[si].by_gpus) {
        if (r >= v.size() || !v[r]) continue;
        s.x.push_back(g);
        s.y.push_back(*v[r] * 100.0);
        s.point_titles.push_back(
            fmt::format("{}: {}, efficiency {}", s.name, gpus_label(g), format_percent(*v[r])));
        lowest = std::min(lowest, *v[r] * 100.0);
      }
      if (!s.x.empty()) series.emplace_back(r, std::move(s));
    }
  }
  add_run_series(ctx, c, std::move(series), false);
  return lowest;
}

// Colour = parameter set (the run colours when there is one), line style = run.
void efficiency_chart(Context& ctx, const std::string& workload, std::vector<EffSet> sets,
                      const std::vector<std::string>& preferred, std::vector<std::string>& svgs) {
  if (sets.empty()) return;
  const std::size_t total = sets.size();
  // Sets whose efficiency moved most first, then in the order of the throughput charts.
  std::stable_sort(sets.begin(), sets.end(), [&](const EffSet& a, const EffSet& b) {
    const double ma = moved(a), mb = moved(b);
    if (ma != mb) return ma > mb;
    return std::find(preferred.begin(), preferred.end(), a.key) <
           std::find(preferred.begin(), preferred.end(), b.key);
  });
  if (sets.size() > kMaxEfficiencySets) sets.resize(kMaxEfficiencySets);
  svg::LineChart c;
  c.title = workload + ": scaling efficiency";
  if (sets.size() == 1) c.subtitle = params_short_label(sets[0].params);
  if (total > sets.size()) {
    c.subtitle +=
        (c.subtitle.empty() ? "" : " · ") +
        fmt::format("{} of {} parameter sets (largest changes first)", sets.size(), total);
  }
  std::set<int> counts;
  for (const auto& s : sets) {
    for (const auto& [g, v] : s.by_gpus) counts.insert(g);
  }
  c.x = gpu_axis(counts);
  c.y.label = "efficiency (%)";
  c.ref_lines.push_back({100.0, "ideal 100 %", false});
  const double lowest = add_efficiency_series(ctx, sets, ctx.presentation_of(workload), c);
  c.y.zero_based = false;
  c.y.min = std::max(0.0, std::min(50.0, std::floor((lowest - 5) / 10) * 10));
  if (!svg::has_data(c)) return;
  c.id = ctx.chart_id(workload + "-efficiency");
  svgs.push_back(svg::render(c));
}

}  // namespace

void VerdictOverlay::add(const std::string& verdict, double x, double y,
                         const std::string& title) {
  if (verdict_style(verdict).name[0] == '\0') return;
  auto& s = series_[verdict];
  s.x.push_back(x);
  s.y.push_back(y);
  s.point_titles.push_back(title);
}

void VerdictOverlay::add_unjudged(double x, double y, const std::string& title) {
  unjudged_.x.push_back(x);
  unjudged_.y.push_back(y);
  unjudged_.point_titles.push_back(title);
}

void VerdictOverlay::append_to(svg::LineChart& chart) const {
  if (!unjudged_.x.empty()) {
    svg::Series s = unjudged_;
    s.colour = run_colour(1);
    s.line = svg::LineStyle::none;
    s.in_legend = false;
    chart.series.push_back(std::move(s));
  }
  for (const char* v : {"same", "noisy", "faster", "slower"}) {
    const auto it = series_.find(v);
    if (it == series_.end()) continue;
    svg::Series s = it->second;
    s.name = std::string("verdict: ") + v;
    s.colour = verdict_style(v).colour;
    s.line = svg::LineStyle::none;
    chart.series.push_back(std::move(s));
  }
}

void add_point(const Context& ctx, std::size_t run, const PointResult& p, double x, double y,
               const std::string& title, svg::Series& series, VerdictOverlay& overlay) {
  series.x.push_back(x);
  series.y.push_back(y);
  series.point_titles.push_back(title);
  if (run != 1 || !ctx.two_runs()) return;
  if (const PointComparison* v = ctx.verdict_of(p)) {
    overlay.add(to_string(v->verdict), x, y, title + " · " + verdict_tip(*v));
  } else {
    overlay.add_unjudged(x, y, title + " · no verdict (not in " + ctx.labels[0] + ")");
  }
}

void add_run_series(const Context& ctx, svg::LineChart& chart,
                    std::vector<std::pair<std::size_t, svg::Series>> series,
                    bool verdict_markers) {
  for (auto& [run, s] : series) {
    s.line = run_line(run);
    svg::Series legend = s;  // legend entry only: no points
    legend.x.clear();
    legend.y.clear();
    legend.point_titles.clear();
    chart.series.push_back(std::move(legend));
    s.in_legend = false;
    if (run == 1 && ctx.two_runs() && verdict_markers) s.markers = false;
  }
  // Drawn in reverse order of the styles' weight (the base last, on top).
  for (int pass : {1, 0}) {
    for (auto& [run, s] : series) {
      if ((run == 0) == (pass == 0)) chart.series.push_back(std::move(s));
    }
  }
}

svg::Axis gpu_axis(const std::set<int>& counts) {
  svg::Axis a;
  a.label = "GPUs";
  a.format = svg::TickFormat::integer;
  a.zero_based = false;
  for (int g : counts) a.ticks.push_back(g);
  return a;
}

WorkloadCharts workload_charts(Context& ctx, const std::string& workload) {
  WorkloadCharts out;
  std::string scaling_note, size_note;
  const std::vector<std::string> drawn = scaling_charts(ctx, workload, out.svgs, scaling_note);
  efficiency_chart(ctx, workload, efficiency_sets(ctx, workload), drawn, out.svgs);
  size_charts(ctx, workload, out.svgs, size_note);
  out.note = scaling_note + (scaling_note.empty() || size_note.empty() ? "" : " ") + size_note;
  return out;
}

}  // namespace mgbench::reports::cmp
