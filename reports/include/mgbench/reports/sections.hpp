#pragma once
// The content of a report, independent of its format: which workloads a run holds, their
// tables (console, Markdown and HTML render the same tables, built from each workload's
// presentation), and lookups into the scaling tables, telemetry summaries and memory figures of
// each point.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/reports/table.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::reports {

// Workloads in order of first appearance in the run's points.
std::vector<std::string> workloads_of(const RunResult& run);
// The run's points of one workload, sorted by parameters, then GPU count, then devices.
std::vector<const PointResult*> points_of(const RunResult& run, const std::string& workload);
// Parameter names whose values differ between `points` (sorted by name).
std::vector<std::string> varying_params(const std::vector<const PointResult*>& points);
// "n=8192 k=8192": parameters with one value across `points`.
std::string fixed_params_label(const std::vector<const PointResult*>& points);

// The row of RunResult::scaling that matches a point (same workload, series parameters a
// subset of the point's, same GPU count); nullptr when none.
const ScalingRow* scaling_row(const RunResult& run, const PointResult& point);
// Parameter names in display order: text and boolean ones first, numbers after; within each,
// the keys of `grouped` last in that order, the rest by name.
std::vector<std::string> order_params(std::vector<std::string> keys,
                                      const std::vector<const PointResult*>& points,
                                      const std::vector<std::string>& grouped = {});
// True when no point has a non-numeric value for `key`.
bool is_numeric_param(const std::vector<const PointResult*>& points, const std::string& key);
// The point's median time ("1.461 ms") and noise ("0.25 %"); empty without samples.
std::string median_text(const PointResult& point);
std::string noise_text(const PointResult& point);
// "0-7", "0,2-3": runs of consecutive ordinals collapsed.
std::string devices_text(const std::vector<int>& devices);
// A value as the format hint says (number/rate: `digits` significant digits; fixed, percent:
// `digits` decimals; time in s/ms/us; bytes in binary units; count without decimals).
std::string format_value(double value, ValueFormat format, int digits = 4);

// Telemetry summary of a point over its GPUs (nullopt when absent).
struct TelemetrySummary {
  std::optional<double> avg_power_w;        // mean over GPUs
  std::optional<double> max_temp_c;         // max over GPUs
  std::optional<double> sm_clock_mhz;       // median over GPUs of each GPU's median
  std::optional<double> slowest_sm_clock_mhz;  // the lowest GPU's median, and that GPU
  std::optional<double> slowest_sm_device;
  std::optional<double> throttle_fraction;  // max over GPUs
  std::optional<double> energy_j;           // sum over GPUs
};
TelemetrySummary telemetry_summary(const PointResult& point);
// Peak device memory of a point in bytes (max over ranks), from memory.peak_bytes or
// metrics.peak_memory_bytes.
std::optional<double> peak_memory_bytes(const PointResult& point);

// A derived metric of a point: PointResult::metrics, else rank 0's per-rank details
// (extra.ranks[0].details.metrics, where the training step's breakdown is recorded).
std::optional<double> point_metric(const PointResult& point, const std::string& name);

RowTone tone_of(Status status, bool noisy = false);
// "ok", "ok (noisy)", "waived: fp8 needs sm_89".
std::string status_text(const PointResult& point);

// Console/Markdown/HTML tables.
Table run_summary_table(const RunResult& run);
// The tables of one workload as its presentation declares them (a table per value of the
// declared split parameters), then its run-level summary tables.
std::vector<Table> workload_tables(const RunResult& run, const std::string& workload);
// One table per workload with scaling series: speedup, efficiency, Karp-Flatt, marginal. Series
// measured at a single GPU count are left out (nothing to show), so a 1-GPU run has none.
std::vector<Table> scaling_tables(const RunResult& run);
// Parameters that differ between scaling series (of one workload): their labels.
std::vector<std::string> scaling_varying_params(const std::vector<const ScalingSeries*>& series);
// One row per scaling series' verdict; the bare "measured on 1 GPU only" ones fold into a note.
Table verdicts_table(const RunResult& run);
// The doctor checks stored with the run (doctor_render.hpp's table), titled "Doctor".
Table run_doctor_table(const RunResult& run);
// The environment fingerprint: key/value rows (nested objects flattened "a.b"), then one table
// per array of objects (e.g. "gpus": a column per GPU, a row per field).
std::vector<Table> environment_tables(const RunResult& run);
Table points_table(const RunResult& run);
// Counts per status: "12 ok, 1 oom, 2 waived".
std::string status_counts(const RunResult& run);

// Flattens a JSON value into key/value rows (nested objects "a.b", arrays of objects "a[0].b",
// arrays of scalars joined by ", ").
std::vector<std::pair<std::string, std::string>> flatten_json(const Json& value,
                                                              const std::string& prefix = "");

}  // namespace mgbench::reports
