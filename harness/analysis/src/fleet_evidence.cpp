// What a fleet screen's node recorded that explains a low figure (fleet.hpp): the facts of the
// GPU (power limit, PCIe link, NVLink), its telemetry against the other GPUs of the point, and
// the node's doctor warnings. The causes themselves are the % of peak's (peaks.hpp) and the
// straggler's (verdict_detail.hpp): one implementation each.
#include <fmt/format.h>

#include "mgbench/analysis/fleet.hpp"
#include "mgbench/analysis/peaks.hpp"
#include "verdict_detail.hpp"

namespace mgbench {

namespace {

const Json& fact(const ScreenNode& node, const char* key) {
  static const Json none = Json::object();
  return node.facts.is_object() && node.facts.contains(key) && node.facts[key].is_object()
             ? node.facts[key]
             : none;
}

// The environment's entry of GPU `device` (its "index"), nullptr when none.
const Json* gpu_entry(const Json& environment, int device) {
  if (!environment.contains("gpus") || !environment["gpus"].is_array()) return nullptr;
  for (const Json& g : environment["gpus"]) {
    if (g.is_object() && g.value("index", -1) == device) return &g;
  }
  return nullptr;
}

// "GPU 3: NVLink 16 of 18 links up" ("" when all are up or unknown).
std::string nvlink_down(const Json& environment, int device) {
  const Json* g = gpu_entry(environment, device);
  if (g == nullptr || !g->contains("nvlink") || !(*g)["nvlink"].is_object()) return "";
  const Json& l = (*g)["nvlink"];
  const int total = l.value("links_total", 0), up = l.value("links_up", 0);
  if (total <= 0 || up >= total) return "";
  return fmt::format("GPU {}: NVLink {} of {} links up", device, up, total);
}

}  // namespace

std::vector<std::string> gpu_evidence(const ScreenNode& node, const PointResult* point, int gpu,
                                      bool link) {
  const Json& environment = fact(node, "environment");
  std::vector<std::string> out = gpu_fact_causes(environment, gpu, link);
  if (link) {
    const std::string down = nvlink_down(environment, gpu);
    if (!down.empty()) out.push_back(down);
  }
  // Each point of a screen runs on one node (or a pair, whose telemetry is not used here).
  if (point != nullptr) {
    for (auto& cause : verdict_detail::telemetry_causes(*point, gpu, 0)) {
      out.push_back(std::move(cause));
    }
  }
  return out;
}

std::vector<std::string> node_evidence(const ScreenNode& node) {
  static const std::vector<std::string> kChecks = {
      "power_limit", "pcie_link",    "clock_events_idle", "clock_events_load", "other_processes",
      "ecc_errors",  "row_remapping", "nvlink",           "numa_affinity",     "persistence_mode"};
  return doctor_causes(fact(node, "doctor"), kChecks);
}

std::vector<std::string> link_evidence(const ScreenNode& node, int a, int b) {
  std::vector<std::string> out;
  const Json& environment = fact(node, "environment");
  const Json& topology = environment.value("topology", Json::object());
  const Json& matrix = topology.is_object() ? topology.value("matrix", Json::array()) : Json();
  const auto at = [](const Json& m, int i) -> const Json* {
    return m.is_array() && i >= 0 && static_cast<std::size_t>(i) < m.size() ? &m[static_cast<std::size_t>(i)]
                                                                           : nullptr;
  };
  const Json* row = at(matrix, a);
  const Json* cell = row != nullptr ? at(*row, b) : nullptr;
  if (cell != nullptr && cell->is_string()) {
    out.push_back(fmt::format("path GPU {} - GPU {}: {} (topology matrix)", a, b,
                              cell->get<std::string>()));
  }
  for (int g : {a, b}) {
    const std::string down = nvlink_down(environment, g);
    if (!down.empty()) out.push_back(down);
  }
  return out;
}

std::string finding_subject(const ScreenSection& screen, const ScreenFinding& f) {
  const auto host = [&](int n) {
    return n >= 0 && static_cast<std::size_t>(n) < screen.nodes.size()
               ? screen.nodes[static_cast<std::size_t>(n)].host
               : fmt::format("node {}", n);
  };
  if (f.kind == kFindingGpuLink) {
    return fmt::format("GPU {} -> GPU {} on {}", f.gpu, f.peer, host(f.node));
  }
  if (f.kind == kFindingNodeLink) return host(f.node) + " - " + host(f.peer);
  if (f.gpu >= 0) return fmt::format("{} GPU {}", host(f.node), f.gpu);
  return host(f.node);
}

}  // namespace mgbench
