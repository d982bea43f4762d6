// `mgbench screen`: the figures one launch's point gives (screen_detail.hpp), and what a node's
// probe keeps for the evidence.
#include <fmt/format.h>

#include "screen_detail.hpp"

namespace mgbench::screen_detail {

namespace {

std::optional<double> number(const Json& object, const std::string& key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) {
    return std::nullopt;
  }
  const double v = object[key].get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// The path between two GPUs in the node's topology matrix ("" when unknown).
std::string path_label(const ScreenNode& node, int a, int b) {
  const Json& env = node.facts.value("environment", Json::object());
  const Json& matrix = env.is_object() && env.contains("topology") && env["topology"].is_object()
                           ? env["topology"].value("matrix", Json::array())
                           : Json::array();
  if (!matrix.is_array() || a < 0 || b < 0 || static_cast<std::size_t>(a) >= matrix.size()) {
    return "";
  }
  const Json& row = matrix[static_cast<std::size_t>(a)];
  if (!row.is_array() || static_cast<std::size_t>(b) >= row.size() ||
      !row[static_cast<std::size_t>(b)].is_string()) {
    return "";
  }
  return row[static_cast<std::size_t>(b)].get<std::string>();
}

ScreenFigure base(const ScreenLaunch& launch, const PointResult& p, int node) {
  ScreenFigure f;
  f.stage = launch.item.stage;
  f.metric = launch.item.label;
  f.unit = launch.item.unit;
  f.node = node;
  f.point = p.index;
  return f;
}

}  // namespace

std::vector<ScreenFigure> launch_figures(const ScreenLaunch& launch, const PointResult& p,
                                         const std::vector<ScreenNode>& nodes) {
  std::vector<ScreenFigure> out;
  const int first = launch.nodes.empty() ? -1 : launch.nodes.front();
  const std::string model =
      first >= 0 ? nodes.at(static_cast<std::size_t>(first)).gpu_model : std::string();
  if (launch.item.scope == ScreenScope::node) {
    ScreenFigure f = base(launch, p, launch.nodes.size() > 2 ? -1 : first);
    if (launch.nodes.size() == 2) f.peer = launch.nodes[1];
    f.group = model;
    const auto value = number(p.metrics, launch.item.metric);
    if (p.status == Status::ok && value) {
      f.value = *value;
    } else if (launch.nodes.size() == 2) {  // a pair that failed is a pair far below the others
      f.message = fmt::format("{}: {}", to_string(p.status), p.message);
    } else {
      return out;
    }
    out.push_back(std::move(f));
    return out;
  }
  if (p.status != Status::ok) return out;
  if (launch.item.scope == ScreenScope::gpu) {
    const auto per_gpu = number(p.metrics, launch.item.metric);
    for (const RankTiming& r : p.ranks) {
      if (!per_gpu || !(r.median_s > 0)) continue;
      ScreenFigure f = base(launch, p, first);
      f.gpu = r.device;
      f.group = model;
      f.value = *per_gpu * p.stats.median / r.median_s;
      out.push_back(std::move(f));
    }
    return out;
  }
  // The p2p matrix: rank 0's bandwidth of every ordered pair.
  const Json& ranks = p.extra.value("ranks", Json::array());
  if (!ranks.is_array() || ranks.empty() || !ranks[0].is_object()) return out;
  const Json& matrix = ranks[0].value("details", Json::object()).value(launch.item.metric, Json());
  if (!matrix.is_array()) return out;
  for (std::size_t i = 0; i < matrix.size() && i < p.devices.size(); ++i) {
    if (!matrix[i].is_array()) continue;
    for (std::size_t j = 0; j < matrix[i].size() && j < p.devices.size(); ++j) {
      if (i == j || !matrix[i][j].is_number()) continue;
      ScreenFigure f = base(launch, p, first);
      f.gpu = p.devices[i];
      f.peer = p.devices[j];
      const std::string path = path_label(nodes.at(static_cast<std::size_t>(first)), f.gpu, f.peer);
      f.group = path.empty() ? model : path;
      f.value = matrix[i][j].get<double>();
      out.push_back(std::move(f));
    }
  }
  return out;
}

Json node_facts(const Json& environment, const Json& doctor) {
  Json env = Json::object();
  if (environment.is_object()) {
    for (const char* key : {"gpus", "topology", "versions", "gpu_count", "fake_devices"}) {
      if (environment.contains(key)) env[key] = environment[key];
    }
  }
  return Json{{"environment", std::move(env)}, {"doctor", doctor.is_null() ? Json::object() : doctor}};
}

std::string gpu_model_of(const Json& environment) {
  if (!environment.is_object() || !environment.contains("gpus")) return "";
  const Json& gpus = environment["gpus"];
  if (!gpus.is_array() || gpus.empty() || !gpus[0].is_object()) return "";
  return gpus[0].value("name", std::string());
}

}  // namespace mgbench::screen_detail
