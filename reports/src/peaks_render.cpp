// "% of peak" cells, below-range lines and the GPU model note (see peaks.hpp).
#include "mgbench/reports/peaks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "mgbench/analysis/peaks.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports {

std::string of_peak_cell(const RunResult& run, const PointResult& point,
                         const std::string& metric) {
  return share_text(run.peaks.find(point.index, metric));
}

bool peak_column_after(const Presentation& presentation, const TableSpec& table,
                       const ColumnSpec& column) {
  for (const ColumnSpec& c : table.columns) {
    if (c.kind != ColumnKind::metric) continue;
    const MetricSpec* m = presentation.find_metric(c.key);
    if (m != nullptr && m->peak_) return &c == &column;
  }
  return false;
}

std::vector<std::string> below_range_lines(const RunResult& run) {
  std::vector<std::string> lines;
  for (const PeakShare& s : run.peaks.shares) {
    if (!s.below) continue;
    const auto p = std::find_if(run.points.begin(), run.points.end(),
                                [&](const PointResult& q) { return q.index == s.point; });
    if (p == run.points.end()) continue;
    std::string unit;
    const auto pres = run.presentation.find(p->workload);
    if (pres != run.presentation.end()) {
      if (const MetricSpec* m = pres->second.find_metric(s.metric)) unit = m->unit;
    }
    lines.push_back(one_line(fmt::format("{} #{} ({}): {}", p->workload, p->index,
                                         describe_params(p->params), below_text(s, unit))));
  }
  return lines;
}

namespace {

std::string figure(const Json& row, const char* object, const char* key, const char* unit) {
  if (!row.contains(object)) return "";
  const Json& o = row[object];
  if (key != nullptr) {
    return o.is_object() && o.contains(key) && o[key].is_number()
               ? fmt::format("{:g}{}", o[key].get<double>(), unit)
               : "";
  }
  return o.is_number() ? fmt::format("{:g}{}", o.get<double>(), unit) : "";
}

}  // namespace

namespace {

// True when a workload of the run declares a peak for one of its metrics.
bool declares_peaks(const RunResult& run) {
  for (const auto& [workload, pres] : run.presentation) {
    for (const MetricSpec& m : pres.metrics) {
      if (m.peak_) return true;
    }
  }
  return false;
}

}  // namespace

std::string gpu_model_note(const RunResult& run) {
  const PeakReport& r = run.peaks;
  if (r.gpu.empty() && r.gpu_model.is_null()) return "";
  if (r.shares.empty() && !declares_peaks(run)) return "";
  if (!r.gpu_model.is_object()) {
    return one_line("GPU model unknown (" + r.gpu +
                    "): no datasheet row, so no % of the TFLOP/s peak and no expected range; "
                    "memory and link percentages use the memory's bus width x clock and the "
                    "links NVML reports.");
  }
  const Json& m = r.gpu_model;
  std::string peaks;
  if (m.contains("dense_tflops") && m["dense_tflops"].is_object()) {
    for (auto it = m["dense_tflops"].begin(); it != m["dense_tflops"].end(); ++it) {
      if (!it->is_number()) continue;
      peaks += (peaks.empty() ? "" : ", ") + it.key() + " " + fmt::format("{:g}", it->get<double>());
    }
  }
  const std::string memory = figure(m, "memory_GBps", nullptr, " GB/s");
  return one_line(fmt::format(
      "% of peak against the {} datasheet row ({}): dense TFLOP/s {}; memory {}; host and "
      "GPU-to-GPU links as NVML reports them. Source: {}.",
      json_string(m, "id"), r.gpu, peaks.empty() ? "no reference" : peaks,
      memory.empty() ? "no reference" : memory, json_string(m, "source")));
}

}  // namespace mgbench::reports
