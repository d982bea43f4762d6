// The comparison report (compare_report.hpp): environment diff, verdict tables, unmatched
// points, the runs' curves overlaid with the new run's markers coloured and shaped by their
// verdict, scaling efficiency side by side, and for offers the offer tables.
// Every string that comes from the results goes through escape_xml (tables here, charts in
// svg.cpp), so a hostile host name or parameter renders as text.
#include "mgbench/reports/charts.hpp"
#include "mgbench/reports/compare_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/reports/compare_render.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/html.hpp"
#include "mgbench/reports/sections.hpp"
#include "mgbench/reports/svg.hpp"
#include "mgbench/core/file_io.hpp"

namespace mgbench::reports {
namespace {

using Points = std::vector<const PointResult*>;

constexpr std::size_t kMaxScalingCharts = 6;
constexpr std::size_t kMaxSizeCharts = 8;
constexpr std::size_t kMaxEfficiencySets = 3;

// ---- verdict styles -----------------------------------------------------------------------------
// Okabe-Ito colours; the marker shape of a series follows its palette index (svg.cpp: index % 5),
// so each verdict also has its own shape: ▲ faster (bluish green), ▼ slower (orange), ◆ noisy
// (reddish purple), ■ same (black, the new run's own colour and shape).

struct VerdictStyle {
  const char* name;
  const char* symbol;
  int colour;  // palette index
  int rank;    // how much a person needs to see it: slower first
};

const VerdictStyle kVerdicts[] = {{"slower", "\u25BC", 4, 3},
                                  {"faster", "\u25B2", 2, 2},
                                  {"noisy", "\u25C6", 3, 1},
                                  {"same", "\u25A0", 6, 0}};
const VerdictStyle kUnknownVerdict = {"", "?", 6, 0};

const VerdictStyle& verdict_style(const std::string& verdict) {
  for (const auto& v : kVerdicts) {
    if (verdict == v.name) return v;
  }
  return kUnknownVerdict;
}

int verdict_rank(const std::string& verdict) { return verdict_style(verdict).rank; }

constexpr int kIdealColour = 5;

int run_colour(std::size_t run) {
  static const int kColours[] = {0, 6, 1, 5, 2, 3, 4};
  return kColours[run % 7];
}

constexpr const char* kCss = R"CSS(
.outcome { margin: 14px 0 6px; padding: 8px 12px; border-radius: 4px; border: 1px solid #ccc;
           font-size: 15px; font-weight: 600; background: #f6f6f6; }
.outcome.bad { border-color: #E69F00; background: #fdf1da; box-shadow: inset 5px 0 0 #E69F00; }
.outcome.good { border-color: #009E73; background: #e3f4ee; box-shadow: inset 5px 0 0 #009E73; }
.outcome.neutral { box-shadow: inset 5px 0 0 #888; }
.chips { display: flex; flex-wrap: wrap; gap: 8px; margin: 6px 0 8px; }
.verdict { display: inline-block; padding: 0 7px; border: 1px solid #777; border-radius: 3px;
           font-weight: 600; white-space: nowrap; color: #222; background: #f2f2f2; }
.verdict .sym { margin-right: 4px; }
.verdict.v-slower { border-color: #E69F00; background: #fdebc8; }
.verdict.v-slower .sym { color: #b87d00; }
.verdict.v-faster { border-color: #009E73; background: #d9f1e8; }
.verdict.v-faster .sym { color: #009E73; }
.verdict.v-noisy { border-color: #CC79A7; background: #f6e4ee; }
.verdict.v-noisy .sym { color: #b0558a; }
.verdict.v-same { border-color: #000; background: #efefef; }
.verdict.v-same .sym { color: #000; }
.chips .verdict { font-size: 14px; padding: 2px 10px; }
.chips .verdict.zero { opacity: 0.55; font-weight: 400; }
.chips .plain { display: inline-block; padding: 2px 10px; border: 1px dashed #999;
                border-radius: 3px; color: #333; }
table.data tr.v-slower td:first-child { box-shadow: inset 4px 0 0 #E69F00; }
table.data tr.v-faster td:first-child { box-shadow: inset 4px 0 0 #009E73; }
table.data tr.v-noisy td:first-child { box-shadow: inset 4px 0 0 #CC79A7; }
table.data td.best { font-weight: 700; background: #e3f4ee; }
table.data td.na { color: #777; }
table.data td.bad-status { color: #a33; }
table.data td.path, table.data td code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo,
                                         Consolas, monospace; font-size: 12px; }
table.data td.why { color: #444; max-width: 460px; }
#inputs table.data td:not(.path), #offers table.data td:not(.path) { white-space: nowrap; }
.legend-line { margin: 2px 0 10px; color: #444; }
/* The new run's verdict markers (svg.cpp draws 3.6 px markers): larger, outlined. */
svg.chart g.series[data-name^="verdict: "] .point { transform-box: fill-box;
  transform-origin: center; transform: scale(1.7); stroke: #222; stroke-width: 0.5; }
svg.chart g.series[data-name="verdict: same"] .point { transform: scale(1.3); stroke: #fff; }
.legend-line .verdict { margin: 0 2px; }
@media print {
  .verdict, .outcome, table.data td.best, table.data tr td:first-child {
    -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
)CSS";

// ---- small text helpers -------------------------------------------------------------------------

std::string esc(const std::string& text) { return escape_xml(text); }

// j[key] without the undefined behaviour of a missing key on a const object (null then).
const Json& field(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// j[key] when it is an array, else an empty array.
const Json& array_of(const Json& j, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& value = field(j, key);
  return value.is_array() ? value : kEmpty;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string badge(const std::string& verdict, const std::string& text = "",
                  const std::string& extra_class = "") {
  const VerdictStyle& s = verdict_style(verdict);
  std::string cls = s.name[0] ? std::string(" v-") + s.name : std::string();
  if (!extra_class.empty()) cls += " " + extra_class;
  return "<span class=\"verdict" + cls + "\"><span class=\"sym\" aria-hidden=\"true\">" + s.symbol +
         "</span>" + esc(text.empty() ? verdict : text) + "</span>";
}

std::string p_value_text(double p) {
  if (!std::isfinite(p)) return "-";
  if (p < 1e-4) return fmt::format("{:.1e}", p);
  return fmt::format("{:.4f}", p);
}

// "dtype=bf16 impl=cublas" of the keys in `keys` only ("-" when none); m, n and k with one
// value shown once ("m=n=k=4096").
std::string params_text(const Json& params, const std::vector<std::string>& keys) {
  if (!params.is_object()) return "-";
  const auto shown = [&](const char* k) {
    return params.contains(k) && std::find(keys.begin(), keys.end(), k) != keys.end();
  };
  const bool square = shown("m") && shown("n") && shown("k") && params["m"] == params["n"] &&
                      params["n"] == params["k"];
  std::string out;
  for (const auto& k : keys) {
    if (!params.contains(k)) continue;
    if (square && (k == "n" || k == "k")) continue;
    const Json& v = params[k];
    out += (out.empty() ? "" : " ") + (square && k == "m" ? std::string("m=n=k") : k) + "=" +
           (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out.empty() ? "-" : out;
}

// Keys whose values differ between `params` (or that some lack), in key order.
std::vector<std::string> varying_keys(const std::vector<const Json*>& params) {
  std::map<std::string, std::set<std::string>> values;
  std::map<std::string, std::size_t> present;
  for (const Json* p : params) {
    if (!p->is_object()) continue;
    for (auto it = p->begin(); it != p->end(); ++it) {
      values[it.key()].insert(it.value().dump());
      ++present[it.key()];
    }
  }
  std::vector<std::string> out;
  for (const auto& [key, distinct] : values) {
    if (distinct.size() > 1 || present[key] < params.size()) out.push_back(key);
  }
  return out;
}

std::vector<std::string> without(std::vector<std::string> keys, const std::set<std::string>& drop) {
  keys.erase(std::remove_if(keys.begin(), keys.end(),
                            [&](const std::string& k) { return drop.count(k) > 0; }),
             keys.end());
  return keys;
}

// A label of a parameter set for charts: the `keys` given, bytes in binary units.
std::string set_label(const Json& params, const std::vector<std::string>& keys) {
  std::vector<std::string> shown = without(keys, {"bytes", "count"});
  std::string out = params_short_label(params, shown);
  if (std::find(keys.begin(), keys.end(), "bytes") != keys.end()) {
    if (const auto b = json_number(params, "bytes")) {
      out += (out.empty() ? "" : " · ") + format_bytes_iec(*b);
    }
  }
  return out;
}

std::optional<double> size_value(const Json& params) {
  for (const char* k : {"bytes", "size", "m", "batch", "per_gpu_batch", "batch_size", "tokens"}) {
    if (const auto v = json_number(params, k)) return v;
  }
  return std::nullopt;
}

// ---- HTML tables --------------------------------------------------------------------------------

struct HtmlTable {
  std::vector<std::pair<std::string, bool>> header;  // escaped html, numeric
  std::vector<std::vector<std::string>> rows;        // cells: full <td ...>...</td>
  std::vector<std::string> row_classes;

  void column(const std::string& title, bool numeric = false) {
    header.emplace_back(esc(title), numeric);
  }
  void column_html(const std::string& html, bool numeric = false) {
    header.emplace_back(html, numeric);
  }
  void add(std::vector<std::string> cells, std::string cls = "") {
    rows.push_back(std::move(cells));
    row_classes.push_back(std::move(cls));
  }
  bool empty() const { return rows.empty(); }

  std::string render(const std::string& id = "") const {
    std::string out = "<div class=\"table-wrap\"><table class=\"data\"";
    if (!id.empty()) out += " id=\"" + esc(id) + "\"";
    out += ">\n<thead><tr>";
    for (const auto& [h, numeric] : header) {
      out += numeric ? "<th class=\"num\">" : "<th>";
      out += h + "</th>";
    }
    out += "</tr></thead>\n<tbody>\n";
    for (std::size_t r = 0; r < rows.size(); ++r) {
      out += row_classes[r].empty() ? "<tr>" : "<tr class=\"" + esc(row_classes[r]) + "\">";
      for (const auto& c : rows[r]) out += c;
      out += "</tr>\n";
    }
    return out + "</tbody></table></div>\n";
  }
};

std::string td(const std::string& text, const std::string& cls = "") {
  return (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") + esc(text) + "</td>";
}
std::string td_num(const std::string& text, const std::string& extra = "") {
  return "<td class=\"num" + (extra.empty() ? std::string() : " " + extra) + "\">" + esc(text) +
         "</td>";
}
std::string td_html(const std::string& html, const std::string& cls = "") {
  return (cls.empty() ? "<td>" : "<td class=\"" + cls + "\">") + html + "</td>";
}

std::string section_open(const std::string& id, const std::string& title) {
  return "<section id=\"" + esc(id) + "\">\n<h2>" + esc(title) + "</h2>\n";
}

std::string caption(const std::string& text) {
  return "<p class=\"caption\">" + esc(text) + "</p>\n";
}

// ---- context ------------------------------------------------------------------------------------

struct Context {
  explicit Context(const Json& document) : doc(document) {}
  const Json& doc;
  bool offers = false;
  std::vector<const RunResult*> runs;
  std::vector<std::string> labels;
  std::vector<std::string> workloads;
  std::map<std::string, const Json*> verdicts;  // comparison point key -> point JSON
  std::set<std::string> ids;

  bool two_runs() const { return !offers && runs.size() >= 2; }

  std::string chart_id(const std::string& text) {
    std::string id = slug("cmp-" + text);
    if (id.size() > 64) id.resize(64);
    while (!id.empty() && id.back() == '-') id.pop_back();
    if (ids.insert(id).second) return id;
    for (int k = 2;; ++k) {
      const std::string candidate = id + "-" + std::to_string(k);
      if (ids.insert(candidate).second) return candidate;
    }
  }

  const Json* verdict_of(const PointResult& p) const {
    const auto it = verdicts.find(point_key(p));
    return it == verdicts.end() ? nullptr : it->second;
  }

  std::string base_label() const { return labels.empty() ? "base" : labels[0]; }
  std::string new_label() const { return labels.size() < 2 ? "new" : labels[1]; }
};

Context make_context(const CompareReportInput& input) {
  Context ctx(input.comparison);
  ctx.offers = input.offers || json_string(input.comparison, "kind") == "offers";
  for (const RunResult* r : input.runs) {
    if (r) ctx.runs.push_back(r);
  }
  for (std::size_t i = 0; i < ctx.runs.size(); ++i) {
    ctx.labels.push_back(i < input.labels.size() && !input.labels[i].empty()
                             ? input.labels[i]
                             : "run " + std::to_string(i + 1));
  }
  for (const RunResult* r : ctx.runs) {
    for (const auto& w : workloads_of(*r)) {
      if (std::find(ctx.workloads.begin(), ctx.workloads.end(), w) == ctx.workloads.end())
        ctx.workloads.push_back(w);
    }
  }
  for (const Json& p : array_of(input.comparison, "points")) {
    const std::string key = json_string(p, "key");
    if (!key.empty()) ctx.verdicts.emplace(key, &p);
  }
  return ctx;
}

// The ok points of one workload in one run (the first per key when a run repeats one).
Points ok_points(const RunResult& run, const std::string& workload) {
  Points out;
  std::set<std::string> seen;
  for (const auto* p : points_of(run, workload)) {
    if (p->status != Status::ok) continue;
    if (seen.insert(point_key(*p)).second) out.push_back(p);
  }
  return out;
}

// ---- chart building -----------------------------------------------------------------------------
// Colour, marker shape and line style per run; the base run dashed and drawn over the others,
// so equal curves both show. Two runs: the new run's markers are the verdict overlays (one
// marker-only series per verdict, on top).

// Markers of the new run's points, one marker-only series per verdict (drawn last, on top).
class VerdictOverlay {
 public:
  void add(const std::string& verdict, double x, double y, const std::string& title) {
    if (verdict_style(verdict).name[0] == '\0') return;
    auto& s = series_[verdict];
    s.x.push_back(x);
    s.y.push_back(y);
    s.point_titles.push_back(title);
  }
  // Points of the new run without a verdict (only in that run): its own black squares.
  void add_unjudged(double x, double y, const std::string& title) {
    unjudged_.x.push_back(x);
    unjudged_.y.push_back(y);
    unjudged_.point_titles.push_back(title);
  }
  void append_to(svg::LineChart& chart) const {
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

 private:
  std::map<std::string, svg::Series> series_;
  svg::Series unjudged_;
};

std::string verdict_tip(const Json& v) {
  std::string tip = json_string(v, "verdict");
  if (const auto c = json_number(v, "change")) tip += " (" + format_change(*c) + ")";
  const std::string reason = json_string(v, "reason");
  if (!reason.empty()) tip += ": " + reason;
  return tip;
}

// One point of run `run` on a chart: its series gets it; in two-run mode the new run's point
// also goes to the verdict overlay.
void add_point(const Context& ctx, std::size_t run, const PointResult& p, double x, double y,
               const std::string& title, svg::Series& series, VerdictOverlay& overlay) {
  series.x.push_back(x);
  series.y.push_back(y);
  series.point_titles.push_back(title);
  if (run != 1 || !ctx.two_runs()) return;
  if (const Json* v = ctx.verdict_of(p)) {
    overlay.add(json_string(*v, "verdict"), x, y, title + " · " + verdict_tip(*v));
  } else {
    overlay.add_unjudged(x, y, title + " · no verdict (not in " + ctx.labels[0] + ")");
  }
}

// Line style of a run: the first (base) dashed, the second solid, the third dotted. Drawn in
// reverse order of these styles' weight (solid first, the base last, on top), so curves that
// coincide all stay visible.
svg::LineStyle run_line(std::size_t run) {
  switch (run) {
    case 0:
      return svg::LineStyle::dashed;
    case 2:
      return svg::LineStyle::dotted;
    default:
      return svg::LineStyle::solid;
  }
}

// Adds the runs' series (pairs of run index and series, in legend order): legend entries in that
// order (marker-less copies), then the series drawn the base run last. Two runs with
// `verdict_markers`: the new run's line has no markers of its own (the verdict overlay marks it).
void add_run_series(const Context& ctx, svg::LineChart& chart,
                    std::vector<std::pair<std::size_t, svg::Series>> series,
                    bool verdict_markers = true) {
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

struct ParamSet {
  Json params;
  std::string key;
  std::vector<std::map<int, const PointResult*>> by_run;  // gpus -> point, per run
  int interest = 0;  // verdict rank of its most important point
};

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
        ParamSet s;
        s.params = p->params;
        s.key = key;
        s.by_run.resize(ctx.runs.size());
        sets.push_back(std::move(s));
      }
      ParamSet& s = sets[it->second];
      s.by_run[r].emplace(p->gpus, p);
      if (const Json* v = ctx.verdict_of(*p))
        s.interest = std::max(s.interest, verdict_rank(json_string(*v, "verdict")));
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

// The scaling metric of a workload: from the runs' scaling series (RunResult::scaling), so only
// workloads that have scaling tables get throughput-vs-GPU-count charts (all-reduce busbw does
// not scale with the GPU count: it has none).
std::optional<std::pair<std::string, std::string>> scaling_metric(const Context& ctx,
                                                                  const std::string& workload) {
  for (const RunResult* run : ctx.runs) {
    if (!run->scaling.is_array()) continue;
    for (const Json& s : run->scaling) {
      if (!s.is_object() || json_string(s, "workload") != workload) continue;
      const std::string metric = json_string(s, "metric");
      if (!metric.empty()) return std::make_pair(metric, json_string(s, "unit"));
    }
  }
  return std::nullopt;
}

// Throughput vs GPU count per parameter set (the runs overlaid, the ideal line from the first
// run). Returns the keys of the sets drawn (for the efficiency chart).
std::vector<std::string> scaling_charts(Context& ctx, const std::string& workload,
                                        std::vector<std::string>& svgs, std::string& note) {
  const auto metric = scaling_metric(ctx, workload);
  if (!metric) return {};
  const auto& [metric_name, unit] = *metric;
  std::vector<ParamSet> sets = param_sets(ctx, workload);
  sets.erase(std::remove_if(sets.begin(), sets.end(),
                            [](const ParamSet& s) { return gpu_counts(s).size() < 2; }),
             sets.end());
  if (sets.empty()) return {};
  std::vector<const Json*> all_params;
  for (const auto& s : sets) all_params.push_back(&s.params);
  const std::vector<std::string> vary = varying_keys(all_params);
  const std::size_t total = sets.size();
  // Too many sets: one per combination of the non-size parameters (the most important
  // verdict first, then the largest size), then the most important ones.
  static const std::set<std::string> kSizeLike = {
      "bytes",      "count",         "size",         "m",     "n", "k", "batch",
      "batch_size", "per_gpu_batch", "global_batch", "tokens"};
  if (sets.size() > kMaxScalingCharts) {
    std::vector<ParamSet> best;
    std::map<std::string, std::size_t> where;
    for (auto& s : sets) {
      Json rest = s.params;
      for (const auto& k : kSizeLike) rest.erase(k);
      const std::string key = rest.dump();
      const auto it = where.find(key);
      if (it == where.end()) {
        where.emplace(key, best.size());
        best.push_back(s);
        continue;
      }
      ParamSet& b = best[it->second];
      const double size = size_value(s.params).value_or(0);
      const double bsize = size_value(b.params).value_or(0);
      if (s.interest > b.interest || (s.interest == b.interest && size > bsize)) b = s;
    }
    sets = std::move(best);
    std::stable_sort(sets.begin(), sets.end(),
                     [](const ParamSet& a, const ParamSet& b) { return a.interest > b.interest; });
    if (sets.size() > kMaxScalingCharts) sets.resize(kMaxScalingCharts);
  }
  if (sets.size() < total) {
    note = fmt::format(
        "Throughput vs GPU count: {} of {} parameter sets shown (per combination of the other "
        "parameters, the size with the most important verdict, else the largest size); every "
        "point is in the verdict table.",
        sets.size(), total);
  }
  std::vector<std::string> drawn;
  for (const ParamSet& s : sets) {
    const std::string label = set_label(s.params, vary);
    svg::LineChart c;
    c.title = workload + ": " + metric_label(metric_name) + " vs GPU count";
    c.subtitle = label;
    c.height = 360;
    const std::set<int> counts = gpu_counts(s);
    c.x = gpu_axis(counts);
    c.y.label = metric_axis_label(metric_name, unit);
    VerdictOverlay overlay;
    std::vector<std::pair<std::size_t, svg::Series>> runs;
    for (std::size_t r = 0; r < ctx.runs.size(); ++r) {
      svg::Series series;
      series.name = ctx.labels[r];
      series.colour = run_colour(r);
      for (const auto& [g, p] : s.by_run[r]) {
        const auto v = json_number(p->metrics, metric_name);
        if (!v) continue;
        add_point(
            ctx, r, *p, g, *v,
            fmt::format("{}: {}, {} {}", ctx.labels[r], gpus_label(g), format_sig(*v, 4), unit),
            series, overlay);
      }
      runs.emplace_back(r, std::move(series));
    }
    add_run_series(ctx, c, std::move(runs));
    // Ideal: the first run's smallest GPU count scaled linearly.
    const auto& first = s.by_run[0];
    if (!first.empty()) {
      const int g0 = first.begin()->first;
      if (const auto v0 = json_number(first.begin()->second->metrics, metric_name)) {
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
    }
    overlay.append_to(c);
    if (!svg::has_data(c)) continue;
    c.id = ctx.chart_id(workload + "-scaling-" + label);
    svgs.push_back(svg::render(c));
    drawn.push_back(s.key);
  }
  return drawn;
}

// Efficiency per GPU count of up to kMaxEfficiencySets parameter sets.
struct EffSet {
  Json params;
  std::string key;
  std::map<int, std::vector<std::optional<double>>> by_gpus;  // gpus -> value per run
};

std::vector<EffSet> efficiency_sets(const Context& ctx, const std::string& workload) {
  std::vector<EffSet> sets;
  std::map<std::string, std::size_t> index;
  auto slot = [&](const Json& params) -> EffSet& {
    const std::string key = params.dump();
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, sets.size()).first;
      sets.push_back({params, key, {}});
    }
    return sets[it->second];
  };
  const Json& doc = ctx.doc;
  const std::size_t n = ctx.runs.size();
  auto opt = [](const Json& v) -> std::optional<double> {
    if (v.is_number()) return v.get<double>();
    return std::nullopt;
  };
  if (!ctx.offers) {
    for (const Json& row : array_of(doc, "efficiency")) {
      if (json_string(row, "workload") != workload) continue;
      const auto g = json_number(row, "gpus");
      if (!g) continue;
      auto& values = slot(field(row, "params")).by_gpus[static_cast<int>(*g)];
      values.assign(n, std::nullopt);
      if (n > 0) values[0] = opt(field(row, "base"));
      if (n > 1) values[1] = opt(field(row, "new"));
    }
  } else {
    for (const Json& t : array_of(doc, "tables")) {
      if (json_string(t, "workload") != workload) continue;
      for (const Json& row : array_of(t, "rows")) {
        const auto g = json_number(row, "gpus");
        if (!g) continue;
        const Json& cells = array_of(row, "cells");
        auto& values = slot(field(row, "params")).by_gpus[static_cast<int>(*g)];
        values.assign(n, std::nullopt);
        for (std::size_t i = 0; i < std::min(n, cells.size()); ++i)
          values[i] = opt(field(cells[i], "efficiency"));
      }
    }
  }
  // Only sets with an efficiency at two or more GPU counts make a curve.
  sets.erase(std::remove_if(sets.begin(), sets.end(),
                            [](const EffSet& s) {
                              int with_value = 0;
                              for (const auto& [g, v] : s.by_gpus) {
                                if (std::any_of(v.begin(), v.end(),
                                                [](const auto& x) { return x.has_value(); }))
                                  ++with_value;
                              }
                              return with_value < 2;
                            }),
             sets.end());
  return sets;
}

// Colour = parameter set (the run colours when there is one), line style = run.
void efficiency_chart(Context& ctx, const std::string& workload, std::vector<EffSet> sets,
                      const std::vector<std::string>& preferred, std::vector<std::string>& svgs) {
  if (sets.empty()) return;
  const std::size_t total = sets.size();
  // Sets whose efficiency moved by 1 percentage point or more between the runs first (largest
  // move first), then in the order of the throughput charts.
  const auto moved = [](const EffSet& s) {
    double most = 0;
    for (const auto& [g, v] : s.by_gpus) {
      for (std::size_t r = 1; r < v.size(); ++r) {
        if (v[0] && v[r]) most = std::max(most, std::fabs(*v[r] - *v[0]));
      }
    }
    return most >= 0.01 ? most : 0.0;
  };
  std::stable_sort(sets.begin(), sets.end(), [&](const EffSet& a, const EffSet& b) {
    const double ma = moved(a), mb = moved(b);
    if (ma != mb) return ma > mb;
    return std::find(preferred.begin(), preferred.end(), a.key) <
           std::find(preferred.begin(), preferred.end(), b.key);
  });
  if (sets.size() > kMaxEfficiencySets) sets.resize(kMaxEfficiencySets);
  std::vector<const Json*> params;
  for (const auto& s : sets) params.push_back(&s.params);
  const std::vector<std::string> vary = varying_keys(params);
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
  static const int kSetColours[] = {0, 1, 2};
  double lowest = 100;
  std::vector<std::pair<std::size_t, svg::Series>> series;
  for (std::size_t si = 0; si < sets.size(); ++si) {
    const std::string label = sets.size() > 1 ? set_label(sets[si].params, vary) : "";
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
  c.y.zero_based = false;
  c.y.min = std::max(0.0, std::min(50.0, std::floor((lowest - 5) / 10) * 10));
  if (!svg::has_data(c)) return;
  c.id = ctx.chart_id(workload + "-efficiency");
  svgs.push_back(svg::render(c));
}

// Metric vs size (GEMM size, all-reduce message size, training batch): one chart per
// combination of the other parameters and GPU count (the largest count, plus the count with
// the most important verdict when that is another one).
struct SizeSpec {
  std::string x_key, x_label, x_desc, metric, y_label, title;
  svg::TickFormat format = svg::TickFormat::integer;
  bool force_log = false;
  std::set<std::string> drop;  // parameters that move with x (not a reason for another chart)
};

std::optional<SizeSpec> size_spec(const std::string& workload, const std::vector<Points>& runs) {
  std::vector<const Json*> params;
  bool any_busbw = false, any_per_gpu = false;
  for (const auto& pts : runs) {
    for (const auto* p : pts) {
      params.push_back(&p->params);
      if (json_number(p->metrics, "busbw_GBps").value_or(0) > 0) any_busbw = true;
      if (json_number(p->metrics, "tflops_per_gpu")) any_per_gpu = true;
    }
  }
  const auto vary = varying_keys(params);
  const auto varies = [&](const std::string& k) {
    return std::find(vary.begin(), vary.end(), k) != vary.end();
  };
  SizeSpec s;
  if (workload == "gemm") {
    for (const char* k : {"size", "m", "n", "k", "tokens", "batch"}) {
      if (varies(k)) {
        s.x_key = k;
        break;
      }
    }
    if (s.x_key.empty()) return std::nullopt;
    bool square = s.x_key == "m";
    for (const Json* p : params) {
      if (field(*p, "m") != field(*p, "n") || field(*p, "n") != field(*p, "k") ||
          field(*p, "m").is_null())
        square = false;
    }
    s.x_label = s.x_key == "size" ? "matrix size" : square ? "matrix size M = N = K" : s.x_key;
    s.x_desc = s.x_key == "size" || square ? "size" : s.x_key;
    s.metric = any_per_gpu ? "tflops_per_gpu" : "tflops_aggregate";
    s.y_label = any_per_gpu ? "TFLOP/s per GPU" : "aggregate TFLOP/s";
    s.title = "gemm: " + s.y_label + " vs size";
    s.drop = {s.x_key, "size", "tokens"};
    if (square) s.drop.insert({"m", "n", "k"});
  } else if (workload == "allreduce") {
    if (!varies("bytes")) return std::nullopt;
    s.x_key = "bytes";
    s.x_label = "message size";
    s.x_desc = "size";
    s.format = svg::TickFormat::bytes;
    s.force_log = true;
    s.metric = any_busbw ? "busbw_GBps" : "algbw_GBps";
    s.y_label = any_busbw ? "busbw (GB/s)" : "algbw (GB/s)";
    s.title = std::string("allreduce: ") + (any_busbw ? "bus" : "algorithm") +
              " bandwidth vs message size";
    s.drop = {"bytes", "count"};
  } else if (workload == "train_step") {
    for (const auto& k : vary) {
      if (k.find("batch") == std::string::npos || k == "global_batch") continue;
      bool numeric = true;
      for (const Json* p : params) {
        if (p->contains(k) && !(*p)[k].is_number()) numeric = false;
      }
      if (numeric) {
        s.x_key = k;
        break;
      }
    }
    if (s.x_key.empty()) return std::nullopt;
    s.x_label = "per-GPU batch size (" + s.x_key + ")";
    s.x_desc = "batch";
    s.metric = "samples_per_s";
    s.y_label = "samples/s";
    s.title = "train_step: samples/s vs batch size";
    s.drop = {s.x_key, "global_batch"};
  } else {
    return std::nullopt;
  }
  return s;
}

std::string x_text(const SizeSpec& spec, double x) {
  return spec.format == svg::TickFormat::bytes ? format_bytes_iec(x) : format_plain(x);
}

void size_charts(Context& ctx, const std::string& workload, std::vector<std::string>& svgs,
                 std::string& note) {
  std::vector<Points> runs;
  for (const RunResult* r : ctx.runs) runs.push_back(ok_points(*r, workload));
  const auto spec_opt = size_spec(workload, runs);
  if (!spec_opt) return;
  const SizeSpec& spec = *spec_opt;
  std::vector<const Json*> params;
  for (const auto& pts : runs) {
    for (const auto* p : pts) params.push_back(&p->params);
  }
  const std::vector<std::string> split_keys = without(varying_keys(params), spec.drop);

  // One candidate chart per (other parameters, GPU count).
  struct Candidate {
    std::string label;
    int gpus = 1;
    std::vector<Points> by_run;
    int interest = 0;
    std::size_t split = 0;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> split_order;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto* p : runs[r]) {
      if (!json_number(p->params, spec.x_key) || !json_number(p->metrics, spec.metric)) continue;
      const std::string label = split_keys.empty() ? "" : set_label(p->params, split_keys);
      auto so = std::find(split_order.begin(), split_order.end(), label);
      if (so == split_order.end()) so = split_order.insert(split_order.end(), label);
      auto it = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) {
        return c.label == label && c.gpus == p->gpus;
      });
      if (it == candidates.end()) {
        candidates.push_back({label, p->gpus, std::vector<Points>(runs.size()), 0,
                              static_cast<std::size_t>(so - split_order.begin())});
        it = candidates.end() - 1;
      }
      it->by_run[r].push_back(p);
      if (const Json* v = ctx.verdict_of(*p))
        it->interest = std::max(it->interest, verdict_rank(json_string(*v, "verdict")));
    }
  }
  const auto distinct_x = [&](const Candidate& c) {
    std::set<double> xs;
    for (const auto& pts : c.by_run) {
      for (const auto* p : pts) xs.insert(*json_number(p->params, spec.x_key));
    }
    return xs.size();
  };
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                  [&](const Candidate& c) { return distinct_x(c) < 2; }),
                   candidates.end());
  // Per split: the largest GPU count, and the count with the most important verdict.
  std::vector<Candidate> chosen;
  std::size_t counts_total = 0;
  for (std::size_t split = 0; split < split_order.size(); ++split) {
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
  const std::size_t before_cap = chosen.size();
  if (chosen.size() > kMaxSizeCharts) {
    std::stable_sort(chosen.begin(), chosen.end(), [](const Candidate& a, const Candidate& b) {
      return a.interest > b.interest;
    });
    chosen.resize(kMaxSizeCharts);
  }
  if (chosen.size() < counts_total) {
    note += (note.empty() ? "" : " ") +
            fmt::format(
                "{}: {} of {} charts shown (per combination of parameters, the largest GPU "
                "count and the count with the most important verdict{}).",
                spec.title, chosen.size(), counts_total,
                before_cap > chosen.size() ? ", most important first" : "");
  }
  for (const Candidate& cand : chosen) {
    std::vector<double> xs;
    for (const auto& pts : cand.by_run) {
      for (const auto* p : pts) xs.push_back(*json_number(p->params, spec.x_key));
    }
    svg::LineChart c;
    c.title = spec.title;
    c.subtitle = cand.label + (cand.label.empty() ? "" : " · ") + gpus_label(cand.gpus);
    const double lo = *std::min_element(xs.begin(), xs.end());
    const double hi = *std::max_element(xs.begin(), xs.end());
    const bool log = spec.force_log || (lo > 0 && hi / lo >= 3);
    c.x.label = spec.x_label;
    c.x.format = spec.format;
    c.x.scale = log ? svg::Scale::log2 : svg::Scale::linear;
    c.x.zero_based = false;
    if (!log) {
      std::set<double> distinct(xs.begin(), xs.end());
      if (distinct.size() <= 8) c.x.ticks.assign(distinct.begin(), distinct.end());
    }
    c.y.label = spec.y_label;
    VerdictOverlay overlay;
    std::vector<std::pair<std::size_t, svg::Series>> series;
    for (std::size_t r = 0; r < ctx.runs.size(); ++r) {
      Points pts = cand.by_run[r];
      if (pts.empty()) continue;
      std::stable_sort(pts.begin(), pts.end(), [&](const PointResult* a, const PointResult* b) {
        return *json_number(a->params, spec.x_key) < *json_number(b->params, spec.x_key);
      });
      svg::Series s;
      s.name = ctx.labels[r];
      s.colour = run_colour(r);
      for (const auto* p : pts) {
        const double x = *json_number(p->params, spec.x_key);
        const double y = *json_number(p->metrics, spec.metric);
        add_point(ctx, r, *p, x, y,
                  fmt::format("{} · {}: {} {}, {} {}", s.name, gpus_label(cand.gpus), spec.x_desc,
                              x_text(spec, x), format_sig(y, 4), spec.y_label),
                  s, overlay);
      }
      series.emplace_back(r, std::move(s));
    }
    add_run_series(ctx, c, std::move(series));
    overlay.append_to(c);
    if (!svg::has_data(c)) continue;
    c.id = ctx.chart_id(workload + "-size-" + cand.label + "-" + std::to_string(cand.gpus));
    svgs.push_back(svg::render(c));
  }
}

// ---- sections -----------------------------------------------------------------------------------

// The kind of an environment path in words (driver, NCCL, VBIOS...).
std::string env_kind(const std::string& path) {
  const std::string p = lower(path);
  const auto has = [&](const char* s) { return p.find(s) != std::string::npos; };
  const auto starts = [&](const char* s) { return p.rfind(s, 0) == 0; };
  if (has("vbios")) return "VBIOS";
  if (has("power_limit") || has("power-limit")) return "power limit";
  if (has("clock")) return "clocks";
  if (has("nccl")) return "NCCL";
  if (has("cublas")) return "cuBLAS";
  if (has("cuda")) return "CUDA";
  if (has("driver")) return "driver";
  if (has("nvml")) return "NVML";
  if (starts("gpus[") && ends_with(p, ".name")) return "GPU model";
  if (has("gpu_count")) return "GPU count";
  if (has("ecc") || has("mig") || has("persistence")) return "GPU mode";
  if (has("pcie") || has("nvlink") || has("topology")) return "interconnect";
  if (starts("gpus[")) return "GPU";
  if (starts("host")) return "host";
  if (starts("env")) return "environment variable";
  if (starts("tool")) return "mgbench";
  if (has("fingerprint")) return "fingerprint";
  return "other";
}

std::string env_changes_table(const Json& changes) {
  HtmlTable t;
  t.column("what");
  t.column("field");
  t.column("before");
  t.column("after");
  for (const Json& c : changes) {
    std::string path = json_string(c, "path");
    const int count = static_cast<int>(json_number(c, "count").value_or(1));
    t.add({td(env_kind(path)), td(count > 1 ? fmt::format("{} (x{})", path, count) : path, "path"),
           td(json_string(c, "before")), td(json_string(c, "after"))});
  }
  return t.render();
}

int count_of(const Json& summary, const char* key) {
  return static_cast<int>(json_number(summary, key).value_or(0));
}

std::string summary_section(const Context& ctx) {
  const Json& summary = field(ctx.doc, "summary");
  const int exit_code = count_of(summary, "exit_code");
  const int slower = count_of(summary, "slower");
  const std::size_t compared = array_of(ctx.doc, "points").size();
  std::string out = section_open("summary", "Summary");
  if (slower > 0) {
    out += "<p class=\"outcome bad\">" +
           esc(fmt::format("Regression: {} of {} compared points slower (exit code {}).", slower,
                           compared, exit_code)) +
           "</p>\n";
  } else {
    out += "<p class=\"outcome good\">" +
           esc(fmt::format("No regression: none of {} compared points is slower (exit code {}).",
                           compared, exit_code)) +
           "</p>\n";
  }
  out += "<div class=\"chips\">";
  for (const auto& v : kVerdicts) {
    const int n = count_of(summary, v.name);
    out += badge(v.name, fmt::format("{} {}", n, v.name), n == 0 ? "zero" : "");
  }
  const std::pair<const char*, std::string> extra[] = {
      {"not_compared", "not compared"},
      {"only_in_base", "only in " + ctx.base_label()},
      {"only_in_new", "only in " + ctx.new_label()}};
  for (const auto& [key, text] : extra) {
    const int n = count_of(summary, key);
    if (n > 0) out += "<span class=\"plain\">" + esc(fmt::format("{} {}", n, text)) + "</span>";
  }
  out += "</div>\n";
  const Json& opts = field(ctx.doc, "options");
  std::string rule = "Verdicts: two-sided Mann-Whitney U test on the raw samples";
  if (const auto a = json_number(opts, "alpha")) rule += fmt::format(" (alpha {:g})", *a);
  rule += " and an effect on the median of at least the threshold";
  if (const auto t = json_number(opts, "threshold")) rule += " (" + format_percent(*t) + ")";
  rule += "; points noisy or throttled in either run are noisy, never slower.";
  out += caption(rule);
  return out + "</section>\n";
}

std::string environment_section(const Context& ctx) {
  std::string out = section_open("environment", "Environment changes");
  if (!ctx.offers) {
    const Json& changes = array_of(ctx.doc, "environment");
    if (changes.empty()) {
      out += "<p class=\"note\">" +
             esc("No environment changes between the fingerprints of " + ctx.base_label() +
                 " and " + ctx.new_label() + ".") +
             "</p>\n";
    } else {
      out += caption(ctx.base_label() + " \u2192 " + ctx.new_label() +
                     ": most important first (driver, CUDA, NCCL, cuBLAS, VBIOS, power limit, "
                     "clocks, GPU model, host...).");
      out += env_changes_table(changes);
    }
    if (field(ctx.doc, "fingerprint_differs") == true) {
      out +=
          "<p class=\"note\">The environment fingerprints differ (GPU model, count, driver, "
          "CUDA or NCCL): the runs did not measure the same system.</p>\n";
    }
    return out + "</section>\n";
  }
  out += caption("Each offer's environment against " + ctx.base_label() + "'s.");
  for (std::size_t i = 1; i < ctx.runs.size(); ++i) {
    Json list = Json::array();
    for (const auto& c : diff_runs(*ctx.runs[0], *ctx.runs[i])) {
      list.push_back(
          Json{{"path", c.path}, {"before", c.before}, {"after", c.after}, {"count", c.count}});
    }
    out += "<h3>" + esc(ctx.labels[0] + " \u2192 " + ctx.labels[i]) + "</h3>\n";
    out += list.empty() ? "<p class=\"note\">No differences.</p>\n" : env_changes_table(list);
  }
  return out + "</section>\n";
}

std::string quantity_caption(const Json& q, bool with_change) {
  const std::string metric = json_string(q, "metric");
  const std::string unit = json_string(q, "unit");
  if (metric.empty() || metric == "time") {
    return std::string("Compared: median time per op (lower is better).") +
           (with_change ? " Change = new / base - 1." : "");
  }
  return "Compared: " + metric + (unit.empty() ? "" : " (" + unit + ")") + ", higher is better." +
         (with_change ? " Change = new / base - 1." : "");
}

// The keys of `rows[0]`'s parameters that are not in `vary`, as "a=1 b=x" (empty when none).
std::string fixed_params_text(const std::vector<const Json*>& params,
                              const std::vector<std::string>& vary) {
  if (params.empty() || !params[0]->is_object()) return {};
  std::vector<std::string> fixed;
  for (auto it = params[0]->begin(); it != params[0]->end(); ++it) {
    if (std::find(vary.begin(), vary.end(), it.key()) == vary.end()) fixed.push_back(it.key());
  }
  return fixed.empty() ? std::string() : params_text(*params[0], fixed);
}

std::string gpus_cell(const Json& row) {
  return td_num(std::to_string(static_cast<int>(json_number(row, "gpus").value_or(0))));
}

std::string verdict_tables(const Context& ctx) {
  const Json& points = array_of(ctx.doc, "points");
  if (points.empty()) return {};
  const double global_threshold =
      json_number(field(ctx.doc, "options"), "threshold").value_or(0.03);
  std::vector<std::string> workloads;
  for (const Json& p : points) {
    const std::string w = json_string(p, "workload");
    if (std::find(workloads.begin(), workloads.end(), w) == workloads.end()) workloads.push_back(w);
  }
  std::string out = section_open("verdicts", "Verdicts");
  out += "<p class=\"legend-line\">" + badge("slower") + " " + badge("faster") + " " +
         badge("noisy") + " " + badge("same") + " " +
         esc("\u2014 the same colours and shapes mark " + ctx.new_label() +
             "'s points in the charts.") +
         "</p>\n";
  for (const auto& w : workloads) {
    std::vector<const Json*> rows, params;
    for (const Json& p : points) {
      if (json_string(p, "workload") != w) continue;
      rows.push_back(&p);
      params.push_back(&field(p, "params"));
    }
    const auto vary = varying_keys(params);
    bool any_test = false, own_threshold = false;
    for (const Json* p : rows) {
      if (field(*p, "test").is_object()) any_test = true;
      const double th = json_number(*p, "threshold").value_or(global_threshold);
      if (std::fabs(th - global_threshold) > 1e-12) own_threshold = true;
    }
    out += "<h3 id=\"" + esc("verdicts-" + slug(w)) + "\">" + esc(w) + "</h3>\n";
    std::string cap = quantity_caption(field(*rows[0], "quantity"), true);
    const std::string fixed = fixed_params_text(params, vary);
    if (!fixed.empty()) cap += " Same in every row: " + fixed + ".";
    out += caption(cap);
    HtmlTable t;
    t.column("parameters");
    t.column("GPUs", true);
    t.column(ctx.base_label(), true);
    t.column(ctx.new_label(), true);
    t.column("change", true);
    if (any_test) t.column("p", true);
    if (own_threshold) t.column("threshold", true);
    t.column("verdict");
    t.column("why");
    for (const Json* pp : rows) {
      const Json& p = *pp;
      const Json& q = field(p, "quantity");
      const std::string unit = json_string(q, "metric") == "time" ? "s" : json_string(q, "unit");
      const std::string verdict = json_string(p, "verdict");
      std::vector<std::string> cells = {
          td(params_text(field(p, "params"), vary)), gpus_cell(p),
          td_num(format_quantity(json_number(p, "base").value_or(NAN), unit)),
          td_num(format_quantity(json_number(p, "new").value_or(NAN), unit)),
          td_num(format_change(json_number(p, "change").value_or(NAN)))};
      if (any_test) {
        const auto pv = json_number(field(p, "test"), "p_value");
        cells.push_back(td_num(pv ? p_value_text(*pv) : "-"));
      }
      if (own_threshold) {
        std::string th = format_percent(json_number(p, "threshold").value_or(global_threshold));
        if (const auto noise = json_number(field(p, "noise"), "relative"))
          th += " (noise " + format_percent(*noise) + ")";
        cells.push_back(td_num(th));
      }
      cells.push_back(td_html(badge(verdict)));
      // A "same" needs no reason unless the median moved by the threshold or more.
      const double change = std::fabs(json_number(p, "change").value_or(0));
      const double threshold = json_number(p, "threshold").value_or(global_threshold);
      const bool explain = verdict != "same" || change >= threshold;
      cells.push_back(td(explain ? json_string(p, "reason") : "", "why"));
      t.add(std::move(cells), "v-" + slug(verdict));
    }
    out += t.render();
  }
  return out + "</section>\n";
}

std::string status_cell(const std::string& status) {
  return td(status, status == "ok" ? "" : "bad-status");
}

std::string unmatched_section(const Context& ctx) {
  const Json& nc = array_of(ctx.doc, "not_compared");
  const Json& ob = array_of(ctx.doc, "only_in_base");
  const Json& on = array_of(ctx.doc, "only_in_new");
  if (nc.empty() && ob.empty() && on.empty()) return {};
  std::string out = section_open("unmatched", "Not compared and unmatched points");
  if (!nc.empty()) {
    out += "<h3>Not compared (not ok in both runs)</h3>\n";
    HtmlTable t;
    t.column("workload");
    t.column("parameters");
    t.column("GPUs", true);
    t.column(ctx.base_label() + " status");
    t.column(ctx.new_label() + " status");
    t.column("message");
    for (const Json& p : nc) {
      t.add({td(json_string(p, "workload")), td(format_params(field(p, "params"))), gpus_cell(p),
             status_cell(json_string(p, "base_status")), status_cell(json_string(p, "new_status")),
             td(json_string(p, "message"), "why")});
    }
    out += t.render();
  }
  const auto only = [&](const Json& items, const std::string& label) {
    if (items.empty()) return std::string();
    HtmlTable t;
    t.column("workload");
    t.column("parameters");
    t.column("GPUs", true);
    t.column("status");
    for (const Json& p : items) {
      t.add({td(json_string(p, "workload")), td(format_params(field(p, "params"))), gpus_cell(p),
             status_cell(json_string(p, "status"))});
    }
    return "<h3>" + esc("Only in " + label) + "</h3>\n" + t.render();
  };
  out += only(ob, ctx.base_label());
  out += only(on, ctx.new_label());
  return out + "</section>\n";
}

std::string efficiency_table(const Context& ctx, const std::string& workload) {
  if (ctx.offers) return {};
  std::vector<const Json*> rows, params;
  for (const Json& r : array_of(ctx.doc, "efficiency")) {
    if (json_string(r, "workload") != workload) continue;
    rows.push_back(&r);
    params.push_back(&field(r, "params"));
  }
  if (rows.empty()) return {};
  // Numeric order of the parameters (batch 32 before 128), then GPU count.
  std::stable_sort(rows.begin(), rows.end(), [](const Json* a, const Json* b) {
    const Json &pa = field(*a, "params"), &pb = field(*b, "params");
    if (pa != pb) return pa < pb;
    return json_number(*a, "gpus").value_or(0) < json_number(*b, "gpus").value_or(0);
  });
  const auto vary = varying_keys(params);
  HtmlTable t;
  t.column("parameters");
  t.column("GPUs", true);
  t.column(ctx.base_label(), true);
  t.column(ctx.new_label(), true);
  t.column("difference", true);
  for (const Json* r : rows) {
    const auto b = json_number(*r, "base"), n = json_number(*r, "new");
    std::string diff = "-";
    if (b && n) {
      const double pp = std::round((*n - *b) * 1000.0) / 10.0;  // one decimal, no "-0.0"
      diff = pp == 0 ? "0.0 pp" : fmt::format("{:+.1f} pp", pp);
    }
    t.add({td(params_text(field(*r, "params"), vary)), gpus_cell(*r),
           td_num(b ? format_percent(*b) : "-"), td_num(n ? format_percent(*n) : "-"),
           td_num(diff)});
  }
  std::string cap = "Scaling efficiency at each GPU count, side by side (pp: percentage points).";
  const std::string fixed = fixed_params_text(params, vary);
  if (!fixed.empty()) cap += " Same in every row: " + fixed + ".";
  return "<h3>Scaling efficiency</h3>\n" + caption(cap) + t.render();
}

std::string inputs_section(const Context& ctx) {
  HtmlTable t;
  for (const char* h : {"label", "file", "host", "started", "mgbench", "GPUs", "driver", "points"})
    t.column(h);
  for (std::size_t i = 0; i < ctx.runs.size(); ++i) {
    const RunResult& run = *ctx.runs[i];
    const std::string path =
        i < 2 ? json_string(field(ctx.doc, i == 0 ? "base" : "new"), "path") : std::string();
    const OfferSummary s = summarize_offer(Offer{ctx.labels[i], path, &run, std::nullopt});
    std::string tool = json_string(run.tool, "version");
    const std::string rev = json_string(run.tool, "git_revision");
    if (!rev.empty()) tool += (tool.empty() ? "(" : " (") + rev + ")";
    t.add({td(ctx.labels[i]), td(path, "path"), td(run.host.empty() ? s.host : run.host),
           td(run.started_at), td(tool),
           td(s.gpu_count > 0 ? fmt::format("{} x{}", s.gpu_model, s.gpu_count) : s.gpu_model),
           td(s.driver.empty() ? "-" : s.driver), td(status_counts(run))});
  }
  return section_open("inputs", "Inputs") + t.render() + "</section>\n";
}

// ---- offers -------------------------------------------------------------------------------------

std::string offers_summary_section(const Context& ctx) {
  HtmlTable t;
  for (const char* h : {"offer", "GPU", "count", "interconnect", "driver", "CUDA", "NCCL",
                        "platform", "$/GPU-h", "host", "started", "file"}) {
    const std::string name = h;
    t.column(name, name == "count" || name == "$/GPU-h");
  }
  const Json& offers = array_of(ctx.doc, "offers");
  const auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const Json& o = offers[i];
    const auto price = json_number(o, "price_per_gpu_hour");
    t.add({td(json_string(o, "label")), td(dash(json_string(o, "gpu_model"))),
           td_num(format_plain(json_number(o, "gpu_count").value_or(0))),
           td(dash(json_string(o, "interconnect"))), td(dash(json_string(o, "driver"))),
           td(dash(json_string(o, "cuda"))), td(dash(json_string(o, "nccl"))),
           td(dash(json_string(o, "platform"))), td_num(price ? format_sig(*price, 3) : "-"),
           td(dash(json_string(o, "host"))),
           td(dash(i < ctx.runs.size() ? ctx.runs[i]->started_at : "")),
           td(json_string(o, "path"), "path")});
  }
  return section_open("offers", "Offers") + t.render() + "</section>\n";
}

std::string offer_tables(const Context& ctx, const std::string& workload) {
  const Json& offers = array_of(ctx.doc, "offers");
  std::vector<std::string> names;
  bool any_price = false;
  for (const Json& o : offers) {
    names.push_back(json_string(o, "label"));
    if (json_number(o, "price_per_gpu_hour")) any_price = true;
  }
  std::string out;
  for (const Json& t : array_of(ctx.doc, "tables")) {
    if (json_string(t, "workload") != workload) continue;
    const Json& rows = array_of(t, "rows");
    const Json& q = field(t, "quantity");
    const bool is_time = json_string(q, "metric") == "time" || json_string(q, "metric").empty();
    const std::string unit = is_time ? "" : json_string(q, "unit");
    std::vector<const Json*> params;
    for (const Json& r : rows) params.push_back(&field(r, "params"));
    const auto vary = varying_keys(params);
    struct Part {
      std::string title, field, best;
    };
    const std::string per = unit.empty() ? "" : unit + " ";
    const Part parts[] = {
        {"Throughput" + (unit.empty() ? std::string() : " (" + unit + ")"), "throughput",
         "best_throughput"},
        {"Scaling efficiency", "efficiency", ""},
        {"Per watt (" + per + "per W)", "per_watt", "best_per_watt"},
        {"Per dollar (" + per + "per $/h: throughput / (price per GPU-hour x GPUs))", "per_dollar",
         "best_per_dollar"}};
    out += "<h3>" + esc(workload + ": offers side by side") + "</h3>\n";
    std::string cap = quantity_caption(q, false);
    const std::string fixed = fixed_params_text(params, vary);
    if (!fixed.empty()) cap += " Same in every row: " + fixed + ".";
    cap +=
        " Best offer per row: \u2605 and bold. * noisy or throttled in that run; n/a: the "
        "offer did not run this point.";
    out += caption(cap);
    for (const Part& part : parts) {
      const bool efficiency = part.field == "efficiency";  // 1 at one GPU by definition
      bool any = false;
      for (const Json& r : rows) {
        if (efficiency && json_number(r, "gpus").value_or(1) <= 1) continue;
        for (const Json& c : array_of(r, "cells")) {
          if (json_number(c, part.field)) any = true;
        }
      }
      if (!any) {
        if (part.field == "per_dollar" && !any_price && !is_time) {
          out +=
              "<p class=\"note\">Per dollar: give --price LABEL=USD_PER_GPU_HOUR for each "
              "offer.</p>\n";
        }
        continue;
      }
      HtmlTable table;
      table.column("parameters");
      table.column("GPUs", true);
      for (const auto& n : names) table.column(n, true);
      if (!part.best.empty()) table.column("best");
      for (const Json& r : rows) {
        if (efficiency && json_number(r, "gpus").value_or(1) <= 1) continue;
        const std::string best = part.best.empty() ? std::string() : json_string(r, part.best);
        std::vector<std::string> cells = {td(params_text(field(r, "params"), vary)), gpus_cell(r)};
        const Json& row_cells = array_of(r, "cells");
        for (std::size_t i = 0; i < names.size(); ++i) {
          const Json& c = i < row_cells.size() ? row_cells[i] : field(Json(), "");
          if (!c.is_object()) {
            cells.push_back(td_num("n/a", "na"));
            continue;
          }
          const std::string status = json_string(c, "status", "ok");
          if (status != "ok") {
            cells.push_back(td_num(status, "bad-status"));
            continue;
          }
          const auto v = json_number(c, part.field);
          std::string text = "-";
          if (v && efficiency) {
            text = format_percent(*v);
          } else if (v && part.field == "throughput" && is_time) {
            text = format_quantity(*v, "s");
          } else if (v) {
            text = format_sig(*v, 4);
          }
          if (field(c, "unreliable") == true) text += "*";
          if (v && !best.empty() && best == names[i]) {
            cells.push_back("<td class=\"num best\">\u2605 " + esc(text) + "</td>");
          } else {
            cells.push_back(td_num(text));
          }
        }
        if (!part.best.empty()) cells.push_back(td(best.empty() ? "-" : best));
        table.add(std::move(cells));
      }
      out += "<h4>" + esc(part.title) + "</h4>\n" + table.render();
    }
  }
  return out;
}

// ---- page ---------------------------------------------------------------------------------------

struct WorkloadCharts {
  std::vector<std::string> svgs;
  std::string note;
};

WorkloadCharts workload_charts(Context& ctx, const std::string& workload) {
  WorkloadCharts out;
  std::string scaling_note, size_note;
  const std::vector<std::string> drawn = scaling_charts(ctx, workload, out.svgs, scaling_note);
  efficiency_chart(ctx, workload, efficiency_sets(ctx, workload), drawn, out.svgs);
  size_charts(ctx, workload, out.svgs, size_note);
  out.note = scaling_note + (scaling_note.empty() || size_note.empty() ? "" : " ") + size_note;
  return out;
}

std::string chart_legend_line(const Context& ctx) {
  std::string out = "<p class=\"legend-line\">";
  if (ctx.two_runs()) {
    out += esc(ctx.base_label() + ": blue, dashed, circles. " + ctx.new_label() +
               ": black, solid; its markers show each point's verdict ") +
           badge("slower") + " " + badge("faster") + " " + badge("noisy") + " " + badge("same") +
           esc(". Hover a marker for its values.");
  } else {
    out += esc("One colour, marker shape and line style per offer (" + ctx.base_label() +
               ": blue, dashed, drawn on top). Hover a marker for its values.");
  }
  return out + "</p>\n";
}

}  // namespace

std::string render_compare_html(const CompareReportInput& input) {
  Context ctx = make_context(input);
  std::vector<std::pair<std::string, WorkloadCharts>> charts;
  for (const auto& w : ctx.workloads) charts.emplace_back(w, workload_charts(ctx, w));

  std::string title, subtitle, body;
  std::vector<std::pair<std::string, std::string>> nav;
  if (!ctx.offers) {
    title = "mgbench comparison: " + ctx.base_label() + " \u2192 " + ctx.new_label();
    const Json& s = field(ctx.doc, "summary");
    subtitle = fmt::format("{} same, {} faster, {} slower, {} noisy", count_of(s, "same"),
                           count_of(s, "faster"), count_of(s, "slower"), count_of(s, "noisy"));
    nav = {{"summary", "Summary"}, {"environment", "Environment"}};
    body += summary_section(ctx);
    body += environment_section(ctx);
    const std::string verdicts = verdict_tables(ctx);
    if (!verdicts.empty()) nav.emplace_back("verdicts", "Verdicts");
    body += verdicts;
    const std::string unmatched = unmatched_section(ctx);
    if (!unmatched.empty()) nav.emplace_back("unmatched", "Unmatched");
    body += unmatched;
  } else {
    title = "mgbench offer comparison: ";
    for (std::size_t i = 0; i < ctx.labels.size(); ++i) title += (i ? " vs " : "") + ctx.labels[i];
    subtitle = fmt::format("{} offers, {} workload{}", ctx.labels.size(), ctx.workloads.size(),
                           ctx.workloads.size() == 1 ? "" : "s");
    nav = {{"offers", "Offers"}, {"environment", "Environment"}};
    body += offers_summary_section(ctx);
    body += environment_section(ctx);
  }
  bool legend_done = false;
  for (const auto& [w, wc] : charts) {
    const std::string tables = ctx.offers ? offer_tables(ctx, w) : efficiency_table(ctx, w);
    if (wc.svgs.empty() && tables.empty()) continue;
    const std::string id = "workload-" + slug(w);
    nav.emplace_back(id, w);
    body += section_open(id, w);
    if (!wc.svgs.empty()) {
      if (!legend_done) body += chart_legend_line(ctx);
      legend_done = true;
      if (!wc.note.empty()) body += caption(wc.note);
      body += html_chart_grid(wc.svgs);
    }
    body += tables + "</section>\n";
  }
  if (!ctx.offers) {
    nav.emplace_back("inputs", "Inputs");
    body += inputs_section(ctx);
  }

  std::string page = html_page_begin(title, subtitle);
  const auto style_end = page.find("</style>");
  if (style_end != std::string::npos) page.insert(style_end, kCss);
  return page + html_nav(nav) + "<main>\n" + body + "</main>\n" + html_page_end();
}

void write_compare_report_file(const std::string& path, const CompareReportInput& input) {
  const std::string name = lower(path);
  if (ends_with(name, ".json")) {
    write_file_atomic(path, input.comparison.dump(2) + "\n");
  } else if (ends_with(name, ".html") || ends_with(name, ".htm")) {
    write_file_atomic(path, render_compare_html(input));
  } else {
    throw UsageError("--report " + path +
                     ": expected a file name ending in .html (the report) or .json");
  }
}


}  // namespace mgbench::reports
