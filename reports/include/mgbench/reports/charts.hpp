#pragma once
// The charts of a run report, built from the results model and each workload's presentation:
// scaling (throughput vs GPU count with the ideal line, efficiency), a metric vs a declared x
// axis, peak memory vs an axis with the OOM boundary, stacked time breakdowns, and telemetry
// timelines. Only charts whose data exist are produced.
#include <string>
#include <vector>

#include "mgbench/analysis/prediction.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::reports {

struct ChartEntry {
  std::string section;  // workload name, or "telemetry"
  std::string id;       // unique, [a-z0-9-]: element id in HTML, file stem for Markdown
  std::string title;
  std::string kind;   // scaling, efficiency, the declared chart id, timeline (telemetry)
  std::string svg;    // the <svg> element
  bool wide = false;  // deserves a full row in the HTML grid
};

// `prediction` (`report --predict`): drawn dashed beside each measured series of the efficiency
// charts, labelled "predicted".
std::vector<ChartEntry> build_charts(const RunResult& run, const Prediction* prediction = nullptr);

// "1 GPU", "8 GPUs".
std::string gpus_label(int n);

}  // namespace mgbench::reports
