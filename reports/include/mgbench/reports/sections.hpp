#pragma once
// The content of a report, independent of its format: which workloads a run holds, their
// tables (console, Markdown and HTML render the same tables), and lookups into the scaling
// tables, telemetry summaries and memory figures of each point.
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
const Json* scaling_row(const RunResult& run, const PointResult& point);

// The throughput metric of a workload: from the scaling series when present, else the
// known defaults (gemm: tflops_per_gpu / tflops_aggregate, allreduce: busbw_GBps, train_step:
// samples_per_s).
struct ThroughputMetric {
  std::string per_gpu;    // metric name, may be empty
  std::string aggregate;  // metric name, may be empty
  std::string unit;       // "TFLOP/s"
};
ThroughputMetric throughput_metric(const RunResult& run, const std::string& workload);

// Telemetry summary of a point over its GPUs (nullopt when absent).
struct TelemetrySummary {
  std::optional<double> avg_power_w;        // mean over GPUs
  std::optional<double> max_temp_c;         // max over GPUs
  std::optional<double> sm_clock_mhz;       // median over GPUs of each GPU's median
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
// One table per workload (all-reduce: one per dtype plus the plateau table).
std::vector<Table> workload_tables(const RunResult& run, const std::string& workload);
// One table per workload with scaling series: speedup, efficiency, Karp-Flatt, marginal.
std::vector<Table> scaling_tables(const RunResult& run);
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
