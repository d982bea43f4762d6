#pragma once
// How a workload's results are shown, declared by the workload itself and stored in results.json
// ("presentation": {workload: {...}}), so reports render any workload without knowing its name:
// the headline metric (unit, better direction), per-metric labels and format hints, the
// parameters that serve as x axes, the point tables, the charts and run-level summary tables.
//
//   Presentation()
//       .headline("busbw_GBps", "GB/s")
//       .metric(MetricSpec("busbw_GBps", "busbw", "GB/s").format(ValueFormat::fixed, 2))
//       .axis(AxisSpec("bytes", "message size").format(ValueFormat::bytes).log2())
//       .table(TableSpec().split_by({"dtype"}).column(ColumnSpec::gpus())...)
//       .chart(ChartSpec::line("busbw", "busbw_GBps").split_by({"dtype"}))
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/limit_kind.hpp"

namespace mgbench {

enum class Better { higher, lower };
// How a number is shown: `digits` of MetricSpec/ColumnSpec is significant digits for number and
// rate, decimals for fixed and percent.
enum class ValueFormat { number, fixed, time, bytes, rate, percent, count, text };
enum class AxisScale { linear, log2, log10, automatic };  // automatic: log2 when x spans >= 3x

const char* to_string(Better better);
const char* to_string(ValueFormat format);
const char* to_string(AxisScale scale);

// What a metric's "% of peak" is a share of, per unit of the point (GPU, pair): the dense
// datasheet TFLOP/s of the dtype the parameter `dtype_param` names (a training step's model
// TFLOP/s: its MFU), the HBM bandwidth, the host link (PCIe as negotiated) or the GPU-to-GPU link
// (NVLink, else PCIe), links doubled where `direction_param` says "bidir"; or, for an aggregate,
// the same share as the per-unit metric `as`. See docs/METHODOLOGY.md, "Peak, % of peak and
// expected range".
struct PeakSpec {
  LimitKind kind = LimitKind::tflops;
  std::string dtype_param, direction_param;
  std::string as;  // non-empty: the share of that metric of the same point

  static PeakSpec tflops(std::string dtype_param = "dtype");
  static PeakSpec hbm();
  static PeakSpec host_link(std::string direction_param = "");
  static PeakSpec peer_link(std::string direction_param = "");
  static PeakSpec same_as(std::string metric);
};

// A metric of PointResult::metrics as reports show it.
struct MetricSpec {
  std::string name;
  std::string label;  // "aggregate TFLOP/s"; empty: the name with spaces
  std::string unit;   // "TFLOP/s"
  ValueFormat format_ = ValueFormat::number;
  int digits = 4;
  Better better_ = Better::higher;
  std::optional<PeakSpec> peak_;  // "% of peak" beside it where the hardware's peak is known

  MetricSpec() = default;
  MetricSpec(std::string name, std::string label = "", std::string unit = "");
  MetricSpec& format(ValueFormat f, int d = 4);
  MetricSpec& better(Better b);
  MetricSpec& of_peak(PeakSpec p);
};

// A parameter that serves as an x axis (size, batch...). `companions` move with it (count with
// bytes, n and k with m): they are no reason for another chart or series.
struct AxisSpec {
  std::string param;
  std::string label;        // "message size"
  std::string equal_label;  // label when every companion equals the axis value ("M = N = K")
  std::string word;         // the axis in point tooltips ("size"); empty: the parameter name
  std::vector<std::string> companions;
  ValueFormat format_ = ValueFormat::count;
  AxisScale scale = AxisScale::automatic;

  AxisSpec() = default;
  AxisSpec(std::string param, std::string label);
  AxisSpec& format(ValueFormat f);
  AxisSpec& log2();
  AxisSpec& with(std::vector<std::string> params, std::string label_when_equal = "");
  AxisSpec& tooltip_word(std::string w);
};

enum class ColumnKind {
  gpus,          // GPU count
  devices,       // "0-3"
  params,        // one column per varying parameter not shown by a `param` column
  param,         // one parameter, always shown
  median_time,   // the point's median time per op
  metric,        // a metric (fallbacks below)
  speedup,       // from the scaling series
  efficiency,    // from the scaling series
  peak_memory,   // device memory, max over ranks
  verification,  // a field of PointResult::verification (`missing` when the point is not ok)
  noise,         // relative stdev of the samples
  telemetry,     // W/GPU, max °C, SM MHz, throttled (only when a point has telemetry)
  status         // "ok", "waived: ..."
};
const char* to_string(ColumnKind kind);

struct ColumnSpec {
  ColumnKind kind = ColumnKind::metric;
  std::string key;     // parameter, metric or verification field
  std::string header;  // empty: a default per kind
  ValueFormat format_ = ValueFormat::number;
  int digits = 4;
  std::optional<double> median_scale;  // metric absent: median time x this
  std::string per_gpu_of;              // metric absent: this metric / GPUs
  std::string share_of;                // appends " (N %)" of this metric (else the median)
  std::vector<std::string> merge;      // params: these shown as one column when all equal
  std::string merge_header;            // "M=N=K"
  // Text for an absent value: of a point that is not ok (verification columns), or of an ok
  // point whose metric is undefined there (metric columns, e.g. busbw on one GPU).
  std::string missing;

  static ColumnSpec gpus();
  static ColumnSpec devices();
  static ColumnSpec params();
  static ColumnSpec param(std::string name, std::string header = "");
  static ColumnSpec median_time(std::string header = "median time");
  static ColumnSpec metric(std::string name, std::string header = "");
  static ColumnSpec speedup();
  static ColumnSpec efficiency();
  static ColumnSpec peak_memory(std::string header = "peak mem");
  static ColumnSpec verification(std::string field, std::string header, std::string missing);
  static ColumnSpec noise();
  static ColumnSpec telemetry();
  static ColumnSpec status();
  ColumnSpec& format(ValueFormat f, int d = 4);
  ColumnSpec& or_median(double scale = 1.0);
  ColumnSpec& when_absent(std::string text);  // metric columns: `missing` for an ok point
  ColumnSpec& or_per_gpu(std::string metric);
  ColumnSpec& share(std::string of_metric);
  ColumnSpec& merged(std::vector<std::string> keys, std::string title);
};

// One table of points (or one per value of `split_by`, titled "<workload> <value>").
struct TableSpec {
  std::vector<std::string> split_by_;
  std::vector<std::string> sort_by_;  // "gpus" or parameters; empty: parameters, then GPUs
  bool fixed_caption = true;          // "fixed: a=1 b=2" under the title
  std::vector<ColumnSpec> columns;

  TableSpec& split_by(std::vector<std::string> params);
  TableSpec& sort_by(std::vector<std::string> keys);
  TableSpec& no_fixed_caption();
  TableSpec& column(ColumnSpec c);
  // noise, telemetry, status: the columns every point table ends with.
  TableSpec& tail();
};

enum class ChartKind {
  scaling,    // throughput vs GPU count with the ideal line, and efficiency (scaling series)
  line,       // a metric vs an x axis; one chart per value of split_by, one line per other set
  memory,     // peak memory vs an x axis, with the OOM boundary
  breakdown,  // stacked bars of named time metrics per GPU count (and x)
  timeseries,  // a per-GPU field of the run's time windows (RunResult::soak) against time, one
               // line per GPU, throttled spans shaded
  overlay,  // a metric vs the x axis of every workload of the run that declares an overlay chart
            // with the same id and the same unit: one chart per GPU count, one line per workload
};
const char* to_string(ChartKind kind);

struct StackPart {
  std::vector<std::string> metrics;  // the first one present counts
  std::string label;
  int colour = -1;
};

struct ChartSpec {
  ChartKind kind = ChartKind::line;
  std::string id;      // element id part: "size", "busbw"
  std::string title;   // "TFLOP/s per GPU vs size"; empty: "<metric label> vs <axis label>"
  std::string metric;  // y (line)
  std::string alt_metric, alt_title, alt_note;  // when no point has a positive `metric`
  std::string y_label;                          // empty: the metric's label and unit
  AxisScale y_scale_ = AxisScale::linear;
  std::optional<double> median_scale;  // metric absent: median time x this
  std::string x;                       // axis parameter; empty: the first declared axis that varies
  std::vector<std::string> split_by_;
  bool gpus_dashed_ = false;  // smallest GPU count solid, largest dashed (else GPUs in names)
  bool ok_only = true;        // only ok points
  std::vector<std::string> total;  // breakdown: the step time (first present; else the median)
  std::vector<StackPart> parts;    // breakdown: drawn above the remainder ("compute")
  std::string remainder_label;     // breakdown: total - parts
  std::string require;             // breakdown: only points with this metric
  int max_charts = 8;

  static ChartSpec scaling();
  static ChartSpec line(std::string id, std::string metric);
  static ChartSpec memory(std::string id);
  static ChartSpec breakdown(std::string id, std::vector<std::string> total,
                             std::string remainder_label);
  // `field` of every GPU of every time window (e.g. "throughput", or telemetry_keys::kTemp.key)
  // against time.
  static ChartSpec timeseries(std::string id, std::string field);
  // `metric` of this workload and of every other workload of the run that declares an overlay
  // with this id and a metric of the same unit, on one chart per GPU count (drawn once, in the
  // section of the first such workload, when at least two have points to show).
  static ChartSpec overlay(std::string id, std::string metric);
  ChartSpec& titled(std::string t);
  ChartSpec& y_axis(std::string label, AxisScale scale = AxisScale::linear);
  ChartSpec& on(std::string axis_param);
  ChartSpec& split_by(std::vector<std::string> params);
  ChartSpec& gpus_dashed();
  ChartSpec& or_metric(std::string metric, std::string title, std::string note);
  ChartSpec& or_median(double scale);
  ChartSpec& part(std::vector<std::string> metrics, std::string label, int colour);
  ChartSpec& only_with(std::string metric);
  ChartSpec& limit(int charts);
};

// A run-level summary table built from the rows of RunResult::summaries[workload][key].
struct SummaryColumn {
  std::string field;
  std::string header;
  ValueFormat format = ValueFormat::text;
  int digits = 2;
};
struct SummarySpec {
  std::string key;  // the array in the workload's summary ("" : the summary is the array)
  std::string title, caption;
  std::vector<SummaryColumn> columns;

  SummarySpec() = default;
  SummarySpec(std::string key, std::string title, std::string caption = "");
  SummarySpec& column(std::string field, std::string header,
                      ValueFormat format = ValueFormat::text, int digits = 2);
};

struct Presentation {
  std::optional<MetricSpec> headline_;  // the throughput figure: scaling, comparison, offers
  std::vector<MetricSpec> metrics;
  std::vector<AxisSpec> axes;
  std::vector<TableSpec> tables;
  std::vector<ChartSpec> charts;
  std::vector<SummarySpec> summaries;

  Presentation& headline(std::string metric, std::string unit, Better better = Better::higher);
  Presentation& metric(MetricSpec m);
  Presentation& axis(AxisSpec a);
  Presentation& table(TableSpec t);
  Presentation& chart(ChartSpec c);
  Presentation& summary(SummarySpec s);

  // The declared metric (the headline too), nullptr when not declared.
  const MetricSpec* find_metric(const std::string& name) const;
  const AxisSpec* find_axis(const std::string& param) const;
  // The metric's label ("aggregate TFLOP/s"), else its name with spaces.
  std::string metric_label(const std::string& name) const;
  // "aggregate TFLOP/s", "busbw (GB/s)": the unit only where the label does not carry it.
  std::string metric_axis_label(const std::string& name) const;
};

void to_json(Json& j, const Presentation& p);
void from_json(const Json& j, Presentation& p);  // throws on a malformed presentation

}  // namespace mgbench
