// Scaling analysis across GPU counts and the baseline-each outlier rule (see scaling.hpp).
#include "mgbench/analysis/scaling.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_order.hpp"

namespace mgbench {
namespace {

std::optional<double> metric_value(const PointResult& point, const std::string& metric) {
  if (!point.metrics.is_object()) return std::nullopt;
  const auto it = point.metrics.find(metric);
  if (it == point.metrics.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

bool has_integer_batch(const Params& params) {
  const ParamValue* batch = params.find("batch");
  return batch != nullptr && batch->is_integer();
}

struct Candidate {
  const PointResult* point = nullptr;
  double throughput = 0;
};

struct Group {
  std::string workload;
  Params params;
  ThroughputMetric metric;
  bool strong = false;
  std::map<int, Candidate> by_gpus;  // lowest plan index per GPU count
  std::vector<Candidate> alone;      // every ok 1-GPU point (several with --baseline each)
  std::string baseline_failed;       // the status of a 1-GPU point without a result
};

// Caches the lookup per workload.
class MetricCache {
 public:
  explicit MetricCache(const ThroughputLookup& lookup) : lookup_(lookup) {}
  const std::optional<ThroughputMetric>& operator()(const std::string& workload) {
    auto it = cache_.find(workload);
    if (it == cache_.end()) it = cache_.emplace(workload, lookup_(workload)).first;
    return it->second;
  }

 private:
  const ThroughputLookup& lookup_;
  std::map<std::string, std::optional<ThroughputMetric>> cache_;
};

using Groups = std::map<std::pair<std::string, std::string>, Group>;  // sorted output order

// "failed", "timed out", ...: what became of a point without a result.
std::string outcome_words(Status status) {
  switch (status) {
    case Status::timeout: return "timed out";
    case Status::oom: return "ran out of memory";
    case Status::wrong: return "gave a wrong result";
    default: return "failed";
  }
}

bool without_result(Status status) {
  return status == Status::failed || status == Status::timeout || status == Status::oom ||
         status == Status::wrong;
}

Groups group_points(const std::vector<PointResult>& points, ScalingMode mode,
                    const ThroughputLookup& lookup) {
  MetricCache metrics(lookup);
  Groups groups;
  std::map<std::pair<std::string, std::string>, std::string> failed_alone;
  for (const PointResult& point : points) {
    if (point.gpus == 1 && without_result(point.status)) {
      failed_alone.emplace(std::make_pair(point.workload, series_params(point, mode).dump()),
                           outcome_words(point.status));
    }
    if (point.status != Status::ok || point.gpus < 1) continue;
    const std::optional<ThroughputMetric>& metric = metrics(point.workload);
    if (!metric) continue;
    const std::optional<double> x = metric_value(point, metric->name);
    if (!x) continue;
    Params params = series_params(point, mode);
    Group& group = groups[{point.workload, params.dump()}];
    if (group.workload.empty()) {
      group.workload = point.workload;
      group.params = std::move(params);
      group.metric = *metric;
      group.strong = mode == ScalingMode::strong && has_integer_batch(point.params);
    }
    Candidate& slot = group.by_gpus[point.gpus];
    if (slot.point == nullptr || point.index < slot.point->index) slot = {&point, *x};
    if (point.gpus == 1) group.alone.push_back({&point, *x});
  }
  for (auto& [key, group] : groups) {
    const auto failed = failed_alone.find(key);
    if (failed != failed_alone.end() && group.alone.empty()) group.baseline_failed = failed->second;
  }
  return groups;
}

// With --baseline each the 1-GPU row is the median GPU measured alone (the upper middle of an
// even count), so that one slow or fast GPU does not set every efficiency; `text` says so.
Candidate median_alone(const Group& group, std::string& text) {
  std::map<int, Candidate> by_device;  // a device measured twice counts with its best
  for (const Candidate& c : group.alone) {
    const int device = c.point->devices.empty() ? -1 : c.point->devices.front();
    Candidate& slot = by_device[device];
    if (slot.point == nullptr || c.throughput > slot.throughput) slot = c;
  }
  if (by_device.size() < 2) return group.by_gpus.at(1);
  std::vector<Candidate> sorted;
  for (const auto& entry : by_device) sorted.push_back(entry.second);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate& a, const Candidate& b) {
    return a.throughput < b.throughput;
  });
  const Candidate& median = sorted[sorted.size() / 2];
  const int device = median.point->devices.empty() ? -1 : median.point->devices.front();
  text = "the median of " + std::to_string(sorted.size()) + " GPUs measured alone (GPU " +
         std::to_string(device) + ")";
  return median;
}

ScalingRow make_row(const Group& group, int gpus, const Candidate& candidate,
                    const Candidate& base, int base_gpus) {
  ScalingRow row;
  row.gpus = gpus;
  row.throughput = candidate.throughput;
  row.time_s = candidate.point->stats.median;
  row.point_index = candidate.point->index;
  row.nodes = std::max(1, candidate.point->placement.nodes);
  const double n = static_cast<double>(gpus) / base_gpus;  // GPUs relative to the baseline's
  row.speedup = group.strong ? base.point->stats.median / row.time_s
                             : candidate.throughput / base.throughput;
  row.efficiency = row.speedup / n;
  if (gpus > base_gpus && row.speedup > 0) {
    if (group.strong) {
      row.karp_flatt = (1.0 / row.speedup - 1.0 / n) / (1.0 - 1.0 / n);
    } else {
      row.gustafson = (n - row.speedup) / (n - 1.0);
    }
  }
  if (gpus % 2 == 0) {
    const auto half = group.by_gpus.find(gpus / 2);
    if (half != group.by_gpus.end() && half->second.throughput > 0) {
      row.marginal_efficiency = candidate.throughput / (2.0 * half->second.throughput);
    }
  }
  return row;
}

// The series of one group; nullopt without a usable baseline. Without an ok 1-GPU point but
// with a 1-GPU point that gave no result, the next-smallest GPU count is the baseline.
std::optional<ScalingSeries> make_series(const Group& group) {
  ScalingSeries series;
  auto base_it = group.by_gpus.find(1);
  if (base_it == group.by_gpus.end()) {
    if (group.baseline_failed.empty() || group.by_gpus.empty()) return std::nullopt;
    base_it = group.by_gpus.begin();
    series.no_baseline = "the 1-GPU point " + group.baseline_failed;
  }
  const int base_gpus = base_it->first;
  const Candidate base = base_gpus == 1 ? median_alone(group, series.baseline) : base_it->second;
  if (!(base.throughput > 0) || (group.strong && !(base.point->stats.median > 0))) {
    return std::nullopt;
  }
  series.workload = group.workload;
  series.params = group.params;
  series.metric = group.metric.name;
  series.unit = group.metric.unit;
  series.mode = group.strong ? "strong" : "weak";
  series.baseline_gpus = base_gpus;
  for (const auto& [gpus, candidate] : group.by_gpus) {
    if (gpus < base_gpus) continue;
    const Candidate& row_point = gpus == base_gpus ? base : candidate;
    if (group.strong && !(row_point.point->stats.median > 0)) continue;
    series.rows.push_back(make_row(group, gpus, row_point, base, base_gpus));
  }
  series.node_split = node_split(series.rows);
  return series;
}

}  // namespace

const char* to_string(ScalingMode mode) {
  return mode == ScalingMode::strong ? "strong" : "weak";
}

ScalingMode scaling_mode_from_string(const std::string& text) {
  if (text == "weak") return ScalingMode::weak;
  if (text == "strong") return ScalingMode::strong;
  throw UsageError("invalid scaling mode '" + text + "': expected weak or strong");
}

Params series_params(const PointResult& point, ScalingMode mode) {
  if (mode == ScalingMode::weak || !has_integer_batch(point.params)) return point.params;
  Params params = point.params;
  const std::int64_t batch = params.integer("batch");
  params.erase("batch");
  params.set("global_batch", batch * static_cast<std::int64_t>(point.gpus));
  return params;
}

ScalingMode scaling_mode_of(const RunResult& run) {
  if (!run.settings.is_object()) return ScalingMode::weak;
  const auto it = run.settings.find("scaling");
  return it != run.settings.end() && it->is_string() && it->get<std::string>() == "strong"
             ? ScalingMode::strong
             : ScalingMode::weak;
}

ThroughputLookup presentation_throughput(const RunResult& run) {
  return [&run](const std::string& workload) -> std::optional<ThroughputMetric> {
    const Presentation p = presentation_for(run, workload);
    if (!p.headline_ || p.headline_->name.empty()) return std::nullopt;
    return ThroughputMetric{p.headline_->name, p.headline_->unit};
  };
}

std::optional<NodeSplit> node_split(const std::vector<ScalingRow>& rows) {
  const ScalingRow* node = nullptr;   // the largest single-node row
  const ScalingRow* widest = nullptr;  // the row on the most nodes (the larger on a tie)
  for (const ScalingRow& r : rows) {
    if (r.nodes == 1 && (node == nullptr || r.gpus > node->gpus)) node = &r;
    if (r.nodes > 1 && (widest == nullptr || r.nodes > widest->nodes ||
                        (r.nodes == widest->nodes && r.gpus > widest->gpus))) {
      widest = &r;
    }
  }
  if (node == nullptr || widest == nullptr || !(node->efficiency > 0)) return std::nullopt;
  if (widest->gpus != widest->nodes * node->gpus) return std::nullopt;  // not full nodes of G
  NodeSplit split;
  split.gpus_per_node = node->gpus;
  split.nodes = widest->nodes;
  split.intra_efficiency = node->efficiency;
  split.inter_efficiency = widest->efficiency / node->efficiency;
  return split;
}

std::vector<ScalingSeries> compute_scaling(const std::vector<PointResult>& points,
                                           ScalingMode mode, const ThroughputLookup& lookup) {
  std::vector<ScalingSeries> out;
  for (const auto& entry : group_points(points, mode, lookup)) {
    if (auto series = make_series(entry.second)) out.push_back(std::move(*series));
  }
  // Numbers in params compare as numbers (batch 128 before 1024), not as text.
  std::stable_sort(out.begin(), out.end(), [](const ScalingSeries& a, const ScalingSeries& b) {
    if (a.workload != b.workload) return a.workload < b.workload;
    return params_less(Json(a.params), Json(b.params));
  });
  return out;
}

std::vector<Json> baseline_outliers(const std::vector<PointResult>& single_gpu_points,
                                    double threshold, const ThroughputLookup& lookup) {
  struct Devices {
    Params params;
    ThroughputMetric metric;
    std::map<int, double> best_by_device;
  };
  MetricCache metrics(lookup);
  std::map<std::pair<std::string, std::string>, Devices> groups;
  for (const PointResult& point : single_gpu_points) {
    if (point.status != Status::ok || point.gpus != 1 || point.devices.empty()) continue;
    const std::optional<ThroughputMetric>& metric = metrics(point.workload);
    if (!metric) continue;
    const std::optional<double> x = metric_value(point, metric->name);
    if (!x) continue;
    Devices& group = groups[{point.workload, point.params.dump()}];
    group.params = point.params;
    group.metric = *metric;
    const int device = point.devices.front();
    const auto it = group.best_by_device.find(device);
    if (it == group.best_by_device.end()) {
      group.best_by_device.emplace(device, *x);
    } else {
      it->second = std::max(it->second, *x);
    }
  }

  std::vector<Json> rows;
  for (const auto& [key, group] : groups) {
    if (group.best_by_device.size() < 2) continue;
    int best_device = group.best_by_device.begin()->first;
    double best = group.best_by_device.begin()->second;
    for (const auto& [device, x] : group.best_by_device) {
      if (x > best) {
        best = x;
        best_device = device;
      }
    }
    if (!(best > 0)) continue;
    for (const auto& [device, x] : group.best_by_device) {
      const double deficit = 1.0 - x / best;
      if (device == best_device || !(deficit > threshold)) continue;
      rows.push_back(Json{{"workload", key.first},
                          {"params", Json(group.params)},
                          {"metric", group.metric.name},
                          {"unit", group.metric.unit},
                          {"device", device},
                          {"throughput", x},
                          {"best_device", best_device},
                          {"best", best},
                          {"deficit", deficit}});
    }
  }
  return rows;
}

}  // namespace mgbench
