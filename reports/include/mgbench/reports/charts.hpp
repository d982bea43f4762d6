#pragma once
// The charts of a run report, built from the results model: scaling (throughput vs GPU count
// with the ideal line, efficiency), GEMM TFLOP/s vs size, all-reduce busbw and time vs
// message size, training-step samples/s, step-time breakdown and memory vs batch, and
// telemetry timelines. Only charts whose data exist are produced.
#include <string>
#include <vector>

#include "mgbench/model/results.hpp"

namespace mgbench::reports {

struct ChartEntry {
  std::string section;  // workload name, or "telemetry"
  std::string id;       // unique, [a-z0-9-]: element id in HTML, file stem for Markdown
  std::string title;
  std::string kind;   // scaling, efficiency, size (gemm), busbw, time (allreduce),
                      // throughput, memory, breakdown (train_step), timeline (telemetry)
  std::string svg;    // the <svg> element
  bool wide = false;  // deserves a full row in the HTML grid
};

std::vector<ChartEntry> build_charts(const RunResult& run);

// "1 GPU", "8 GPUs".
std::string gpus_label(int n);
// "aggregate TFLOP/s" for "tflops_aggregate": metric names as axis and chart labels.
std::string metric_label(const std::string& metric);
// "aggregate TFLOP/s", "busbw (GB/s)": the unit only where the label does not carry it.
std::string metric_axis_label(const std::string& metric, const std::string& unit);

}  // namespace mgbench::reports
