// Scaling series and verdicts <-> JSON (see scaling_series.hpp).
#include "mgbench/model/scaling_series.hpp"
#include "mgbench/core/json_number.hpp"

namespace mgbench {
namespace {

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

std::optional<double> optional_number(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string anomaly_text(const Json& a) {
  if (a.is_string()) return a.get<std::string>();
  if (!a.is_object()) return a.dump();
  const std::string kind = a.value("kind", a.value("type", std::string()));
  const std::string text = a.value("text", a.value("message", std::string()));
  if (kind.empty()) return text.empty() ? a.dump() : text;
  return text.empty() ? kind : kind + ": " + text;
}

}  // namespace

void to_json(Json& j, const ScalingRow& row) {
  j = Json{{"gpus", row.gpus},
           {"throughput", row.throughput},
           {"time_s", row.time_s},
           {"speedup", row.speedup},
           {"efficiency", row.efficiency},
           {"karp_flatt", optional_json(row.karp_flatt)},
           {"marginal_efficiency", optional_json(row.marginal_efficiency)},
           {"point_index", row.point_index}};
  if (row.nodes > 1) j["nodes"] = row.nodes;
}

void from_json(const Json& j, ScalingRow& row) {
  row = ScalingRow{};
  row.gpus = json_integer<int>(j.at("gpus"), "gpus");
  row.throughput = j.at("throughput").get<double>();
  row.time_s = j.value("time_s", 0.0);
  row.speedup = optional_number(j, "speedup").value_or(1.0);
  row.efficiency = optional_number(j, "efficiency").value_or(1.0);
  row.karp_flatt = optional_number(j, "karp_flatt");
  row.marginal_efficiency = optional_number(j, "marginal_efficiency");
  row.point_index = json_integer_or<std::size_t>(j, "point_index", 0);
  if (j.contains("nodes")) row.nodes = json_integer<int>(j.at("nodes"), "nodes", 1);
}

void to_json(Json& j, const NodeSplit& split) {
  j = Json{{"gpus_per_node", split.gpus_per_node},
           {"nodes", split.nodes},
           {"intra_efficiency", split.intra_efficiency},
           {"inter_efficiency", split.inter_efficiency}};
}

void from_json(const Json& j, NodeSplit& split) {
  split = NodeSplit{};
  split.gpus_per_node = json_integer<int>(j.at("gpus_per_node"), "gpus_per_node", 1);
  split.nodes = json_integer<int>(j.at("nodes"), "nodes", 1);
  split.intra_efficiency = j.at("intra_efficiency").get<double>();
  split.inter_efficiency = j.at("inter_efficiency").get<double>();
}

void to_json(Json& j, const ScalingSeries& series) {
  j = Json{{"workload", series.workload}, {"params", series.params},
           {"metric", series.metric},     {"unit", series.unit},
           {"mode", series.mode},         {"rows", series.rows}};
  if (series.node_split) j["node_split"] = *series.node_split;
}

void from_json(const Json& j, ScalingSeries& series) {
  series = ScalingSeries{};
  series.workload = j.at("workload").get<std::string>();
  series.params = j.value("params", Json::object());
  series.metric = j.at("metric").get<std::string>();
  series.unit = j.value("unit", "");
  series.mode = j.value("mode", "");
  for (const Json& row : j.at("rows")) series.rows.push_back(row.get<ScalingRow>());
  if (j.contains("node_split") && !j.at("node_split").is_null()) {
    series.node_split = j.at("node_split").get<NodeSplit>();
  }
}

void to_json(Json& j, const RunVerdict& v) {
  j = Json{{"workload", v.workload}, {"params", v.params},       {"mode", v.mode},
           {"metric", v.metric},     {"unit", v.unit},           {"text", v.text},
           {"anomalies", v.anomalies}, {"gpus_max", v.gpus_max}, {"speedup", v.speedup},
           {"efficiency", v.efficiency}};
  if (!v.losing_part.empty()) j["losing_part"] = v.losing_part;
}

void from_json(const Json& j, RunVerdict& v) {
  v = RunVerdict{};
  if (j.is_string()) {
    v.text = j.get<std::string>();
    return;
  }
  v.workload = j.value("workload", "");
  v.params = j.value("params", Json::object());
  v.mode = j.value("mode", "");
  v.metric = j.value("metric", "");
  v.unit = j.value("unit", "");
  v.text = j.value("text", "");
  const Json anomalies = j.value("anomalies", Json::array());
  if (anomalies.is_array()) {
    for (const Json& a : anomalies) v.anomalies.push_back(anomaly_text(a));
  } else if (!anomalies.is_null()) {
    v.anomalies.push_back(anomaly_text(anomalies));
  }
  v.gpus_max = json_integer_or(j, "gpus_max", 1);
  v.speedup = optional_number(j, "speedup").value_or(1.0);
  v.efficiency = optional_number(j, "efficiency").value_or(1.0);
  v.losing_part = j.value("losing_part", "");
}

}  // namespace mgbench
