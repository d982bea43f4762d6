#include "mgbench/run/device_choice.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mgbench {
namespace {

using Score = std::pair<int, int>;  // worst pair, total

const std::string& label_at(const TopologyLabels& labels, int a, int b) {
  static const std::string unknown = "?";
  const auto i = static_cast<std::size_t>(a);
  const auto j = static_cast<std::size_t>(b);
  if (a < 0 || b < 0 || i >= labels.size() || j >= labels[i].size()) return unknown;
  return labels[i][j];
}

Score score_of(const std::vector<int>& set, const TopologyLabels& labels) {
  Score s{0, 0};
  for (std::size_t i = 0; i < set.size(); ++i) {
    for (std::size_t j = i + 1; j < set.size(); ++j) {
      const int c = link_cost(label_at(labels, set[i], set[j]));
      s.first = std::max(s.first, c);
      s.second += c;
    }
  }
  return s;
}

// Every n-subset in lexicographic order; the first best one wins ties.
std::vector<int> best_subset(const std::vector<int>& candidates, int n,
                             const TopologyLabels& labels) {
  const std::size_t m = candidates.size();
  std::vector<std::size_t> pick(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < pick.size(); ++i) pick[i] = i;
  std::vector<int> best;
  Score best_score{0, 0};
  while (true) {
    std::vector<int> set;
    for (std::size_t i : pick) set.push_back(candidates[i]);
    const Score s = score_of(set, labels);
    if (best.empty() || s < best_score) {
      best = set;
      best_score = s;
    }
    std::size_t k = pick.size();
    while (k > 0 && pick[k - 1] == m - pick.size() + k - 1) --k;
    if (k == 0) return best;
    ++pick[k - 1];
    for (std::size_t i = k; i < pick.size(); ++i) pick[i] = pick[i - 1] + 1;
  }
}

// Large machines: from each candidate as a seed, add the device that keeps the score lowest;
// the best of these sets wins.
std::vector<int> grow_from(std::size_t seed, const std::vector<int>& candidates, int n,
                           const TopologyLabels& labels) {
  std::vector<int> set{candidates[seed]};
  std::vector<int> rest = candidates;
  rest.erase(rest.begin() + static_cast<long>(seed));
  while (static_cast<int>(set.size()) < n) {
    auto best = rest.begin();
    Score best_score{0, 0};
    for (auto it = rest.begin(); it != rest.end(); ++it) {
      std::vector<int> trial = set;
      trial.push_back(*it);
      const Score s = score_of(trial, labels);
      if (it == rest.begin() || s < best_score) {
        best = it;
        best_score = s;
      }
    }
    set.push_back(*best);
    rest.erase(best);
  }
  std::sort(set.begin(), set.end());
  return set;
}

std::vector<int> greedy_subset(const std::vector<int>& candidates, int n,
                               const TopologyLabels& labels) {
  std::vector<int> best;
  Score best_score{0, 0};
  for (std::size_t seed = 0; seed < candidates.size(); ++seed) {
    auto set = grow_from(seed, candidates, n, labels);
    const Score s = score_of(set, labels);
    if (best.empty() || s < best_score) {
      best = std::move(set);
      best_score = s;
    }
  }
  return best;
}

double subsets(std::size_t m, std::size_t n) {
  double c = 1;
  for (std::size_t i = 0; i < n; ++i) {
    c = c * static_cast<double>(m - i) / static_cast<double>(i + 1);
  }
  return c;
}

}  // namespace

int link_cost(const std::string& label) {
  static const std::map<std::string, int> costs = {
      {"PIX", 2}, {"PXB", 3}, {"PHB", 4}, {"NODE", 5}, {"SYS", 6}};
  if (label.rfind("NV", 0) == 0 && label.size() > 2) return 1;
  const auto it = costs.find(label);
  return it == costs.end() ? 3 : it->second;
}

std::vector<int> choose_devices(const std::vector<int>& candidates, int n,
                                const TopologyLabels& labels) {
  if (n <= 0 || static_cast<std::size_t>(n) >= candidates.size()) {
    return {candidates.begin(),
            candidates.begin() + std::clamp<long>(n, 0, static_cast<long>(candidates.size()))};
  }
  const auto un = static_cast<std::size_t>(n);
  if (subsets(candidates.size(), un) <= 20000) return best_subset(candidates, n, labels);
  return greedy_subset(candidates, n, labels);
}

void apply_topology(Plan& plan, const TopologyLabels& labels) {
  std::map<std::size_t, std::vector<int>> chosen;  // by GPU count
  for (auto& g : plan.groups) {
    // Local thread groups only: a launcher's ranks may run on other hosts than the probed one.
    if (g.purpose != "scaling" || g.devices.size() < 2 || g.placement.nodes != 1 ||
        group_launcher(g.placement.launcher).processes_per_gpu()) {
      continue;
    }
    auto it = chosen.find(g.devices.size());
    if (it == chosen.end()) {
      auto set = choose_devices(plan.devices, static_cast<int>(g.devices.size()), labels);
      it = chosen.emplace(g.devices.size(), std::move(set)).first;
      if (it->second != g.devices) {
        plan.notes.push_back(fmt::format(
            "{}-GPU groups use GPUs {} (closest links by topology; --devices overrides)",
            g.devices.size(), fmt::join(it->second, ",")));
      }
    }
    g.devices = it->second;
  }
}

}  // namespace mgbench
