// `mgbench screen`'s heat maps (screen_render.hpp): every figure against its metric's reference.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/core/text.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/reports/screen_render.hpp"

namespace mgbench::reports {

namespace {

constexpr std::size_t kMaxGpuRows = 256;
constexpr std::size_t kMaxMatrices = 8;

// The reference of each (metric, group): the median of the better half of its figures.
using Key = std::pair<std::string, std::string>;
std::map<Key, double> references(const ScreenSection& s) {
  std::map<Key, std::vector<double>> values;
  for (const auto& f : s.figures) values[{f.metric, f.group}].push_back(f.value);
  std::map<Key, double> out;
  for (const auto& [key, v] : values) {
    const auto st = peer_standings(v, s.thresholds);
    out[key] = v.size() >= 2 ? st.front().reference : v.front();
  }
  return out;
}

svg::HeatMap ramp_for(const ScreenSection& s, std::string id, std::string title) {
  svg::HeatMap map;
  map.id = std::move(id);
  map.title = std::move(title);
  const double span = std::max(0.2, 4 * s.thresholds.gap);
  map.low = 1.0 - span;
  map.high = 1.0;
  map.low_label = fmt::format("{:.0f} % below or more", span * 100.0);
  map.high_label = "at the reference";
  return map;
}

// "-9.1 %", "+0.4 %", "0.0 %" (no sign on what rounds to nothing).
std::string change_text(double ratio) {
  const double pct = (ratio - 1.0) * 100.0;
  return std::fabs(pct) < 0.05 ? "0.0 %" : fmt::format("{:+.1f} %", pct);
}

// A cell: the ratio to the reference, its text and tooltip.
void put(svg::HeatMap& map, std::size_t r, std::size_t c, double value, double reference,
         const std::string& unit, const std::string& what) {
  if (!(reference > 0)) return;
  const double ratio = value / reference;
  map.values[r][c] = ratio;
  map.text[r][c] = change_text(ratio);
  map.titles[r][c] = fmt::format("{}: {:.4g} {} against {:.4g}", what, value, unit, reference);
}

void size_grid(svg::HeatMap& map) {
  map.values.assign(map.rows.size(), std::vector<std::optional<double>>(map.columns.size()));
  map.text.assign(map.rows.size(), std::vector<std::string>(map.columns.size()));
  map.titles = map.text;
}

std::vector<std::string> metrics_in_order(const ScreenSection& s, bool (*keep)(const ScreenFigure&)) {
  std::vector<std::string> out;
  for (const auto& f : s.figures) {
    if (keep(f) && std::find(out.begin(), out.end(), f.metric) == out.end()) {
      out.push_back(f.metric);
    }
  }
  return out;
}

bool any_node_figure(const ScreenFigure& f) { return f.node >= 0; }
bool gpu_figure(const ScreenFigure& f) { return f.node >= 0 && f.gpu >= 0 && f.peer < 0; }
bool pair_of_gpus(const ScreenFigure& f) { return f.node >= 0 && f.gpu >= 0 && f.peer >= 0; }

std::string host_of(const ScreenSection& s, int node) {
  return one_line(s.nodes.at(static_cast<std::size_t>(node)).host);
}

// Nodes x metrics: a node's median over its figures of each metric (its GPUs, its own figure,
// its pairs with other nodes, its p2p matrix), against the metric's reference.
svg::HeatMap nodes_map(const ScreenSection& s, const std::map<Key, double>& refs) {
  svg::HeatMap map = ramp_for(s, "screen-nodes", "nodes x metrics");
  map.subtitle = "each node's median figure against the metric's reference";
  map.columns = metrics_in_order(s, any_node_figure);
  for (const auto& n : s.nodes) map.rows.push_back(one_line(n.host));
  size_grid(map);
  for (std::size_t c = 0; c < map.columns.size(); ++c) {
    std::map<int, std::vector<double>> ratios, values;
    for (const auto& f : s.figures) {
      if (f.metric != map.columns[c] || f.node < 0) continue;
      const double ref = refs.at({f.metric, f.group});
      if (!(ref > 0)) continue;
      for (int n : {f.node, f.gpu < 0 ? f.peer : -1}) {
        if (n < 0) continue;
        ratios[n].push_back(f.value / ref);
        values[n].push_back(f.value);
      }
    }
    for (const auto& [n, r] : ratios) {
      if (static_cast<std::size_t>(n) >= map.rows.size()) continue;
      const double ratio = median_of(r);
      put(map, static_cast<std::size_t>(n), c, ratio, 1.0, "", "");
      map.titles[static_cast<std::size_t>(n)][c] =
          fmt::format("{} on {}: median {:.4g} over {} figure(s), {:+.1f} % from the reference",
                      map.columns[c], map.rows[static_cast<std::size_t>(n)], median_of(values[n]),
                      r.size(), (ratio - 1.0) * 100.0);
    }
  }
  for (std::size_t n = 0; n < s.nodes.size(); ++n) {
    if (s.nodes[n].status == "ok") continue;
    for (auto& cell : map.text[n]) cell = "failed";
  }
  return map;
}

// GPUs x metrics (stage 1): every GPU against its metric's reference.
svg::HeatMap gpus_map(const ScreenSection& s, const std::map<Key, double>& refs) {
  svg::HeatMap map = ramp_for(s, "screen-gpus", "GPUs x metrics");
  map.subtitle = "every GPU's own figure against the metric's reference";
  map.columns = metrics_in_order(s, gpu_figure);
  std::map<std::pair<int, int>, std::size_t> row_of;
  for (const auto& f : s.figures) {
    if (!gpu_figure(f) || row_of.count({f.node, f.gpu}) != 0) continue;
    row_of[{f.node, f.gpu}] = 0;
  }
  for (auto& [key, row] : row_of) {
    row = map.rows.size();
    map.rows.push_back(fmt::format("{} GPU {}", host_of(s, key.first), key.second));
  }
  size_grid(map);
  for (const auto& f : s.figures) {
    if (!gpu_figure(f)) continue;
    const auto c = static_cast<std::size_t>(
        std::find(map.columns.begin(), map.columns.end(), f.metric) - map.columns.begin());
    put(map, row_of.at({f.node, f.gpu}), c, f.value, refs.at({f.metric, f.group}), f.unit,
        f.metric);
  }
  return map;
}

// One node's p2p matrix (GPU x GPU) of `metric`.
svg::HeatMap matrix_map(const ScreenSection& s, const std::map<Key, double>& refs, int node,
                        const std::string& metric) {
  svg::HeatMap map = ramp_for(s, fmt::format("screen-p2p-{}", node),
                              fmt::format("{} on {}", metric, host_of(s, node)));
  map.subtitle = "row: from GPU, column: to GPU; each pair against the reference of its path";
  int gpus = 0;
  for (const auto& f : s.figures) {
    if (f.node == node && f.metric == metric && pair_of_gpus(f)) {
      gpus = std::max({gpus, f.gpu + 1, f.peer + 1});
    }
  }
  for (int g = 0; g < gpus; ++g) map.rows.push_back(fmt::format("GPU {}", g));
  map.columns = map.rows;
  size_grid(map);
  for (const auto& f : s.figures) {
    if (f.node != node || f.metric != metric || !pair_of_gpus(f)) continue;
    const auto r = static_cast<std::size_t>(f.gpu), c = static_cast<std::size_t>(f.peer);
    put(map, r, c, f.value, refs.at({f.metric, f.group}), f.unit,
        fmt::format("GPU {} -> GPU {}", f.gpu, f.peer));
    map.text[r][c] = fmt::format("{:.0f}", f.value);
  }
  return map;
}

}  // namespace

std::vector<svg::HeatMap> screen_heat_maps(const ScreenSection& s) {
  std::vector<svg::HeatMap> out;
  if (s.figures.empty()) return out;
  const auto refs = references(s);
  out.push_back(nodes_map(s, refs));
  svg::HeatMap gpus = gpus_map(s, refs);
  if (!gpus.rows.empty() && gpus.rows.size() <= kMaxGpuRows) out.push_back(std::move(gpus));
  // The p2p matrices: the nodes with a finding on one first.
  std::vector<std::pair<int, std::string>> matrices;
  std::set<std::pair<int, std::string>> seen;
  for (const auto& f : s.findings) {
    if (f.kind == kFindingGpuLink && seen.insert({f.node, f.metric}).second) {
      matrices.emplace_back(f.node, f.metric);
    }
  }
  for (const auto& f : s.figures) {
    if (pair_of_gpus(f) && seen.insert({f.node, f.metric}).second) {
      matrices.emplace_back(f.node, f.metric);
    }
  }
  for (std::size_t i = 0; i < matrices.size() && i < kMaxMatrices; ++i) {
    out.push_back(matrix_map(s, refs, matrices[i].first, matrices[i].second));
  }
  return out;
}

}  // namespace mgbench::reports
