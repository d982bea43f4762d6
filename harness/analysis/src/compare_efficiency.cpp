// Scaling efficiency of the runs being compared: RunResult::scaling rows when a run has them,
// else X(N) / (N X(1)) of the throughput metric; side by side for two runs, per point for the
// offer table.
#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "compare_detail.hpp"
#include "mgbench/analysis/compare.hpp"
#include "mgbench/core/json_text.hpp"

namespace mgbench {

using namespace compare_detail;

namespace {

// The rows of RunResult::scaling, each with its series' workload and parameters.
void collect_scaling(const std::vector<ScalingSeries>& scaling, std::vector<EffEntry>& out) {
  for (const ScalingSeries& series : scaling) {
    if (series.workload.empty()) continue;
    for (const ScalingRow& row : series.rows) {
      out.push_back(EffEntry{series.workload, series.params, row.gpus, row.efficiency,
                             row.point_index});
    }
  }
}

}  // namespace

std::string efficiency_key(const std::string& workload, const Params& params, int gpus) {
  return workload + "|" + dump_json(Json(params)) + "|" + std::to_string(gpus);
}

namespace compare_detail {

std::vector<EffEntry> collect_efficiencies(const RunResult& run, const CompareOptions& options) {
  std::vector<EffEntry> out;
  collect_scaling(run.scaling, out);
  std::set<std::string> workloads_with_rows;
  for (const EffEntry& e : out) workloads_with_rows.insert(e.workload);
  // Fallback for workloads the run has no scaling rows for: X(N) / (N X(1)).
  std::map<std::string, double> single;  // workload|params -> X(1)
  for (const PointResult& p : run.points) {
    if (p.status != Status::ok || p.gpus != 1) continue;
    const Quantity q = quantity_for(p.workload, options);
    if (q.metric.empty()) continue;
    if (auto v = quantity_value(p, q); v && *v > 0) {
      single.emplace(p.workload + "|" + p.params.dump(), *v);
    }
  }
  for (const PointResult& p : run.points) {
    if (p.status != Status::ok || workloads_with_rows.count(p.workload)) continue;
    const Quantity q = quantity_for(p.workload, options);
    if (q.metric.empty()) continue;
    auto it = single.find(p.workload + "|" + p.params.dump());
    const std::optional<double> v = quantity_value(p, q);
    if (it == single.end() || !v) continue;
    out.push_back(EffEntry{p.workload, p.params, p.gpus,
                           *v / (p.gpus * it->second), p.index});
  }
  return out;
}

namespace {
std::string point_slot(const std::string& workload, std::size_t index, int gpus) {
  return workload + "|" + std::to_string(index) + "|" + std::to_string(gpus);
}
}  // namespace

EffIndex index_efficiencies(const std::vector<EffEntry>& entries) {
  EffIndex index;  // emplace: the first entry wins, as the linear scan did
  for (const EffEntry& e : entries) {
    if (e.point_index) {
      index.by_point.emplace(point_slot(e.workload, *e.point_index, e.gpus), e.value);
    }
    index.by_config.emplace(efficiency_key(e.workload, e.params, e.gpus), e.value);
  }
  return index;
}

std::optional<double> point_efficiency(const EffIndex& index, const PointResult& p) {
  if (auto it = index.by_point.find(point_slot(p.workload, p.index, p.gpus));
      it != index.by_point.end()) {
    return it->second;
  }
  const auto it = index.by_config.find(efficiency_key(p.workload, p.params, p.gpus));
  if (it != index.by_config.end()) return it->second;
  return std::nullopt;
}

std::vector<EfficiencyRow> efficiency_rows(const RunResult& base, const RunResult& next,
                                           const CompareOptions& options) {
  std::vector<EfficiencyRow> out;
  std::map<std::string, EfficiencyRow> rows;
  auto add_rows = [&](const std::vector<EffEntry>& entries, bool is_base) {
    for (const EffEntry& e : entries) {
      if (e.gpus <= 1) continue;
      const std::string key = efficiency_key(e.workload, e.params, e.gpus);
      auto it = rows.find(key);
      if (it == rows.end()) {
        it = rows.emplace(key,
                          EfficiencyRow{e.workload, e.params, e.gpus, std::nullopt, std::nullopt})
                 .first;
      }
      std::optional<double>& slot = is_base ? it->second.base : it->second.next;
      if (!slot) slot = e.value;  // first series row of a key wins
    }
  };
  add_rows(collect_efficiencies(base, options), true);
  add_rows(collect_efficiencies(next, options), false);
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const EfficiencyRow& a, const EfficiencyRow& b) {
    if (a.workload != b.workload) return a.workload < b.workload;
    if (a.params != b.params) return a.params.dump() < b.params.dump();
    return a.gpus < b.gpus;
  });
  return out;
}

}  // namespace compare_detail

std::map<std::string, double> efficiencies(const RunResult& run, const CompareOptions& given) {
  const CompareOptions options = with_headlines(given, {&run});
  std::map<std::string, double> out;
  for (const EffEntry& e : collect_efficiencies(run, options)) {
    out.emplace(efficiency_key(e.workload, e.params, e.gpus), e.value);
  }
  return out;
}

}  // namespace mgbench
