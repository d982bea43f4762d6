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
           {"gustafson", optional_json(row.gustafson)},
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
  row.gustafson = optional_number(j, "gustafson");
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
  if (series.baseline_gpus > 1) j["baseline_gpus"] = series.baseline_gpus;
  if (!series.baseline.empty()) j["baseline"] = series.baseline;
  if (!series.no_baseline.empty()) j["no_baseline"] = series.no_baseline;
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
  series.baseline_gpus = json_integer_or(j, "baseline_gpus", 1);
  series.baseline = j.value("baseline", "");
  series.no_baseline = j.value("no_baseline", "");
}

void to_json(Json& j, const LossSplit& loss) {
  j = Json{{"time_s", loss.time_s},       {"lost_s", loss.lost_s},
           {"comm_s", loss.comm_s},       {"compute_s", loss.compute_s},
           {"straggler_s", loss.straggler_s}, {"rest_s", loss.rest_s}};
}

void from_json(const Json& j, LossSplit& loss) {
  loss = LossSplit{};
  loss.time_s = optional_number(j, "time_s").value_or(0.0);
  loss.lost_s = optional_number(j, "lost_s").value_or(0.0);
  loss.comm_s = optional_number(j, "comm_s").value_or(0.0);
  loss.compute_s = optional_number(j, "compute_s").value_or(0.0);
  loss.straggler_s = optional_number(j, "straggler_s").value_or(0.0);
  loss.rest_s = optional_number(j, "rest_s").value_or(0.0);
}

void to_json(Json& j, const Straggler& s) {
  j = Json{{"rank", s.rank},
           {"device", s.device},
           {"excess", s.excess},
           {"saved_s", s.saved_s},
           {"efficiency_without", s.efficiency_without},
           {"baseline_gpu", s.baseline_gpu}};
  if (!s.host.empty()) j["host"] = s.host;
  if (!s.cause.empty()) j["cause"] = s.cause;
}

void from_json(const Json& j, Straggler& s) {
  s = Straggler{};
  s.rank = json_integer_or(j, "rank", 0);
  s.device = json_integer_or(j, "device", 0);
  s.host = j.value("host", "");
  s.excess = optional_number(j, "excess").value_or(0.0);
  s.saved_s = optional_number(j, "saved_s").value_or(0.0);
  s.cause = j.value("cause", "");
  s.efficiency_without = optional_number(j, "efficiency_without").value_or(0.0);
  s.baseline_gpu = j.value("baseline_gpu", false);
}

void to_json(Json& j, const LinkPlateau& p) {
  j = Json{{"gpus", p.gpus}, {"nodes", p.nodes}, {"GBps", p.GBps},
           {"link", p.link}, {"fraction", optional_json(p.fraction)}};
}

void from_json(const Json& j, LinkPlateau& p) {
  p = LinkPlateau{};
  p.gpus = json_integer_or(j, "gpus", 2);
  p.nodes = json_integer_or(j, "nodes", 1);
  p.GBps = optional_number(j, "GBps").value_or(0.0);
  p.link = j.value("link", "");
  p.fraction = optional_number(j, "fraction");
}

void to_json(Json& j, const RunVerdict& v) {
  j = Json{{"workload", v.workload}, {"params", v.params},       {"mode", v.mode},
           {"metric", v.metric},     {"unit", v.unit},           {"text", v.text},
           {"anomalies", v.anomalies}, {"gpus_max", v.gpus_max}, {"speedup", v.speedup},
           {"efficiency", v.efficiency}};
  if (!v.losing_part.empty()) j["losing_part"] = v.losing_part;
  if (v.kind != "scaling") j["kind"] = v.kind;
  if (!v.binding.empty()) j["binding"] = v.binding;
  if (!v.next_step.empty()) j["next_step"] = v.next_step;
  if (v.loss) j["loss"] = *v.loss;
  if (v.straggler) j["straggler"] = *v.straggler;
  if (!v.plateaus.empty()) j["plateaus"] = v.plateaus;
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
  v.kind = j.value("kind", "scaling");
  v.binding = j.value("binding", "");
  v.next_step = j.value("next_step", "");
  if (j.contains("loss") && j.at("loss").is_object()) v.loss = j.at("loss").get<LossSplit>();
  if (j.contains("straggler") && j.at("straggler").is_object()) {
    v.straggler = j.at("straggler").get<Straggler>();
  }
  if (j.contains("plateaus") && j.at("plateaus").is_array()) {
    for (const Json& p : j.at("plateaus")) {
      if (p.is_object()) v.plateaus.push_back(p.get<LinkPlateau>());
    }
  }
}

}  // namespace mgbench
