// Fleet outliers: robust standings among peers, the blame for slow pairs, and a screen's
// findings (fleet.hpp, docs/SCREEN.md).
#include "mgbench/analysis/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "mgbench/model/stats.hpp"

namespace mgbench {

std::vector<PeerStanding> peer_standings(const std::vector<double>& values,
                                         const FleetThresholds& thresholds) {
  std::vector<PeerStanding> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i].value = values[i];
  if (values.size() < 2) return out;
  std::vector<double> better(values);
  std::sort(better.begin(), better.end(), std::greater<double>());
  better.resize((better.size() + 1) / 2);
  const double reference = median_of(better);
  std::vector<double> deviation;
  for (double v : better) deviation.push_back(std::fabs(v - reference));
  const double scale = 1.4826 * median_of(deviation);
  for (PeerStanding& s : out) {
    s.reference = reference;
    s.gap = reference > 0 ? 1.0 - s.value / reference : 0.0;
    const double below = reference - s.value;
    s.z = below <= 0 ? 0.0 : scale > 0 ? below / scale : std::numeric_limits<double>::infinity();
    s.outlier = s.gap > thresholds.gap && s.z > thresholds.robust_z;
  }
  return out;
}

const char* to_string(PairBlame blame) {
  switch (blame) {
    case PairBlame::none: return "none";
    case PairBlame::first: return "first";
    case PairBlame::second: return "second";
    case PairBlame::both: return "both";
    case PairBlame::link: return "link";
    case PairBlame::unclear: return "unclear";
  }
  return "none";
}

std::vector<PairBlame> judge_pairs(const std::vector<std::pair<int, int>>& pairs,
                                   const std::vector<PeerStanding>& standings,
                                   const std::set<int>& known_slow) {
  std::map<int, std::set<int>> partners;
  std::map<int, int> joined, flagged;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto [a, b] = pairs[i];
    partners[a].insert(b);
    partners[b].insert(a);
    const bool bad = i < standings.size() && standings[i].outlier;
    for (int m : {a, b}) {
      joined[m] += 1;
      flagged[m] += bad ? 1 : 0;
    }
  }
  // Slow on its own: known so, or slow with every partner (two or more of them).
  auto slow = [&](int m) {
    return known_slow.count(m) != 0 || (partners[m].size() >= 2 && flagged[m] == joined[m]);
  };
  std::vector<PairBlame> out(pairs.size(), PairBlame::none);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (i >= standings.size() || !standings[i].outlier) continue;
    const auto [a, b] = pairs[i];
    const bool sa = slow(a), sb = slow(b);
    if (sa || sb) {
      out[i] = sa && sb ? PairBlame::both : sa ? PairBlame::first : PairBlame::second;
    } else {
      out[i] = partners[a].size() >= 2 && partners[b].size() >= 2 ? PairBlame::link
                                                                    : PairBlame::unclear;
    }
  }
  return out;
}

double ScreenFinding::severity() const { return kind == kFindingNodeFailed ? 2.0 : gap; }

namespace {

bool is_gpu(const ScreenFigure& f) { return f.node >= 0 && f.gpu >= 0 && f.peer < 0; }
bool is_gpu_pair(const ScreenFigure& f) { return f.node >= 0 && f.gpu >= 0 && f.peer >= 0; }
bool is_node(const ScreenFigure& f) { return f.node >= 0 && f.gpu < 0 && f.peer < 0; }
bool is_node_pair(const ScreenFigure& f) { return f.node >= 0 && f.gpu < 0 && f.peer >= 0; }

std::string figure(double value, const std::string& unit) {
  return fmt::format("{:.4g}{}", value, unit.empty() ? "" : " " + unit);
}

std::string percent(double fraction) { return fmt::format("{:.1f} %", fraction * 100.0); }

// "612 TFLOP/s, 9.1 % below its peers' 673"
std::string below_peers(double value, const PeerStanding& s, const std::string& unit) {
  return fmt::format("{}, {} below its peers' {:.4g}", figure(value, unit), percent(s.gap),
                     s.reference);
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& items) {
  for (const auto& item : items) {
    if (std::find(to.begin(), to.end(), item) == to.end()) to.push_back(item);
  }
}

// The figures of one kind, by metric and like-for-like group, in the section's order, of the
// nodes still standing.
using FigureGroups = std::map<std::pair<std::string, std::string>, std::vector<const ScreenFigure*>>;

class Finder {
 public:
  Finder(const ScreenSection& s, const std::vector<PointResult>& points) : s_(s) {
    for (const auto& p : points) points_[p.index] = &p;
  }

  std::vector<ScreenFinding> run() {
    failed_nodes();
    gpus();
    nodes();
    gpu_pairs();
    node_pairs();
    std::stable_sort(out_.begin(), out_.end(), [](const ScreenFinding& a, const ScreenFinding& b) {
      return a.severity() > b.severity();
    });
    return out_;
  }

 private:
  const PointResult* point(std::size_t index) const {
    const auto it = points_.find(index);
    return it == points_.end() ? nullptr : it->second;
  }
  bool node_up(int node) const {
    return node >= 0 && node < static_cast<int>(s_.nodes.size()) &&
           s_.nodes[static_cast<std::size_t>(node)].status == "ok";
  }
  const ScreenNode& node(int index) const { return s_.nodes.at(static_cast<std::size_t>(index)); }

  FigureGroups groups(bool (*kind)(const ScreenFigure&)) const {
    FigureGroups out;
    for (const auto& f : s_.figures) {
      if (!kind(f) || !node_up(f.node) || (f.peer >= 0 && is_node_pair(f) && !node_up(f.peer))) {
        continue;
      }
      out[{f.metric, f.group}].push_back(&f);
    }
    return out;
  }

  static std::vector<PeerStanding> standings(const std::vector<const ScreenFigure*>& figures,
                                             const FleetThresholds& t) {
    std::vector<double> values;
    for (const auto* f : figures) values.push_back(f->value);
    return peer_standings(values, t);
  }

  ScreenFinding make(const char* kind, const ScreenFigure& f, double value,
                     const PeerStanding& s) const {
    ScreenFinding x;
    x.kind = kind;
    x.node = f.node;
    x.gpu = f.gpu;
    x.peer = f.peer;
    x.stage = f.stage;
    x.metric = f.metric;
    x.unit = f.unit;
    x.value = value;
    x.reference = s.reference;
    x.gap = s.reference > 0 ? 1.0 - value / s.reference : 0.0;
    return x;
  }

  void failed_nodes() {
    for (std::size_t i = 0; i < s_.nodes.size(); ++i) {
      const ScreenNode& n = s_.nodes[i];
      if (n.status == "ok") continue;
      ScreenFinding x;
      x.kind = kFindingNodeFailed;
      x.node = static_cast<int>(i);
      x.text = n.message;
      x.gap = 1.0;
      out_.push_back(std::move(x));
    }
  }

  void gpus();
  void nodes();
  void gpu_pairs();
  void node_pairs();
  std::set<int> slow_nodes() const;

  const ScreenSection& s_;
  std::map<std::size_t, const PointResult*> points_;
  std::vector<ScreenFinding> out_;
};

// GPUs below their peers; a node whose every GPU is below them is one node finding.
void Finder::gpus() {
  for (const auto& [key, figures] : groups(is_gpu)) {
    const auto st = standings(figures, s_.thresholds);
    std::map<int, std::vector<std::size_t>> by_node, flagged;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      by_node[figures[i]->node].push_back(i);
      if (st[i].outlier) flagged[figures[i]->node].push_back(i);
    }
    for (const auto& [n, list] : flagged) {
      if (list.size() >= 2 && list.size() == by_node[n].size()) {
        std::vector<double> values;
        std::vector<std::string> evidence;
        for (std::size_t i : list) {
          values.push_back(figures[i]->value);
          add_unique(evidence,
                     gpu_evidence(node(n), point(figures[i]->point), figures[i]->gpu, false));
        }
        ScreenFinding x = make(kFindingNode, *figures[list.front()], median_of(values),
                               st[list.front()]);
        x.gpu = -1;
        x.text = fmt::format("{}: all {} GPUs below their peers, median {}, {} below {:.4g}",
                             key.first, list.size(), figure(x.value, x.unit), percent(x.gap),
                             x.reference);
        add_unique(evidence, node_evidence(node(n)));
        x.evidence = std::move(evidence);
        out_.push_back(std::move(x));
        continue;
      }
      for (std::size_t i : list) {
        const ScreenFigure& f = *figures[i];
        ScreenFinding x = make(kFindingGpu, f, f.value, st[i]);
        x.text = key.first + " " + below_peers(f.value, st[i], f.unit);
        x.evidence = gpu_evidence(node(n), point(f.point), f.gpu, false);
        add_unique(x.evidence, node_evidence(node(n)));
        out_.push_back(std::move(x));
      }
    }
  }
}

// A node's own figures (its GPUs together) below the other nodes'.
void Finder::nodes() {
  for (const auto& [key, figures] : groups(is_node)) {
    const auto st = standings(figures, s_.thresholds);
    for (std::size_t i = 0; i < figures.size(); ++i) {
      if (!st[i].outlier) continue;
      const ScreenFigure& f = *figures[i];
      ScreenFinding x = make(kFindingNode, f, f.value, st[i]);
      x.text = key.first + " " + below_peers(f.value, st[i], f.unit);
      for (int g = 0; g < node(f.node).gpus; ++g) {
        add_unique(x.evidence, gpu_evidence(node(f.node), point(f.point), g, true));
      }
      add_unique(x.evidence, node_evidence(node(f.node)));
      out_.push_back(std::move(x));
    }
  }
}

// Why a figure is low: below its peers, or failed.
std::string describe(const ScreenFigure& f, const PeerStanding& s) {
  return f.message.empty() ? below_peers(f.value, s, f.unit) : "failed: " + f.message;
}

// The values of `member`'s pairs among `list` (indices into figures).
double member_median(const std::vector<const ScreenFigure*>& figures,
                     const std::vector<std::size_t>& list, int member, bool nodes) {
  std::vector<double> values;
  for (std::size_t i : list) {
    const ScreenFigure& f = *figures[i];
    const int a = nodes ? f.node : f.gpu;
    if (a == member || f.peer == member) values.push_back(f.value);
  }
  return median_of(values);
}

std::vector<int> blamed(PairBlame blame, int first, int second) {
  switch (blame) {
    case PairBlame::first: return {first};
    case PairBlame::second: return {second};
    case PairBlame::both: return {first, second};
    default: return {};
  }
}

// The GPU pairs of each node (the p2p matrix): a GPU slow to every peer, or one pair's link.
void Finder::gpu_pairs() {
  for (const auto& [key, figures] : groups(is_gpu_pair)) {
    const auto st = standings(figures, s_.thresholds);
    std::map<int, std::vector<std::size_t>> by_node;
    for (std::size_t i = 0; i < figures.size(); ++i) by_node[figures[i]->node].push_back(i);
    for (const auto& [n, list] : by_node) {
      std::vector<std::pair<int, int>> pairs;
      std::vector<PeerStanding> mine;
      for (std::size_t i : list) {
        pairs.emplace_back(figures[i]->gpu, figures[i]->peer);
        mine.push_back(st[i]);
      }
      const auto blame = judge_pairs(pairs, mine, {});
      std::set<int> told;
      for (std::size_t k = 0; k < list.size(); ++k) {
        const ScreenFigure& f = *figures[list[k]];
        if (blame[k] == PairBlame::link || blame[k] == PairBlame::unclear) {
          ScreenFinding x = make(kFindingGpuLink, f, f.value, mine[k]);
          x.text = fmt::format("{} GPU {} -> GPU {}: {}; {}", key.first, f.gpu, f.peer,
                               describe(f, mine[k]),
                               blame[k] == PairBlame::link
                                   ? "both GPUs are fine with their other peers: the link "
                                     "between them"
                                   : "the link between them or either GPU");
          x.evidence = link_evidence(node(n), f.gpu, f.peer);
          out_.push_back(std::move(x));
          continue;
        }
        for (int m : blamed(blame[k], f.gpu, f.peer)) {
          if (!told.insert(m).second) continue;
          ScreenFinding x = make(kFindingGpu, f, member_median(figures, list, m, false), mine[k]);
          x.gpu = m;
          x.peer = -1;
          x.text = fmt::format("{}: slow to every peer, median {}, {} below {:.4g}", key.first,
                               figure(x.value, x.unit), percent(x.gap), x.reference);
          x.evidence = gpu_evidence(node(n), point(f.point), m, true);
          out_.push_back(std::move(x));
        }
      }
    }
  }
}

// The node pairs of stage 3: a node slow in every pair it joined (its network), or the link
// between two nodes that are fine with every other partner.
void Finder::node_pairs() {
  const std::set<int> known = slow_nodes();
  for (const auto& [key, figures] : groups(is_node_pair)) {
    const auto st = standings(figures, s_.thresholds);
    std::vector<std::pair<int, int>> pairs;
    std::vector<std::size_t> all;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      pairs.emplace_back(figures[i]->node, figures[i]->peer);
      all.push_back(i);
    }
    const auto blame = judge_pairs(pairs, st, known);
    std::set<int> told;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      const ScreenFigure& f = *figures[i];
      if (blame[i] == PairBlame::link || blame[i] == PairBlame::unclear) {
        ScreenFinding x = make(kFindingNodeLink, f, f.value, st[i]);
        x.text = fmt::format("{} with {}: {}; {}", key.first, node(f.peer).host, describe(f, st[i]),
                             blame[i] == PairBlame::link
                                 ? "both nodes are fine in their other pairs: the link or "
                                   "switch port between them"
                                 : "no other pair tells: the link between them or either node");
        out_.push_back(std::move(x));
        continue;
      }
      for (int m : blamed(blame[i], f.node, f.peer)) {
        if (known.count(m) != 0 || !told.insert(m).second) continue;
        ScreenFinding x = make(kFindingNodeNetwork, f, member_median(figures, all, m, true), st[i]);
        x.node = m;
        x.peer = -1;
        x.text = fmt::format("{}: slow in every pair it joined, median {}, {} below {:.4g}: its "
                             "network (NIC, cable or switch port)",
                             key.first, figure(x.value, x.unit), percent(x.gap), x.reference);
        x.evidence = node_evidence(node(m));
        out_.push_back(std::move(x));
      }
    }
  }
}

std::set<int> Finder::slow_nodes() const {
  std::set<int> slow;
  for (const auto& x : out_) {
    if (x.kind == kFindingNode || x.kind == kFindingNodeFailed) slow.insert(x.node);
  }
  return slow;
}

}  // namespace

std::vector<ScreenFinding> find_fleet_outliers(const ScreenSection& screen,
                                               const std::vector<PointResult>& points) {
  return Finder(screen, points).run();
}

}  // namespace mgbench
