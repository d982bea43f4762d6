// Presentation metadata: the fluent declaration helpers and lookups (see presentation.hpp).
#include "mgbench/model/presentation.hpp"

#include <algorithm>

namespace mgbench {

const char* to_string(Better better) { return better == Better::lower ? "lower" : "higher"; }

const char* to_string(ValueFormat format) {
  switch (format) {
    case ValueFormat::number: return "number";
    case ValueFormat::fixed: return "fixed";
    case ValueFormat::time: return "time";
    case ValueFormat::bytes: return "bytes";
    case ValueFormat::rate: return "rate";
    case ValueFormat::percent: return "percent";
    case ValueFormat::count: return "count";
    case ValueFormat::text: return "text";
  }
  return "number";
}

const char* to_string(AxisScale scale) {
  switch (scale) {
    case AxisScale::linear: return "linear";
    case AxisScale::log2: return "log2";
    case AxisScale::log10: return "log10";
    case AxisScale::automatic: return "auto";
  }
  return "auto";
}

const char* to_string(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::gpus: return "gpus";
    case ColumnKind::devices: return "devices";
    case ColumnKind::params: return "params";
    case ColumnKind::param: return "param";
    case ColumnKind::median_time: return "median_time";
    case ColumnKind::metric: return "metric";
    case ColumnKind::speedup: return "speedup";
    case ColumnKind::efficiency: return "efficiency";
    case ColumnKind::peak_memory: return "peak_memory";
    case ColumnKind::verification: return "verification";
    case ColumnKind::noise: return "noise";
    case ColumnKind::telemetry: return "telemetry";
    case ColumnKind::status: return "status";
  }
  return "metric";
}

const char* to_string(ChartKind kind) {
  switch (kind) {
    case ChartKind::scaling: return "scaling";
    case ChartKind::line: return "line";
    case ChartKind::memory: return "memory";
    case ChartKind::breakdown: return "breakdown";
    case ChartKind::timeseries: return "timeseries";
    case ChartKind::overlay: return "overlay";
  }
  return "line";
}

// ---- metrics and axes ----------------------------------------------------------------------

MetricSpec::MetricSpec(std::string n, std::string l, std::string u)
    : name(std::move(n)), label(std::move(l)), unit(std::move(u)) {}
MetricSpec& MetricSpec::format(ValueFormat f, int d) {
  format_ = f;
  digits = d;
  return *this;
}
MetricSpec& MetricSpec::better(Better b) {
  better_ = b;
  return *this;
}

MetricSpec& MetricSpec::of_peak(PeakSpec p) {
  peak_ = std::move(p);
  return *this;
}

namespace {
PeakSpec peak_spec(LimitKind kind, std::string dtype_param, std::string direction_param,
                   std::string as) {
  PeakSpec p;
  p.kind = kind;
  p.dtype_param = std::move(dtype_param);
  p.direction_param = std::move(direction_param);
  p.as = std::move(as);
  return p;
}
}  // namespace

PeakSpec PeakSpec::tflops(std::string dtype_param) {
  return peak_spec(LimitKind::tflops, std::move(dtype_param), "", "");
}
PeakSpec PeakSpec::hbm() { return peak_spec(LimitKind::hbm_traffic, "", "", ""); }
PeakSpec PeakSpec::host_link(std::string direction_param) {
  return peak_spec(LimitKind::host_link, "", std::move(direction_param), "");
}
PeakSpec PeakSpec::peer_link(std::string direction_param) {
  return peak_spec(LimitKind::peer_link, "", std::move(direction_param), "");
}
PeakSpec PeakSpec::same_as(std::string metric) {
  return peak_spec(LimitKind::tflops, "", "", std::move(metric));
}

AxisSpec::AxisSpec(std::string p, std::string l) : param(std::move(p)), label(std::move(l)) {}
AxisSpec& AxisSpec::format(ValueFormat f) {
  format_ = f;
  return *this;
}
AxisSpec& AxisSpec::log2() {
  scale = AxisScale::log2;
  return *this;
}
AxisSpec& AxisSpec::with(std::vector<std::string> params, std::string label_when_equal) {
  companions = std::move(params);
  equal_label = std::move(label_when_equal);
  return *this;
}
AxisSpec& AxisSpec::tooltip_word(std::string w) {
  word = std::move(w);
  return *this;
}

// ---- table columns -------------------------------------------------------------------------

namespace {
ColumnSpec column_of(ColumnKind kind, std::string key = "", std::string header = "") {
  ColumnSpec c;
  c.kind = kind;
  c.key = std::move(key);
  c.header = std::move(header);
  return c;
}
}  // namespace

ColumnSpec ColumnSpec::gpus() { return column_of(ColumnKind::gpus, "", "GPUs"); }
ColumnSpec ColumnSpec::devices() { return column_of(ColumnKind::devices, "", "devices"); }
ColumnSpec ColumnSpec::params() { return column_of(ColumnKind::params); }
ColumnSpec ColumnSpec::param(std::string name, std::string header) {
  ColumnSpec c = column_of(ColumnKind::param, name, header.empty() ? name : std::move(header));
  c.format_ = ValueFormat::text;
  return c;
}
ColumnSpec ColumnSpec::median_time(std::string header) {
  return column_of(ColumnKind::median_time, "", std::move(header));
}
ColumnSpec ColumnSpec::metric(std::string name, std::string header) {
  return column_of(ColumnKind::metric, std::move(name), std::move(header));
}
ColumnSpec ColumnSpec::speedup() { return column_of(ColumnKind::speedup, "", "speedup"); }
ColumnSpec ColumnSpec::efficiency() { return column_of(ColumnKind::efficiency, "", "efficiency"); }
ColumnSpec ColumnSpec::peak_memory(std::string header) {
  return column_of(ColumnKind::peak_memory, "", std::move(header));
}
ColumnSpec& ColumnSpec::when_absent(std::string text) {
  missing = std::move(text);
  return *this;
}

ColumnSpec ColumnSpec::verification(std::string field, std::string header, std::string missing) {
  ColumnSpec c = column_of(ColumnKind::verification, std::move(field), std::move(header));
  c.format_ = ValueFormat::count;
  c.missing = std::move(missing);
  return c;
}
ColumnSpec ColumnSpec::noise() { return column_of(ColumnKind::noise, "", "noise"); }
ColumnSpec ColumnSpec::telemetry() { return column_of(ColumnKind::telemetry); }
ColumnSpec ColumnSpec::status() { return column_of(ColumnKind::status, "", "status"); }

ColumnSpec& ColumnSpec::format(ValueFormat f, int d) {
  format_ = f;
  digits = d;
  return *this;
}
ColumnSpec& ColumnSpec::or_median(double scale) {
  median_scale = scale;
  return *this;
}
ColumnSpec& ColumnSpec::or_per_gpu(std::string of_metric) {
  per_gpu_of = std::move(of_metric);
  return *this;
}
ColumnSpec& ColumnSpec::share(std::string of_metric) {
  share_of = std::move(of_metric);
  return *this;
}
ColumnSpec& ColumnSpec::merged(std::vector<std::string> keys, std::string title) {
  merge = std::move(keys);
  merge_header = std::move(title);
  return *this;
}

TableSpec& TableSpec::split_by(std::vector<std::string> params) {
  split_by_ = std::move(params);
  return *this;
}
TableSpec& TableSpec::sort_by(std::vector<std::string> keys) {
  sort_by_ = std::move(keys);
  return *this;
}
TableSpec& TableSpec::no_fixed_caption() {
  fixed_caption = false;
  return *this;
}
TableSpec& TableSpec::column(ColumnSpec c) {
  columns.push_back(std::move(c));
  return *this;
}
TableSpec& TableSpec::tail() {
  return column(ColumnSpec::noise()).column(ColumnSpec::telemetry()).column(ColumnSpec::status());
}

// ---- charts --------------------------------------------------------------------------------

ChartSpec ChartSpec::scaling() {
  ChartSpec c;
  c.kind = ChartKind::scaling;
  c.id = "scaling";
  return c;
}
ChartSpec ChartSpec::line(std::string id, std::string metric) {
  ChartSpec c;
  c.kind = ChartKind::line;
  c.id = std::move(id);
  c.metric = std::move(metric);
  return c;
}
ChartSpec ChartSpec::memory(std::string id) {
  ChartSpec c;
  c.kind = ChartKind::memory;
  c.id = std::move(id);
  c.ok_only = false;
  return c;
}
ChartSpec ChartSpec::breakdown(std::string id, std::vector<std::string> total,
                               std::string remainder_label) {
  ChartSpec c;
  c.kind = ChartKind::breakdown;
  c.id = std::move(id);
  c.total = std::move(total);
  c.remainder_label = std::move(remainder_label);
  c.max_charts = 4;
  return c;
}
ChartSpec ChartSpec::timeseries(std::string id, std::string field) {
  ChartSpec c;
  c.kind = ChartKind::timeseries;
  c.id = std::move(id);
  c.metric = std::move(field);
  c.ok_only = false;
  return c;
}
ChartSpec ChartSpec::overlay(std::string id, std::string metric) {
  ChartSpec c;
  c.kind = ChartKind::overlay;
  c.id = std::move(id);
  c.metric = std::move(metric);
  return c;
}
ChartSpec& ChartSpec::titled(std::string t) {
  title = std::move(t);
  return *this;
}
ChartSpec& ChartSpec::y_axis(std::string label, AxisScale scale) {
  y_label = std::move(label);
  y_scale_ = scale;
  return *this;
}
ChartSpec& ChartSpec::on(std::string axis_param) {
  x = std::move(axis_param);
  return *this;
}
ChartSpec& ChartSpec::split_by(std::vector<std::string> params) {
  split_by_ = std::move(params);
  return *this;
}
ChartSpec& ChartSpec::gpus_dashed() {
  gpus_dashed_ = true;
  return *this;
}
ChartSpec& ChartSpec::or_metric(std::string m, std::string t, std::string note) {
  alt_metric = std::move(m);
  alt_title = std::move(t);
  alt_note = std::move(note);
  return *this;
}
ChartSpec& ChartSpec::or_median(double scale) {
  median_scale = scale;
  return *this;
}
ChartSpec& ChartSpec::part(std::vector<std::string> metrics, std::string label, int colour) {
  parts.push_back(StackPart{std::move(metrics), std::move(label), colour});
  return *this;
}
ChartSpec& ChartSpec::only_with(std::string m) {
  require = std::move(m);
  return *this;
}
ChartSpec& ChartSpec::limit(int charts) {
  max_charts = charts;
  return *this;
}

// ---- summaries and the whole presentation --------------------------------------------------

SummarySpec::SummarySpec(std::string k, std::string t, std::string c)
    : key(std::move(k)), title(std::move(t)), caption(std::move(c)) {}
SummarySpec& SummarySpec::column(std::string field, std::string header, ValueFormat format,
                                 int digits) {
  columns.push_back(SummaryColumn{std::move(field), std::move(header), format, digits});
  return *this;
}

Presentation& Presentation::headline(std::string metric, std::string unit, Better better) {
  MetricSpec m(std::move(metric), "", std::move(unit));
  m.better_ = better;
  headline_ = std::move(m);
  return *this;
}
Presentation& Presentation::metric(MetricSpec m) {
  metrics.push_back(std::move(m));
  return *this;
}
Presentation& Presentation::axis(AxisSpec a) {
  axes.push_back(std::move(a));
  return *this;
}
Presentation& Presentation::table(TableSpec t) {
  tables.push_back(std::move(t));
  return *this;
}
Presentation& Presentation::chart(ChartSpec c) {
  charts.push_back(std::move(c));
  return *this;
}
Presentation& Presentation::summary(SummarySpec s) {
  summaries.push_back(std::move(s));
  return *this;
}

const MetricSpec* Presentation::find_metric(const std::string& name) const {
  for (const MetricSpec& m : metrics) {
    if (m.name == name) return &m;
  }
  if (headline_ && headline_->name == name) return &*headline_;
  return nullptr;
}

const AxisSpec* Presentation::find_axis(const std::string& param) const {
  for (const AxisSpec& a : axes) {
    if (a.param == param) return &a;
  }
  return nullptr;
}

std::string Presentation::metric_label(const std::string& name) const {
  const MetricSpec* m = find_metric(name);
  if (m != nullptr && !m->label.empty()) return m->label;
  std::string out = name.empty() ? "throughput" : name;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

std::string Presentation::metric_axis_label(const std::string& name) const {
  const std::string label = metric_label(name);
  const MetricSpec* m = find_metric(name);
  std::string unit = m != nullptr ? m->unit : "";
  if (unit.empty() && headline_ && headline_->name == name) unit = headline_->unit;
  if (unit.empty() || label.find(unit) != std::string::npos) return label;
  return label + " (" + unit + ")";
}

}  // namespace mgbench
