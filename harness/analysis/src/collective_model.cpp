// The alpha-beta cost of collectives (see collective_model.hpp).
#include "mgbench/analysis/collective_model.hpp"

#include <algorithm>
#include <cmath>

namespace mgbench {

namespace {

constexpr double kUs = 1e-6;
constexpr double kGB = 1e9;

double ceil_log2(int n) { return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n))); }

bool is_all_reduce(CollectiveKind kind) { return kind == CollectiveKind::all_reduce; }
bool is_gather_or_scatter(CollectiveKind kind) {
  return kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter;
}

bool nvls_allowed(const Topology& t) { return t.nvls && t.intra.nvls_efficiency > 0; }

// The fastest flat algorithm for one group over one link.
double best_flat(CollectiveKind kind, double bytes, int ranks, const Link& link, bool nvls) {
  double best = *flat_time(kind, CollectiveAlgorithm::ring, bytes, ranks, link);
  for (auto algorithm : {CollectiveAlgorithm::tree, CollectiveAlgorithm::nvls}) {
    if (algorithm == CollectiveAlgorithm::nvls && !nvls) continue;
    if (const auto t = flat_time(kind, algorithm, bytes, ranks, link)) best = std::min(best, *t);
  }
  return best;
}

CollectiveTime ring_across_nodes(CollectiveKind kind, double bytes, const Topology& t) {
  const int nodes = t.nodes();
  const StepCount sc = *step_count(kind, CollectiveAlgorithm::ring, t.gpus);
  const double net_steps = network_hops(kind, nodes);
  CollectiveTime out;
  out.algorithm = CollectiveAlgorithm::ring;
  if (t.gpus_per_node <= 1) {
    out.inter_s = sc.steps * t.inter.hop_latency_us * kUs +
                  sc.volume * bytes / (t.inter.bandwidth_GBps * kGB);
  } else {
    const double rails = t.gpus_per_node * t.inter.bandwidth_GBps;
    const double bandwidth_s = sc.volume * bytes / (std::min(t.intra.bandwidth_GBps, rails) * kGB);
    out.intra_s = (sc.steps - net_steps) * t.intra.hop_latency_us * kUs;
    out.inter_s = net_steps * t.inter.hop_latency_us * kUs;
    (rails <= t.intra.bandwidth_GBps ? out.inter_s : out.intra_s) += bandwidth_s;
  }
  out.seconds = out.intra_s + out.inter_s;
  return out;
}

std::optional<CollectiveTime> hierarchical(CollectiveKind kind, double bytes, const Topology& t) {
  const int g = t.gpus_per_node;
  const int nodes = t.nodes();
  if (g <= 1 || !(is_all_reduce(kind) || is_gather_or_scatter(kind))) return std::nullopt;
  const bool nvls = nvls_allowed(t);
  const double rail_bytes = bytes / g;
  CollectiveTime out;
  out.algorithm = CollectiveAlgorithm::hierarchical;
  if (kind == CollectiveKind::all_reduce) {
    out.intra_s = best_flat(CollectiveKind::reduce_scatter, bytes, g, t.intra, nvls) +
                  best_flat(CollectiveKind::all_gather, bytes, g, t.intra, nvls);
    out.inter_s = best_flat(CollectiveKind::all_reduce, rail_bytes, nodes, t.inter, false);
  } else {
    out.intra_s = best_flat(kind, bytes, g, t.intra, nvls);
    out.inter_s = best_flat(kind, rail_bytes, nodes, t.inter, false);
  }
  out.seconds = out.intra_s + out.inter_s;
  return out;
}

}  // namespace

const char* to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::ring:
      return "ring";
    case CollectiveAlgorithm::tree:
      return "tree";
    case CollectiveAlgorithm::nvls:
      return "nvls";
    case CollectiveAlgorithm::hierarchical:
      return "hierarchical";
  }
  return "?";
}

std::optional<StepCount> step_count(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks) {
  const double n = std::max(ranks, 1);
  const bool single = ranks <= 1;
  switch (algorithm) {
    case CollectiveAlgorithm::ring:
      if (single) return StepCount{0, 0};
      if (is_all_reduce(kind)) return StepCount{2 * (n - 1), 2 * (n - 1) / n};
      if (is_gather_or_scatter(kind)) return StepCount{n - 1, (n - 1) / n};
      return StepCount{n - 1, 1};
    case CollectiveAlgorithm::tree:
      if (is_gather_or_scatter(kind)) return std::nullopt;
      if (single) return StepCount{0, 0};
      if (is_all_reduce(kind)) return StepCount{2 * ceil_log2(ranks), 2};
      return StepCount{ceil_log2(ranks), 1};
    case CollectiveAlgorithm::nvls:
      if (!is_all_reduce(kind) && !is_gather_or_scatter(kind)) return std::nullopt;
      if (single) return StepCount{0, 0};
      return StepCount{1, is_all_reduce(kind) ? (n + 1) / n : 1.0};
    case CollectiveAlgorithm::hierarchical:
      break;
  }
  return std::nullopt;
}

double bus_factor(CollectiveKind kind, int ranks) {
  const double n = std::max(ranks, 1);
  if (is_all_reduce(kind)) return 2 * (n - 1) / n;
  if (is_gather_or_scatter(kind)) return (n - 1) / n;
  return 1;
}

std::optional<double> flat_time(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                                int ranks, const Link& link) {
  const auto sc = step_count(kind, algorithm, ranks);
  if (!sc) return std::nullopt;
  if (algorithm == CollectiveAlgorithm::nvls) {
    if (link.nvls_efficiency <= 0) return std::nullopt;
    return sc->steps * link.nvls_latency_us * kUs +
           sc->volume * bytes / (link.bandwidth_GBps * link.nvls_efficiency * kGB);
  }
  return sc->steps * link.hop_latency_us * kUs + sc->volume * bytes / (link.bandwidth_GBps * kGB);
}

double network_hops(CollectiveKind kind, int nodes) {
  return (is_all_reduce(kind) ? 2.0 : 1.0) * (nodes - 1);
}

int Topology::nodes() const {
  const int per_node = std::max(gpus_per_node, 1);
  return (std::max(gpus, 1) + per_node - 1) / per_node;
}

std::optional<CollectiveTime> collective_time(CollectiveKind kind, double bytes,
                                              const Topology& topology,
                                              CollectiveAlgorithm algorithm) {
  if (topology.gpus <= 1) return CollectiveTime{algorithm, 0, 0, 0};
  if (topology.nodes() > 1) {
    if (algorithm == CollectiveAlgorithm::ring) return ring_across_nodes(kind, bytes, topology);
    if (algorithm == CollectiveAlgorithm::hierarchical) {
      return topology.hierarchical ? hierarchical(kind, bytes, topology) : std::nullopt;
    }
    return std::nullopt;  // tree and NVLS serve as the phases of hierarchical across nodes
  }
  if (algorithm == CollectiveAlgorithm::hierarchical) return std::nullopt;
  if (algorithm == CollectiveAlgorithm::nvls && !nvls_allowed(topology)) return std::nullopt;
  const auto seconds = flat_time(kind, algorithm, bytes, topology.gpus, topology.intra);
  if (!seconds) return std::nullopt;
  return CollectiveTime{algorithm, *seconds, *seconds, 0};
}

CollectiveTime collective_time(CollectiveKind kind, double bytes, const Topology& topology) {
  CollectiveTime best = *collective_time(kind, bytes, topology, CollectiveAlgorithm::ring);
  for (auto algorithm :
       {CollectiveAlgorithm::tree, CollectiveAlgorithm::nvls, CollectiveAlgorithm::hierarchical}) {
    const auto t = collective_time(kind, bytes, topology, algorithm);
    if (t && t->seconds < best.seconds) best = *t;
  }
  return best;
}

}  // namespace mgbench
