#pragma once
// The cost of a collective as latency + size / bandwidth with the algorithm's step count (the
// alpha-beta model): on one flat group of n ranks over one link of bandwidth B (per GPU and
// direction) and hop latency alpha,
//   t = steps x alpha + volume x S / B,
// S counted as nccl-tests counts it (all-reduce/broadcast/reduce: the buffer; all-gather: the
// output; reduce-scatter: the input).
//
//   algorithm  collective                  steps            volume
//   ring       all-reduce                  2(n-1)           2(n-1)/n
//   ring       all-gather, reduce-scatter  n-1              (n-1)/n
//   ring       broadcast, reduce           n-1              1      (pipelined chain)
//   tree       all-reduce                  2 ceil(log2 n)   2      (pipelined double binary tree)
//   tree       broadcast, reduce           ceil(log2 n)     1
//   nvls       all-reduce                  1                (n+1)/n  on B x nvls_efficiency
//   nvls       all-gather, reduce-scatter  1                1        on B x nvls_efficiency
// NVLS (NVLink SHARP, the switch reduces and multicasts) takes one switch round trip
// (Link::nvls_latency_us) instead of hop latencies.
//
// Several nodes (M nodes of g GPUs, N = g M ranks, one NIC per GPU):
//   ring          one ring through all N ranks, pipelined: the volume of N ranks over
//                 min(B_intra, g B_inter) (each of the g rings leaves a node through its own
//                 NIC), latency (steps - s_net) alpha_intra + s_net alpha_inter with s_net the
//                 network hops of a chunk (2(M-1) for all-reduce, M-1 otherwise);
//   hierarchical  all-reduce: intra-node reduce-scatter (S over g), inter-node all-reduce (S/g
//                 over M, ring or tree, g rails in parallel), intra-node all-gather (S over g),
//                 one after the other; all-gather: inter-node then intra-node all-gather;
//                 reduce-scatter: intra-node then inter-node reduce-scatter.
// The fastest algorithm the topology allows is taken, as NCCL's tuner picks per size.
// A new collective plugs in with its row above (step_count) and, for several nodes, its phases
// (hierarchical_time in collective_model.cpp).
#include <optional>
#include <string>

#include "mgbench/analysis/links.hpp"
#include "mgbench/model/work_cost.hpp"

namespace mgbench {

enum class CollectiveAlgorithm { ring, tree, nvls, hierarchical };
const char* to_string(CollectiveAlgorithm algorithm);

struct StepCount {
  double steps = 0;   // latency steps
  double volume = 0;  // bandwidth term, in units of S / B
};

// The table above for one flat group (ring, tree, nvls); nullopt when the algorithm does not
// implement the collective, or for hierarchical (which is not a flat algorithm).
std::optional<StepCount> step_count(CollectiveKind kind, CollectiveAlgorithm algorithm, int ranks);

// The network hops of one chunk in a ring through `nodes` nodes: 2(M-1) for an all-reduce,
// M-1 otherwise.
double network_hops(CollectiveKind kind, int nodes);

// nccl-tests' bus bandwidth factor: busbw = S / t x bus_factor (all-reduce 2(n-1)/n,
// all-gather and reduce-scatter (n-1)/n, broadcast and reduce 1).
double bus_factor(CollectiveKind kind, int ranks);

// Seconds on one flat group of `ranks` over `link`; nullopt when the algorithm does not
// implement the collective or the link has no NVLS. 0 for one rank.
std::optional<double> flat_time(CollectiveKind kind, CollectiveAlgorithm algorithm, double bytes,
                                int ranks, const Link& link);

struct Topology {
  int gpus = 1;
  int gpus_per_node = 1;  // a group of at most this many GPUs runs on one node
  Link intra, inter;
  bool nvls = false;  // NVLink SHARP allowed (where the intra-node link has it)
  // The hierarchical scheme may be taken across nodes. Off where the network was calibrated on
  // the run's own multi-node points: they show what NCCL runs there (its ring's bound), and a
  // scheme NCCL does not run would predict those very points faster than they were measured.
  bool hierarchical = true;
  int nodes() const;  // ceil(gpus / gpus_per_node)
};

struct CollectiveTime {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  double seconds = 0;
  double intra_s = 0;  // the part of `seconds` spent on intra-node links
  double inter_s = 0;  // ... and on the network (intra_s + inter_s = seconds)
};

// The fastest algorithm on `topology`, or the one asked for (nullopt when it does not apply).
CollectiveTime collective_time(CollectiveKind kind, double bytes, const Topology& topology);
std::optional<CollectiveTime> collective_time(CollectiveKind kind, double bytes,
                                              const Topology& topology,
                                              CollectiveAlgorithm algorithm);

}  // namespace mgbench
