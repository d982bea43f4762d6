// The screen section of results.json ("screen"; harness/schema/results.schema.json).
#include "mgbench/analysis/fleet.hpp"

namespace mgbench {

void to_json(Json& j, const ScreenNode& n) {
  j = Json{{"host", n.host},         {"gpus", n.gpus},     {"gpu_model", n.gpu_model},
           {"status", n.status},     {"message", n.message}, {"facts", n.facts}};
}

void from_json(const Json& j, ScreenNode& n) {
  n.host = j.at("host").get<std::string>();
  n.gpus = j.at("gpus").get<int>();
  n.gpu_model = j.value("gpu_model", std::string());
  n.status = j.at("status").get<std::string>();
  n.message = j.value("message", std::string());
  n.facts = j.contains("facts") && j["facts"].is_object() ? j["facts"] : Json::object();
}

void to_json(Json& j, const ScreenFigure& f) {
  j = Json{{"stage", f.stage}, {"metric", f.metric}, {"unit", f.unit}, {"node", f.node},
           {"gpu", f.gpu},     {"peer", f.peer},     {"value", f.value}, {"group", f.group},
           {"point", f.point}};
  if (!f.message.empty()) j["message"] = f.message;
}

void from_json(const Json& j, ScreenFigure& f) {
  f.stage = j.at("stage").get<int>();
  f.metric = j.at("metric").get<std::string>();
  f.unit = j.value("unit", std::string());
  f.node = j.at("node").get<int>();
  f.gpu = j.value("gpu", -1);
  f.peer = j.value("peer", -1);
  f.value = j.at("value").get<double>();
  f.group = j.value("group", std::string());
  f.point = j.value("point", std::size_t{0});
  f.message = j.value("message", std::string());
}

void to_json(Json& j, const ScreenFinding& f) {
  j = Json{{"kind", f.kind},           {"node", f.node},   {"gpu", f.gpu},
           {"peer", f.peer},           {"stage", f.stage}, {"metric", f.metric},
           {"unit", f.unit},           {"value", f.value}, {"reference", f.reference},
           {"gap", f.gap},             {"text", f.text},   {"evidence", f.evidence}};
}

void from_json(const Json& j, ScreenFinding& f) {
  f.kind = j.at("kind").get<std::string>();
  f.node = j.at("node").get<int>();
  f.gpu = j.value("gpu", -1);
  f.peer = j.value("peer", -1);
  f.stage = j.value("stage", 0);
  f.metric = j.value("metric", std::string());
  f.unit = j.value("unit", std::string());
  f.value = j.value("value", 0.0);
  f.reference = j.value("reference", 0.0);
  f.gap = j.value("gap", 0.0);
  f.text = j.at("text").get<std::string>();
  f.evidence = j.value("evidence", std::vector<std::string>{});
}

void to_json(Json& j, const ScreenSection& s) {
  Json rounds = Json::array();
  for (const auto& round : s.rounds) {
    Json pairs = Json::array();
    for (const auto& [a, b] : round) pairs.push_back(Json::array({a, b}));
    rounds.push_back(std::move(pairs));
  }
  j = Json{{"nodes", s.nodes},
           {"gpus_per_node", s.gpus_per_node},
           {"stages", s.stages},
           {"rounds", std::move(rounds)},
           {"thresholds", Json{{"gap", s.thresholds.gap}, {"robust_z", s.thresholds.robust_z}}},
           {"figures", s.figures},
           {"findings", s.findings},
           {"notes", s.notes},
           {"estimated_s", s.estimated_s},
           {"measured_s", s.measured_s}};
}

void from_json(const Json& j, ScreenSection& s) {
  s.nodes = j.at("nodes").get<std::vector<ScreenNode>>();
  s.gpus_per_node = j.value("gpus_per_node", 0);
  s.stages = j.value("stages", std::vector<int>{});
  s.rounds.clear();
  for (const Json& round : j.value("rounds", Json::array())) {
    std::vector<std::pair<int, int>> pairs;
    for (const Json& p : round) pairs.emplace_back(p.at(0).get<int>(), p.at(1).get<int>());
    s.rounds.push_back(std::move(pairs));
  }
  const Json t = j.value("thresholds", Json::object());
  s.thresholds.gap = t.value("gap", FleetThresholds{}.gap);
  s.thresholds.robust_z = t.value("robust_z", FleetThresholds{}.robust_z);
  s.figures = j.at("figures").get<std::vector<ScreenFigure>>();
  s.findings = j.at("findings").get<std::vector<ScreenFinding>>();
  s.notes = j.value("notes", std::vector<std::string>{});
  s.estimated_s = j.value("estimated_s", 0.0);
  s.measured_s = j.value("measured_s", 0.0);
}

}  // namespace mgbench
