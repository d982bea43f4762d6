// Verdicts of collectives: bus bandwidth is undefined on one GPU, so instead of a speedup the
// plateau per GPU count is judged against the link's limit (verdict.hpp).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "mgbench/analysis/peaks.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/gpu_models.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/point_view.hpp"
#include "verdict_detail.hpp"

namespace mgbench {

using namespace verdict_detail;

namespace {

struct Link {
  std::string name;    // "NVLink", "PCIe", "the network"
  std::string detail;  // "18 links x 25 GB/s", "Gen5 x16", "400 Gb/s InfiniBand"
  double GBps = 0;     // per GPU, one direction; 0 unknown
};

// A string field, "" when absent or not a string (environments come from other machines).
std::string text_at(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_string()) return "";
  return j.at(key).get<std::string>();
}

// Between the GPUs of one node, from the first GPU of the run's environment.
Link node_link(const Json& env) {
  if (!env.is_object() || !env.contains("gpus") || !env.at("gpus").is_array() ||
      env.at("gpus").empty() || !env.at("gpus")[0].is_object()) {
    return {};
  }
  const Json& first = env.at("gpus")[0];
  const int device = first.contains("index") && first.at("index").is_number_integer()
                         ? first.at("index").get<int>()
                         : 0;
  const EnvironmentGpu gpu = environment_gpu(env, device);
  if (!gpu.found) return {};
  const HardwareLimits& hw = gpu.hw;
  const LinkLimit limit = peer_link_limit(hw);
  if (!(limit.GBps > 0)) return {};
  const double nvlink = nvlink_link_GBps(nvlink_generation(hw));
  if (hw.nvlinks_up > 0 && limit.GBps == nvlink * hw.nvlinks_up) {
    return {"NVLink", std::to_string(hw.nvlinks_up) + " links x " + fixed(nvlink, 0) + " GB/s",
            limit.GBps};
  }
  return {"PCIe", "Gen" + std::to_string(hw.pcie_gen) + " x" + std::to_string(hw.pcie_width),
          limit.GBps};
}

// Between nodes: an active RDMA port's rate ("400 Gb/sec (4X NDR)"), else the fastest network
// interface that is up, as environment.nics records them (mgbench doctor's form).
Link network_link(const Json& env) {
  Link link{"the network", "", 0};
  if (!env.is_object() || !env.contains("nics") || !env.at("nics").is_object()) return link;
  const Json& nics = env.at("nics");
  const auto list = [&](const char* key) {
    return nics.contains(key) && nics.at(key).is_array() ? nics.at(key) : Json::array();
  };
  for (const Json& port : list("infiniband")) {
    if (text_at(port, "state") != "ACTIVE") continue;
    const double gbit = std::atof(text_at(port, "rate").c_str());
    if (!(gbit > 0) || !(gbit < 1e6)) continue;
    const std::string layer = one_line(text_at(port, "link_layer"));
    link.GBps = gbit / 8.0;
    link.detail = fixed(gbit, 0) + " Gb/s " + (layer.empty() ? "RDMA" : layer);
    return link;
  }
  for (const Json& iface : list("interfaces")) {
    if (text_at(iface, "operstate") != "up") continue;
    const auto it = iface.find("speed_mbps");
    if (it == iface.end() || !it->is_number() || !(it->get<double>() / 8000.0 > link.GBps)) {
      continue;
    }
    link.GBps = it->get<double>() / 8000.0;
    link.detail = fixed(it->get<double>() / 1000.0, 0) + " Gb/s Ethernet";
  }
  return link;
}

// The parameters that set a point's size (the presentation's axes and their companions).
std::set<std::string> size_params(const Presentation& p) {
  std::set<std::string> out;
  for (const AxisSpec& a : p.axes) {
    out.insert(a.param);
    out.insert(a.companions.begin(), a.companions.end());
  }
  return out;
}

struct LinkGroup {
  std::string workload, metric, unit;
  Params params;
  std::map<std::pair<int, int>, double> best;  // (gpus, nodes) -> best over sizes
};

std::string plateau_name(const LinkPlateau& p) {
  return gpus_text(p.gpus) + (p.nodes > 1 ? " on " + std::to_string(p.nodes) + " nodes" : "");
}

std::string limit_text(const LinkPlateau& p, const Link& link) {
  if (!p.fraction) return "";
  return percent(*p.fraction) + " of " + (link.name == "PCIe" ? "the PCIe " + link.detail + " link" : link.name) +
         "'s " + number(link.GBps) + " GB/s per GPU" +
         (link.name == "PCIe" || link.detail.empty() ? "" : " (" + link.detail + ")");
}

// How the one-node plateau changes from the fewest to the most GPUs.
std::string trend_text(const std::vector<LinkPlateau>& node) {
  if (node.size() < 2) return "";
  const LinkPlateau& a = node.front();
  const LinkPlateau& b = node.back();
  const std::string range = " from " + std::to_string(a.gpus) + " to " + gpus_text(b.gpus) +
                            " (" + number(a.GBps) + " -> " + number(b.GBps) + " GB/s)";
  if (b.GBps >= 0.9 * a.GBps) return " It holds" + range + ".";
  return " It falls by " + percent(1.0 - b.GBps / a.GBps) + range + ".";
}

void judge(RunVerdict& v, const Link& node, const Link& net) {
  std::vector<LinkPlateau> one_node, nodes;
  for (const LinkPlateau& p : v.plateaus) (p.nodes > 1 ? nodes : one_node).push_back(p);
  std::vector<std::string> list;
  for (const LinkPlateau& p : v.plateaus) list.push_back(plateau_name(p) + " " + number(p.GBps));
  v.text += "bus bandwidth (best over message sizes, GB/s) " + join_words(list) + ".";
  if (!one_node.empty()) {
    const LinkPlateau& top = one_node.back();
    if (top.fraction) {
      const bool bound = *top.fraction >= kLinkBoundFraction;
      v.binding = bound ? kBindingLink : kBindingLinkPath;
      v.text += " At " + gpus_text(top.gpus) + " that is " + limit_text(top, node) + ": " +
                (bound ? node.name + " binds."
                       : "the path between the GPUs binds, not the link's speed.");
      v.next_step = bound ? (node.name == "PCIe" ? "GPUs connected by NVLink" : "")
                          : "check the topology and the links (mgbench doctor): GPUs under one "
                            "PCIe switch or on NVLink, every link up, peer-to-peer enabled";
    }
    v.text += trend_text(one_node);
  }
  if (!nodes.empty()) {
    const LinkPlateau& top = nodes.back();
    v.binding = kBindingNetwork;
    v.text += " Between nodes " + number(top.GBps) + " GB/s at " + plateau_name(top) +
              (top.fraction ? ", " + limit_text(top, net) : "") +
              (one_node.empty() ? "" : ", " + percent(top.GBps / one_node.back().GBps) +
                                           " of one node's") +
              ": the network binds" + (net.GBps > 0 ? "" : " (its rate is not recorded in this run)") +
              ".";
    v.next_step = "a faster network between the nodes (one NIC per GPU, GPUDirect RDMA)";
  }
  if (!v.next_step.empty()) v.text += " Next: " + v.next_step + ".";
}

}  // namespace

std::vector<RunVerdict> compute_link_verdicts(const RunResult& run) {
  const ThroughputLookup lookup = presentation_throughput(run);
  std::map<std::pair<std::string, std::string>, LinkGroup> groups;
  std::set<std::string> defined_alone, undefined_alone;
  std::map<std::string, std::set<std::string>> sizes;  // per workload, looked up once
  std::map<std::string, std::optional<ThroughputMetric>> metrics;
  for (const PointResult& p : run.points) {
    if (p.status != Status::ok) continue;
    auto found = metrics.find(p.workload);
    if (found == metrics.end()) found = metrics.emplace(p.workload, lookup(p.workload)).first;
    const std::optional<ThroughputMetric>& metric = found->second;
    if (!metric) continue;
    const auto x = metric_number(p, metric->name);
    if (p.gpus == 1) {
      (x ? defined_alone : undefined_alone).insert(p.workload);
      continue;
    }
    if (!x || !(*x > 0)) continue;
    Params params = p.params;
    auto size = sizes.find(p.workload);
    if (size == sizes.end()) {
      size = sizes.emplace(p.workload, size_params(presentation_for(run, p.workload))).first;
    }
    for (const std::string& key : size->second) params.erase(key);
    LinkGroup& g = groups[{p.workload, params.dump()}];
    g.workload = p.workload;
    g.metric = metric->name;
    g.unit = metric->unit;
    g.params = params;
    double& best = g.best[{p.gpus, std::max(1, p.placement.nodes)}];
    best = std::max(best, *x);
  }
  std::vector<ScalingSeries> labels;  // for verdict_label: workload and params
  for (const auto& entry : groups) {
    ScalingSeries s;
    s.workload = entry.second.workload;
    s.params = entry.second.params;
    labels.push_back(s);
  }
  const Link node = node_link(run.environment), net = network_link(run.environment);
  std::vector<RunVerdict> out;
  std::size_t i = 0;
  for (const auto& [key, g] : groups) {
    const ScalingSeries& s = labels[i++];
    if (defined_alone.count(g.workload) || !undefined_alone.count(g.workload)) continue;
    RunVerdict v;
    v.kind = "link";
    v.workload = g.workload;
    v.params = g.params;
    v.metric = g.metric;
    v.unit = g.unit;
    for (const auto& [at, GBps] : g.best) {
      const Link& link = at.second > 1 ? net : node;
      LinkPlateau p{at.first, at.second, GBps, link.name, std::nullopt};
      if (link.GBps > 0) p.fraction = GBps / link.GBps;
      v.plateaus.push_back(p);
      v.gpus_max = std::max(v.gpus_max, at.first);
    }
    const std::string label = verdict_label(s, labels);
    v.text = g.workload + (label.empty() ? "" : " " + label) + ": ";
    judge(v, node, net);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace mgbench
