#pragma once
// Host-side arithmetic of the data-path workloads (membw, h2d, p2p), shared by the workloads,
// their run summaries and the tests (no CUDA): bytes counting, bandwidth metrics, the h2d
// bottleneck verdict, the NUMA node list parser, the p2p pairing and the
// dependent-load chain of the latency probe.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench::datapath {

// GB/s (1e9 bytes per second); 0 when seconds <= 0.
double gbps(double bytes, double seconds);

// ---- membw -----------------------------------------------------------------------------------
// 32-bit words per array of `bytes` (rounded down); UsageError below 16 bytes.
std::uint64_t membw_words(std::uint64_t bytes);
// Bytes one op moves through HBM, read + write: copy and memcpy read one array and write one
// (2 x array bytes), triad reads two and writes one (3 x). UsageError for another impl.
double membw_bytes_moved(const std::string& impl, std::uint64_t words);
// {"GBps_per_gpu", "GBps_aggregate" (= GPUs x per GPU), "time_ms"} from params impl, bytes.
Json membw_metrics(const Params& params, int nranks, double seconds);

// ---- h2d -------------------------------------------------------------------------------------
// (The PCIe link rate is mgbench::pcie_link_GBps, model/point_quality.hpp: the same formula
// bounds the impossible-value flags.)
// Bytes one op moves per GPU: `bytes` for h2d and d2h, 2 x bytes for bidir. UsageError else.
double h2d_bytes_moved(const std::string& direction, std::uint64_t bytes);
// {"GBps_per_gpu", "GBps_aggregate", "time_ms"} from params direction, bytes.
Json h2d_metrics(const Params& params, int nranks, double seconds);

// The h2d points: every combination of the chosen values but timing=graph with
// memory=pageable, which is left out: the driver's pageable copy blocks the calling thread, so
// a mover thread runs it beside the timed stream and a graph would replay only the hand-over,
// never the copy. When nothing else is left (only pageable, only graph) it is a UsageError
// (the planner calls this, so the sweep stops before it starts).
std::vector<Params> h2d_expand(const AxisValues& values);

// The facts one h2d verdict is drawn from (absent facts are <= 0).
struct H2dFacts {
  std::string memory;        // pinned | pageable
  std::string numa;          // local | remote
  int gpus = 1;
  double per_gpu_gbps = 0;   // this point, per GPU (slowest rank)
  double alone_gbps = 0;     // the same point with one GPU alone
  double link_gbps = 0;      // PCIe gen x width (x2 for bidir)
  double local_gbps = 0;     // the same point with host memory on the GPU's own node
};
// Thresholds of the verdict (documented in docs/WORKLOADS-DATAPATH.md).
inline constexpr double kLinkEfficiencyMin = 0.6;  // pinned, alone: below this of the link
inline constexpr double kSharedRatioMin = 0.8;     // per GPU with all GPUs vs alone
inline constexpr double kNumaRatioMin = 0.85;      // remote vs local
// "none", or the bottlenecks found, separated by "; " (link, contention, NUMA).
std::string h2d_verdict(const H2dFacts& facts);
// Run-level summary: one row per ok point with the ratios and the verdict (alone and local
// references come from points measured the same way):
//   [{"gpus", "devices", "direction", "memory", "numa", "measured", "bytes", "GBps_per_gpu",
//     "alone_GBps", "shared_ratio", "link_GBps", "link_efficiency", "numa_ratio", "verdict"}, ...]
Json h2d_summary(const std::vector<PointResult>& points);

// "0-1,3" (a sysfs node or CPU list) -> {0, 1, 3}; UsageError when malformed.
std::vector<int> parse_node_list(const std::string& text);

// ---- p2p -------------------------------------------------------------------------------------
// The (sender, receiver) ranks of the headline op: ranks pair up (0,1), (2,3), ...; with uni
// the even rank sends, with bidir both do. An odd last rank stays idle.
std::vector<std::pair<int, int>> p2p_pairs(int nranks, const std::string& direction);
// {"GBps_per_pair", "GBps_aggregate", "time_ms"}: bytes per pair and direction moved / t.
Json p2p_metrics(const Params& params, int nranks, double seconds);
// Why a p2p point is refused ("" when it runs): with `graph` (timing=graph), the copy engine
// (`sm_engine` false) and two distinct GPUs among `devices`, its CUDA graph would hold copies
// between two devices, which no test has captured and verified yet (ranks sharing one GPU
// have been; the own copy kernel storing into a peer is an ordinary kernel node).
std::string p2p_graph_waiver(const std::vector<int>& devices, bool sm_engine, bool graph);
// A single cycle through `slots` slots spaced `stride_words` apart (a shuffled order): the
// word at slot k holds the word index of the next slot; every other word is 0.
std::vector<std::uint32_t> chase_chain(std::uint32_t slots, std::uint32_t stride_words,
                                       std::uint64_t seed);
// The index a chase starting at 0 ends on after `steps` loads.
std::uint32_t chase_end(const std::vector<std::uint32_t>& chain, std::uint32_t steps);
// {"min", "median", "max"} of the off-diagonal entries of an N x N matrix (null entries skipped).
Json matrix_stats(const Json& matrix);
// Run-level summary: the pair matrix of the largest group per (engine, direction, bytes,
// timing and cache):
//   [{"engine", "direction", "bytes", "measured", "src", "dst", "GBps", "latency_us"}, ...]
Json p2p_summary(const std::vector<PointResult>& points);

}  // namespace mgbench::bench::datapath
