// The tables of a workload, built from its presentation (TableSpec, SummarySpec), and the
// scaling tables. No workload is named here: every column comes from the declaration.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/core/json_order.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/telemetry_keys.hpp"
#include "mgbench/reports/format.hpp"
#include "mgbench/reports/peaks.hpp"
#include "mgbench/reports/sections.hpp"

namespace mgbench::reports {
namespace {

using Points = std::vector<const PointResult*>;

struct TableContext {
  const RunResult& run;
  const Presentation& presentation;
  const TableSpec& spec;
  const Points& points;
  std::vector<std::string> params;  // the params column's parameters (display order)
  std::string merged_key;           // the parameter that stands for the merged ones
  bool telemetry = false;
};

bool has_point_telemetry(const Points& points) {
  for (const auto* p : points) {
    if (p->telemetry.is_object() && !p->telemetry.empty()) return true;
  }
  return false;
}

bool contains(const std::vector<std::string>& list, const std::string& key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// True when every point has the `keys` and they are all equal.
bool all_equal(const Points& points, const std::vector<std::string>& keys) {
  if (keys.empty()) return false;
  for (const auto* p : points) {
    for (const auto& k : keys) {
      const ParamValue* value = p->params.find(k);
      if (value == nullptr || *value != p->params.at(keys.front())) return false;
    }
  }
  return true;
}

// The params column: varying parameters not shown by a `param` column or split on; declared
// merged parameters collapse into their first one when they vary together and are equal.
void choose_params(TableContext& ctx) {
  std::vector<std::string> own = ctx.spec.split_by_;
  const ColumnSpec* merging = nullptr;
  for (const ColumnSpec& c : ctx.spec.columns) {
    if (c.kind == ColumnKind::param) own.push_back(c.key);
    if (c.kind == ColumnKind::params && !c.merge.empty()) merging = &c;
  }
  std::vector<std::string> vary;
  for (const auto& k : varying_params(ctx.points)) {
    if (!contains(own, k)) vary.push_back(k);
  }
  const std::vector<std::string> grouped = merging ? merging->merge : std::vector<std::string>{};
  vary = order_params(std::move(vary), ctx.points, grouped);
  const bool merge = merging && std::all_of(grouped.begin(), grouped.end(), [&](const auto& k) {
                       return contains(vary, k);
                     }) && all_equal(ctx.points, grouped);
  if (merge) {
    ctx.merged_key = grouped.front();
    vary.erase(std::remove_if(vary.begin(), vary.end(),
                              [&](const std::string& k) {
                                return contains(grouped, k) && k != ctx.merged_key;
                              }),
               vary.end());
  }
  ctx.params = std::move(vary);
}

std::string default_header(const TableContext& ctx, const ColumnSpec& c) {
  if (!c.header.empty()) return c.header;
  if (c.kind == ColumnKind::metric) return ctx.presentation.metric_axis_label(c.key);
  return c.key;
}

void add_columns(Table& t, const TableContext& ctx) {
  for (const ColumnSpec& c : ctx.spec.columns) {
    switch (c.kind) {
      case ColumnKind::devices:
      case ColumnKind::status: t.column(c.header); break;
      case ColumnKind::params:
        for (const auto& k : ctx.params) {
          const std::string header = k == ctx.merged_key ? c.merge_header : k;
          t.column(header, is_numeric_param(ctx.points, k) ? Align::right : Align::left);
        }
        break;
      case ColumnKind::param:
        t.column(c.header, is_numeric_param(ctx.points, c.key) ? Align::right : Align::left);
        break;
      case ColumnKind::telemetry:
        if (!ctx.telemetry) break;
        t.column("W/GPU", Align::right).column("max °C", Align::right);
        t.column("SM MHz", Align::right).column(telemetry_keys::kThrottled, Align::right);
        break;
      default: t.column(default_header(ctx, c), Align::right); break;
    }
    if (peak_column_after(ctx.presentation, ctx.spec, c)) t.column(kOfPeakHeader, Align::right);
  }
}

std::optional<double> metric_value(const PointResult& p, const ColumnSpec& c) {
  if (auto v = point_metric(p, c.key)) return v;
  if (c.median_scale && p.stats.n > 0) return p.stats.median * *c.median_scale;
  if (!c.per_gpu_of.empty() && p.gpus > 0) {
    if (const auto total = point_metric(p, c.per_gpu_of)) return *total / p.gpus;
  }
  return std::nullopt;
}

std::string metric_cell(const PointResult& p, const ColumnSpec& c) {
  const auto v = metric_value(p, c);
  if (!v) return p.status == Status::ok ? c.missing : "";
  std::string text = format_value(*v, c.format_, c.digits);
  if (metric_flagged(p.flags, c.key)) text += " (impossible)";
  if (!c.share_of.empty()) {
    auto whole = point_metric(p, c.share_of);
    if (!whole && p.stats.n > 0) whole = p.stats.median;
    if (whole && *whole > 0) text += fmt::format(" ({:.0f} %)", *v / *whole * 100);
  }
  return text;
}

std::string param_cell(const PointResult& p, const ColumnSpec& c) {
  if (c.format_ != ValueFormat::text) {
    const auto v = param_number(p.params, c.key);
    return v ? format_value(*v, c.format_, c.digits) : "";
  }
  return param_string(p.params, c.key);
}

void add_telemetry_cells(std::vector<std::string>& row, const PointResult& p) {
  const TelemetrySummary s = telemetry_summary(p);
  row.push_back(s.avg_power_w ? fmt::format("{:.0f}", *s.avg_power_w) : "");
  row.push_back(s.max_temp_c ? fmt::format("{:.0f}", *s.max_temp_c) : "");
  std::string clock = s.sm_clock_mhz ? fmt::format("{:.0f}", *s.sm_clock_mhz) : "";
  // One GPU clearly slower than the rest must not hide behind the median.
  if (s.sm_clock_mhz && s.slowest_sm_clock_mhz && *s.slowest_sm_clock_mhz < 0.97 * *s.sm_clock_mhz) {
    clock += fmt::format(" (GPU {:.0f}: {:.0f})", s.slowest_sm_device.value_or(-1),
                         *s.slowest_sm_clock_mhz);
  }
  row.push_back(clock);
  row.push_back(s.throttle_fraction ? format_percent(*s.throttle_fraction, 1) : "");
}

std::string verification_cell(const PointResult& p, const ColumnSpec& c) {
  const auto v = json_number(p.verification, c.key);
  if (v) return format_value(*v, c.format_, c.digits);
  return p.status == Status::ok ? "" : c.missing;
}

std::string scaling_cell(const ScalingRow* row, ColumnKind kind) {
  if (row == nullptr) return {};
  if (kind == ColumnKind::speedup) return fmt::format("{:.2f}x", row->speedup);
  return format_percent(row->efficiency, 1);
}

void add_cells(std::vector<std::string>& row, const TableContext& ctx, const ColumnSpec& c,
               const PointResult& p) {
  switch (c.kind) {
    case ColumnKind::gpus: row.push_back(std::to_string(p.gpus)); break;
    case ColumnKind::devices: row.push_back(devices_text(p.devices)); break;
    case ColumnKind::params:
      for (const auto& k : ctx.params) {
        row.push_back(param_string(p.params, k));
      }
      break;
    case ColumnKind::param: row.push_back(param_cell(p, c)); break;
    case ColumnKind::median_time: row.push_back(median_text(p)); break;
    case ColumnKind::metric:
      row.push_back(metric_cell(p, c));
      if (peak_column_after(ctx.presentation, ctx.spec, c)) {
        row.push_back(of_peak_cell(ctx.run, p, c.key));
      }
      break;
    case ColumnKind::speedup:
    case ColumnKind::efficiency:
      row.push_back(scaling_cell(scaling_row(ctx.run, p), c.kind));
      break;
    case ColumnKind::peak_memory: {
      const auto mem = peak_memory_bytes(p);
      row.push_back(mem ? format_bytes_iec(*mem) : "");
      break;
    }
    case ColumnKind::verification: row.push_back(verification_cell(p, c)); break;
    case ColumnKind::noise: row.push_back(noise_text(p)); break;
    case ColumnKind::telemetry:
      if (ctx.telemetry) add_telemetry_cells(row, p);
      break;
    case ColumnKind::status: row.push_back(status_text(p)); break;
  }
}

// Sorted by the declared keys ("gpus" or parameters); stable, so ties keep points_of order.
void sort_points(Points& points, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  const auto value = [](const PointResult* p, const std::string& k) -> Json {
    if (k == "gpus") return p->gpus;
    const ParamValue* v = p->params.find(k);
    return v != nullptr ? v->to_json() : Json();
  };
  std::stable_sort(points.begin(), points.end(), [&](const PointResult* a, const PointResult* b) {
    for (const auto& k : keys) {
      if (const int c = compare_values(value(a, k), value(b, k))) return c < 0;
    }
    return false;
  });
}

Table build_table(const RunResult& run, const Presentation& presentation, const TableSpec& spec,
                  const Points& points, const std::string& title) {
  TableContext ctx{run, presentation, spec, points, {}, {}, has_point_telemetry(points)};
  choose_params(ctx);
  Table t;
  t.title = title;
  if (spec.fixed_caption) {
    const std::string fixed = fixed_params_label(points);
    if (!fixed.empty()) t.caption = "fixed: " + fixed;
  }
  add_columns(t, ctx);
  for (const auto* p : points) {
    std::vector<std::string> row;
    for (const ColumnSpec& c : spec.columns) add_cells(row, ctx, c, *p);
    t.add_row(std::move(row), tone_of(p->status, p->noisy));
  }
  t.drop_empty_columns();
  return t;
}

// One group of points per value of `keys`, in order of appearance; "" when not split.
std::vector<std::pair<std::string, Points>> split_points(const Points& points,
                                                         const std::vector<std::string>& keys) {
  return group_in_order(points, [&](const PointResult* p) {
    std::string label;
    for (const auto& k : keys) {
      const std::string v = param_string(p->params, k);
      if (!v.empty()) label += (label.empty() ? "" : " ") + v;
    }
    return label;
  });
}

// The rows of a summary: the summary itself when it is an array, else its `key` member.
const Json* summary_rows(const RunResult& run, const std::string& workload,
                         const SummarySpec& spec) {
  if (!run.summaries.is_object()) return nullptr;
  const auto it = run.summaries.find(workload);
  if (it == run.summaries.end()) return nullptr;
  if (it->is_array()) return &*it;
  if (it->is_object() && it->contains(spec.key) && (*it)[spec.key].is_array()) {
    return &(*it)[spec.key];
  }
  return nullptr;
}

std::string summary_cell(const Json& row, const SummaryColumn& c) {
  if (c.format == ValueFormat::text || c.format == ValueFormat::count) {
    return json_string(row, c.field);
  }
  const auto v = json_number(row, c.field);
  return v ? format_value(*v, c.format, c.digits) : "";
}

std::optional<Table> summary_table(const RunResult& run, const std::string& workload,
                                   const SummarySpec& spec) {
  const Json* rows = summary_rows(run, workload, spec);
  if (rows == nullptr || rows->empty()) return std::nullopt;
  Table t;
  t.title = workload + (spec.title.empty() ? "" : " " + spec.title);
  t.caption = spec.caption;
  for (const SummaryColumn& c : spec.columns) {
    t.column(c.header.empty() ? c.field : c.header,
             c.format == ValueFormat::text ? Align::left : Align::right);
  }
  for (const Json& r : *rows) {
    if (!r.is_object()) continue;
    std::vector<std::string> row;
    for (const SummaryColumn& c : spec.columns) row.push_back(summary_cell(r, c));
    t.add_row(std::move(row));
  }
  t.drop_empty_columns();
  return t;
}

// Parameters that differ between the series (they label the rows and charts).
std::vector<std::string> series_varying(const std::vector<const ScalingSeries*>& series) {
  std::vector<const Params*> params;
  params.reserve(series.size());
  for (const auto* s : series) params.push_back(&s->params);
  return varying_keys(params);
}

Table scaling_table(const std::string& workload, const std::vector<const ScalingSeries*>& series) {
  const std::vector<std::string> vary = series_varying(series);
  const ScalingSeries& first = *series.front();
  Table t;
  t.title = workload;
  t.caption = "throughput: " + first.metric + (first.unit.empty() ? "" : " (" + first.unit + ")") +
              (first.mode.empty() ? "" : ", " + first.mode + " scaling");
  t.column("parameters").column("GPUs", Align::right);
  t.column(first.unit.empty() ? "throughput" : first.unit, Align::right);
  t.column("speedup", Align::right).column("efficiency", Align::right);
  // The serial fraction of the mode: Karp-Flatt (fixed work) or Gustafson (scaled work).
  const bool strong = first.mode == "strong";
  t.column(strong ? "Karp-Flatt" : "Gustafson", Align::right);
  t.column("marginal eff.", Align::right);
  for (const auto* s : series) {
    const std::string params = vary.empty() ? std::string() : params_short_label(s->params, vary);
    bool first_row = true;
    for (const ScalingRow& r : s->rows) {
      const bool odd = r.efficiency < 0.5 || r.efficiency > 1.05;
      const std::optional<double>& serial = strong ? r.karp_flatt : r.gustafson;
      t.add_row({first_row ? params : "", std::to_string(r.gpus), format_sig(r.throughput, 4),
                 scaling_cell(&r, ColumnKind::speedup), scaling_cell(&r, ColumnKind::efficiency),
                 serial ? fmt::format("{:.3f}", *serial) : "",
                 r.marginal_efficiency ? format_percent(*r.marginal_efficiency, 1) : ""},
                odd ? RowTone::warn : RowTone::normal);
      first_row = false;
    }
  }
  t.drop_empty_columns();
  return t;
}

}  // namespace

std::vector<std::string> scaling_varying_params(const std::vector<const ScalingSeries*>& series) {
  return series.empty() ? std::vector<std::string>{} : series_varying(series);
}

// A series measured at one GPU count only (a 1-GPU run) has nothing to show: speedup 1,
// efficiency 100 %. The summary says once that the run has no scaling figure.
bool spans_gpu_counts(const ScalingSeries& s) {
  return std::any_of(s.rows.begin(), s.rows.end(),
                     [&](const ScalingRow& r) { return r.gpus != s.rows.front().gpus; });
}

std::vector<Table> scaling_tables(const RunResult& run) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ScalingSeries*>> by_workload;
  for (const ScalingSeries& s : run.scaling) {
    if (!spans_gpu_counts(s)) continue;
    if (!by_workload.count(s.workload)) order.push_back(s.workload);
    by_workload[s.workload].push_back(&s);
  }
  std::vector<Table> tables;
  for (const auto& w : order) tables.push_back(scaling_table(w, by_workload[w]));
  return tables;
}

std::vector<Table> workload_tables(const RunResult& run, const std::string& workload) {
  const Points all = points_of(run, workload);
  if (all.empty()) return {};
  const Presentation presentation = presentation_for(run, workload);
  std::vector<Table> tables;
  for (const TableSpec& spec : presentation.tables) {
    for (auto& [label, points] : split_points(all, spec.split_by_)) {
      sort_points(points, spec.sort_by_);
      const std::string title = label.empty() ? workload : workload + " " + label;
      tables.push_back(build_table(run, presentation, spec, points, title));
    }
  }
  for (const SummarySpec& spec : presentation.summaries) {
    if (auto t = summary_table(run, workload, spec)) tables.push_back(std::move(*t));
  }
  return tables;
}

}  // namespace mgbench::reports
