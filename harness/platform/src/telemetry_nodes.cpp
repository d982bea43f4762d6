// Telemetry with a process per GPU: each node's leader samples its node's GPUs, and rank 0
// merges the nodes' summaries of a point into one.
#include <algorithm>
#include <cmath>
#include <limits>

#include "mgbench/core/json_text.hpp"
#include "mgbench/model/telemetry_keys.hpp"
#include "mgbench/platform/telemetry.hpp"

namespace mgbench {

namespace {

namespace tk = telemetry_keys;

bool has_series(const Json& summary) {
  return summary.is_object() && summary.contains(tk::kSeries) &&
         summary[tk::kSeries].is_object() && summary[tk::kSeries].contains(tk::kTimes) &&
         summary[tk::kSeries][tk::kTimes].is_array();
}

double number_or_nan(const Json& v) {
  return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// Seconds between the base node's start and this node's (0 when either is unknown).
double start_offset(const Json& base, const Json& node) {
  const double t0 = number_or_nan(base.value(tk::kT0UnixS, Json()));
  const double t1 = number_or_nan(node.value(tk::kT0UnixS, Json()));
  return std::isfinite(t0) && std::isfinite(t1) ? t1 - t0 : 0.0;
}

// For each tick of `axis`, the index of the last of `ticks` (shifted by `offset`) at or before
// it; -1 before the first.
std::vector<long> hold_indices(const Json& axis, const Json& ticks, double offset) {
  std::vector<long> out;
  long k = -1;
  for (const Json& t : axis) {
    const double at = number_or_nan(t);
    while (k + 1 < static_cast<long>(ticks.size()) &&
           number_or_nan(ticks[static_cast<std::size_t>(k + 1)]) + offset <= at) {
      ++k;
    }
    out.push_back(k);
  }
  return out;
}

// One GPU's series entry placed on the base axis, with its node and host.
Json placed_series(const Json& g, const std::vector<long>& hold, const NodeTelemetry& node) {
  Json out{{tk::kDevice, g.value(tk::kDevice, Json())},
           {tk::kNode, node.node},
           {tk::kHost, node.host}};
  const auto place = [&](const char* key) {
    if (!g.contains(key) || !g[key].is_array()) return;
    Json values = Json::array();
    for (long k : hold) {
      const bool known = k >= 0 && static_cast<std::size_t>(k) < g[key].size();
      values.push_back(known ? g[key][static_cast<std::size_t>(k)] : Json());
    }
    out[key] = std::move(values);
  };
  for (const tk::Gauge& gauge : tk::kSeriesGauges) place(gauge.key);
  place(tk::kThrottled);
  return out;
}

void merge_series(Json& merged, const Json& base, const NodeTelemetry& node) {
  if (!has_series(node.summary)) return;
  const Json& series = node.summary[tk::kSeries];
  const Json& axis = merged[tk::kSeries][tk::kTimes];
  const std::vector<long> hold =
      hold_indices(axis, series[tk::kTimes], start_offset(base, node.summary));
  for (const Json& g : series.value(tk::kPerGpu, Json::array())) {
    if (g.is_object()) merged[tk::kSeries][tk::kPerGpu].push_back(placed_series(g, hold, node));
  }
}

}  // namespace

Json merge_node_telemetry(const std::vector<NodeTelemetry>& nodes) {
  const NodeTelemetry* base = nullptr;
  for (const NodeTelemetry& n : nodes) {
    if (n.summary.is_object() && (base == nullptr || (!has_series(base->summary) &&
                                                      has_series(n.summary)))) {
      base = &n;
    }
  }
  if (base == nullptr) return Json();
  Json merged{{tk::kIntervalS, base->summary.value(tk::kIntervalS, Json())},
              {tk::kDurationS, 0.0},
              {tk::kGpus, Json::array()}};
  if (has_series(base->summary)) {
    merged[tk::kSeries] = Json{{tk::kTimes, base->summary[tk::kSeries][tk::kTimes]},
                               {tk::kPerGpu, Json::array()}};
  }
  if (base->summary.contains(tk::kT0UnixS)) merged[tk::kT0UnixS] = base->summary[tk::kT0UnixS];
  for (const NodeTelemetry& n : nodes) {
    if (!n.summary.is_object()) continue;
    const double duration = number_or_nan(n.summary.value(tk::kDurationS, Json()));
    if (std::isfinite(duration)) {
      merged[tk::kDurationS] = std::max(merged[tk::kDurationS].get<double>(), duration);
    }
    for (Json g : n.summary.value(tk::kGpus, Json::array())) {
      if (!g.is_object()) continue;
      g[tk::kNode] = n.node;
      g[tk::kHost] = n.host;
      merged[tk::kGpus].push_back(std::move(g));
    }
    if (merged.contains(tk::kSeries)) merge_series(merged, base->summary, n);
  }
  return merged;
}

Json gather_node_telemetry(ProcessGroup& group, const Json& mine, const std::string& step) {
  const Json entry{{"leader", group.local_rank() == 0}, {"host", group.host()}, {"summary", mine}};
  const std::vector<std::string> all = group.all_gather(dump_json(entry), step);
  if (group.rank() != 0) return Json();
  std::vector<NodeTelemetry> nodes;
  for (const std::string& text : all) {
    const Json e = Json::parse(text);
    if (!e.at("leader").get<bool>()) continue;
    nodes.push_back({static_cast<int>(nodes.size()), e.at("host").get<std::string>(),
                     e.at("summary")});
  }
  return merge_node_telemetry(nodes);
}

}  // namespace mgbench
