// The presentation of a workload in a run: stored, or derived from the data (see results.hpp).
#include <set>

#include "mgbench/model/results.hpp"

namespace mgbench {

Presentation presentation_for(const RunResult& run, const std::string& workload) {
  const auto stored = run.presentation.find(workload);
  if (stored != run.presentation.end()) return stored->second;

  Presentation p;
  for (const ScalingSeries& s : run.scaling) {
    if (s.workload != workload || s.metric.empty()) continue;
    p.headline(s.metric, s.unit);
    break;
  }
  std::set<std::string> metrics;  // sorted: a stable column order
  for (const PointResult& point : run.points) {
    if (point.workload != workload || !point.metrics.is_object()) continue;
    for (auto it = point.metrics.begin(); it != point.metrics.end(); ++it) {
      if (it->is_number()) metrics.insert(it.key());
    }
  }
  TableSpec table;
  table.column(ColumnSpec::gpus()).column(ColumnSpec::devices()).column(ColumnSpec::params());
  table.column(ColumnSpec::median_time());
  for (const std::string& name : metrics) {
    p.metric(MetricSpec(name));
    table.column(ColumnSpec::metric(name));
  }
  table.column(ColumnSpec::speedup()).column(ColumnSpec::efficiency()).tail();
  p.table(std::move(table));
  p.chart(ChartSpec::scaling());
  return p;
}

}  // namespace mgbench
