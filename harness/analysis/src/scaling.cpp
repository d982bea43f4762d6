// Scaling analysis across GPU counts and the baseline-each outlier rule (see scaling.hpp).
#include "mgbench/analysis/scaling.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "mgbench/core/error.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench {
namespace {

std::optional<double> metric_value(const PointResult& point, const std::string& metric) {
  if (!point.metrics.is_object()) return std::nullopt;
  const auto it = point.metrics.find(metric);
  if (it == point.metrics.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

bool has_integer_batch(const Params& params) {
  if (!params.is_object()) return false;
  const auto it = params.find("batch");
  return it != params.end() && it->is_number_integer();
}

// The parameters that identify a series: as-is (weak), or with the per-GPU batch turned into
// the global batch (strong).
Params series_params(const PointResult& point, ScalingMode mode) {
  if (mode == ScalingMode::weak || !has_integer_batch(point.params)) return point.params;
  Params params = point.params;
  const std::int64_t batch = params.at("batch").get<std::int64_t>();
  params.erase("batch");
  params["global_batch"] = batch * static_cast<std::int64_t>(point.gpus);
  return params;
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
};

}  // namespace

const char* to_string(ScalingMode mode) {
  return mode == ScalingMode::strong ? "strong" : "weak";
}

ScalingMode scaling_mode_from_string(const std::string& text) {
  if (text == "weak") return ScalingMode::weak;
  if (text == "strong") return ScalingMode::strong;
  throw UsageError("invalid scaling mode '" + text + "': expected weak or strong");
}

void to_json(Json& j, const ScalingRow& row) {
  j = Json{{"gpus", row.gpus},
           {"throughput", row.throughput},
           {"time_s", row.time_s},
           {"speedup", row.speedup},
           {"efficiency", row.efficiency},
           {"karp_flatt", row.karp_flatt ? Json(*row.karp_flatt) : Json(nullptr)},
           {"marginal_efficiency",
            row.marginal_efficiency ? Json(*row.marginal_efficiency) : Json(nullptr)},
           {"point_index", row.point_index}};
}

void from_json(const Json& j, ScalingRow& row) {
  row = ScalingRow{};
  row.gpus = j.at("gpus").get<int>();
  row.throughput = j.at("throughput").get<double>();
  row.time_s = j.at("time_s").get<double>();
  row.speedup = j.at("speedup").get<double>();
  row.efficiency = j.at("efficiency").get<double>();
  const auto optional_number = [&](const char* key) -> std::optional<double> {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<double>();
  };
  row.karp_flatt = optional_number("karp_flatt");
  row.marginal_efficiency = optional_number("marginal_efficiency");
  row.point_index = j.value("point_index", std::size_t{0});
}

void to_json(Json& j, const ScalingSeries& series) {
  Json rows = Json::array();
  for (const ScalingRow& row : series.rows) rows.push_back(row);
  j = Json{{"workload", series.workload}, {"params", series.params},
           {"metric", series.metric},     {"unit", series.unit},
           {"mode", series.mode},         {"rows", rows}};
}

void from_json(const Json& j, ScalingSeries& series) {
  series = ScalingSeries{};
  series.workload = j.at("workload").get<std::string>();
  series.params = j.at("params");
  series.metric = j.at("metric").get<std::string>();
  series.unit = j.at("unit").get<std::string>();
  series.mode = j.at("mode").get<std::string>();
  for (const Json& row : j.at("rows")) series.rows.push_back(row.get<ScalingRow>());
}

Json scaling_to_json(const std::vector<ScalingSeries>& series) {
  Json out = Json::array();
  for (const ScalingSeries& s : series) out.push_back(s);
  return out;
}

std::optional<ThroughputMetric> registry_throughput(const std::string& workload) {
  const Workload* w = find_workload(workload);
  if (w == nullptr || w->throughput_metric().empty()) return std::nullopt;
  return ThroughputMetric{w->throughput_metric(), w->throughput_unit()};
}

std::vector<ScalingSeries> compute_scaling(const std::vector<PointResult>& points,
                                           ScalingMode mode) {
  return compute_scaling(points, mode, registry_throughput);
}

std::vector<ScalingSeries> compute_scaling(const std::vector<PointResult>& points,
                                           ScalingMode mode, const ThroughputLookup& lookup) {
  std::map<std::string, std::optional<ThroughputMetric>> metrics;  // lookup cache
  std::map<std::pair<std::string, std::string>, Group> groups;     // sorted output order
  for (const PointResult& point : points) {
    if (point.status != Status::ok || point.gpus < 1) continue;
    auto cached = metrics.find(point.workload);
    if (cached == metrics.end()) {
      cached = metrics.emplace(point.workload, lookup(point.workload)).first;
    }
    if (!cached->second) continue;
    const std::optional<double> x = metric_value(point, cached->second->name);
    if (!x) continue;

    Params params = series_params(point, mode);
    Group& group = groups[{point.workload, params.dump()}];
    if (group.workload.empty()) {
      group.workload = point.workload;
      group.params = std::move(params);
      group.metric = *cached->second;
      group.strong = mode == ScalingMode::strong && has_integer_batch(point.params);
    }
    Candidate& slot = group.by_gpus[point.gpus];
    if (slot.point == nullptr || point.index < slot.point->index) slot = {&point, *x};
  }

  std::vector<ScalingSeries> out;
  for (const auto& entry : groups) {
    const Group& group = entry.second;
    const auto base = group.by_gpus.find(1);
    if (base == group.by_gpus.end()) continue;  // no baseline: no speedup to compute
    const double x1 = base->second.throughput;
    const double t1 = base->second.point->stats.median;
    if (!(x1 > 0) || (group.strong && !(t1 > 0))) continue;

    ScalingSeries series;
    series.workload = group.workload;
    series.params = group.params;
    series.metric = group.metric.name;
    series.unit = group.metric.unit;
    series.mode = group.strong ? "strong" : "weak";
    for (const auto& [gpus, candidate] : group.by_gpus) {
      const double t = candidate.point->stats.median;
      if (group.strong && !(t > 0)) continue;
      ScalingRow row;
      row.gpus = gpus;
      row.throughput = candidate.throughput;
      row.time_s = t;
      row.point_index = candidate.point->index;
      const double n = static_cast<double>(gpus);
      row.speedup = group.strong ? t1 / t : candidate.throughput / x1;
      row.efficiency = row.speedup / n;
      if (gpus > 1 && row.speedup > 0) {
        row.karp_flatt = (1.0 / row.speedup - 1.0 / n) / (1.0 - 1.0 / n);
      }
      if (gpus % 2 == 0) {
        const auto half = group.by_gpus.find(gpus / 2);
        if (half != group.by_gpus.end() && half->second.throughput > 0) {
          row.marginal_efficiency = candidate.throughput / (2.0 * half->second.throughput);
        }
      }
      series.rows.push_back(std::move(row));
    }
    out.push_back(std::move(series));
  }
  // Numbers in params compare as numbers (batch 128 before 1024), not as text.
  std::stable_sort(out.begin(), out.end(), [](const ScalingSeries& a, const ScalingSeries& b) {
    if (a.workload != b.workload) return a.workload < b.workload;
    return a.params < b.params;
  });
  return out;
}

std::vector<Json> baseline_outliers(const std::vector<PointResult>& single_gpu_points,
                                    double threshold) {
  return baseline_outliers(single_gpu_points, threshold, registry_throughput);
}

std::vector<Json> baseline_outliers(const std::vector<PointResult>& single_gpu_points,
                                    double threshold, const ThroughputLookup& lookup) {
  struct Devices {
    Params params;
    ThroughputMetric metric;
    std::map<int, double> best_by_device;
  };
  std::map<std::string, std::optional<ThroughputMetric>> metrics;
  std::map<std::pair<std::string, std::string>, Devices> groups;
  for (const PointResult& point : single_gpu_points) {
    if (point.status != Status::ok || point.gpus != 1 || point.devices.empty()) continue;
    auto cached = metrics.find(point.workload);
    if (cached == metrics.end()) {
      cached = metrics.emplace(point.workload, lookup(point.workload)).first;
    }
    if (!cached->second) continue;
    const std::optional<double> x = metric_value(point, cached->second->name);
    if (!x) continue;
    Devices& group = groups[{point.workload, point.params.dump()}];
    group.params = point.params;
    group.metric = *cached->second;
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
                          {"params", group.params},
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
