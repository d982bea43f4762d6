#pragma once
// Fleet outliers (`mgbench screen`, docs/SCREEN.md): which GPU, node or link of a fleet is below
// its peers, by how much, and what the run recorded that explains it.
//
// Every figure is "higher is better" (a throughput or a bandwidth). Among the figures of one
// metric (and one like-for-like group: the same GPU model, the same link type), a subject's
// reference is the typical healthy peer: the median of the better half of the figures. It is
// flagged when it is more than `gap` below that reference AND more than `robust_z` robust
// standard deviations (1.4826 x the median absolute deviation of the better half) below it: a
// gap large enough to matter and too large to be noise. The better half keeps the reference
// honest when up to half the fleet is slow (one slow node of two).
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

struct FleetThresholds {
  double gap = 0.05;       // flagged more than this fraction below the reference...
  double robust_z = 5.0;   // ...and more than this many robust deviations below it
};

// One value among its peers.
struct PeerStanding {
  double value = 0;
  double reference = 0;  // median of the better half (0: no peers)
  double gap = 0;        // 1 - value / reference (negative: above it)
  double z = 0;          // (reference - value) / robust deviation; infinite when it is 0
  bool outlier = false;
};
// The standing of each of `values` among all of them (same order). With fewer than two values
// nobody has peers: reference 0, never an outlier.
std::vector<PeerStanding> peer_standings(const std::vector<double>& values,
                                         const FleetThresholds& thresholds);

// Who is to blame for a pair that is slow: the first or second member (slow in every pair it
// joined, or known slow from elsewhere), both, the link between them (each member is fine in
// its other pairs), or unclear (a member has no other pair to tell).
enum class PairBlame { none, first, second, both, link, unclear };
const char* to_string(PairBlame blame);
// One blame per pair (none for pairs not flagged in `standings`); `known_slow`: members already
// found slow on their own.
std::vector<PairBlame> judge_pairs(const std::vector<std::pair<int, int>>& pairs,
                                   const std::vector<PeerStanding>& standings,
                                   const std::set<int>& known_slow);

// ---- the screen's data ----------------------------------------------------------------------

// A node of the fleet: its host, what its probe found, and whether it could be screened.
struct ScreenNode {
  std::string host;
  int gpus = 0;
  std::string gpu_model;
  std::string status = "ok";  // "ok", or "failed": hung, crashed, unreachable or wrong
  std::string message;        // why it failed (one line)
  // What explains a slow figure: {"environment": its GPUs (power limits, clocks, PCIe, NVLink,
  // NUMA) and topology, "doctor": its doctor checks}.
  Json facts = Json::object();
};

// One figure of one subject: a GPU (gpu >= 0, peer < 0), a GPU pair of one node (gpu and peer
// >= 0: gpu -> peer), a node (gpu < 0, peer < 0), a node pair (gpu < 0, peer >= 0: the other
// node), or the whole fleet (node < 0).
struct ScreenFigure {
  int stage = 1;
  std::string metric;     // the stage's item: "gemm", "membw", "h2d", "p2p", "allreduce"...
  std::string unit;
  int node = 0, gpu = -1, peer = -1;
  double value = 0;       // 0 when it failed (`message` says why)
  std::string group;      // like-for-like group: the GPU model, the link type ("" one group)
  std::size_t point = 0;  // the PointResult::index it came from
  std::string message;    // why there is no value ("" when measured)
};

// Finding kinds.
inline constexpr const char* kFindingNodeFailed = "node_failed";    // hung, crashed, wrong
inline constexpr const char* kFindingGpu = "gpu";                   // a GPU below its peers
inline constexpr const char* kFindingNode = "node";                 // a whole node below
inline constexpr const char* kFindingGpuLink = "gpu_link";          // two GPUs slow together
inline constexpr const char* kFindingNodeNetwork = "node_network";  // slow in every node pair
inline constexpr const char* kFindingNodeLink = "node_link";        // two nodes slow together

struct ScreenFinding {
  std::string kind;
  int node = 0, gpu = -1, peer = -1;  // as in ScreenFigure
  int stage = 0;
  std::string metric, unit;
  double value = 0, reference = 0, gap = 0;  // gap: fraction below the reference
  std::string text;                          // one line: what, how much
  std::vector<std::string> evidence;         // what the run recorded that explains it
  // Sort key, largest first: a failed node 2, else the gap.
  double severity() const;
};

struct ScreenSection {
  std::vector<ScreenNode> nodes;
  int gpus_per_node = 0;
  std::vector<int> stages;                             // the stages asked for
  std::vector<std::vector<std::pair<int, int>>> rounds;  // stage 3's node pairs per round
  FleetThresholds thresholds;
  std::vector<ScreenFigure> figures;
  std::vector<ScreenFinding> findings;  // most severe first
  std::vector<std::string> notes;       // what did not run and why
  double estimated_s = 0, measured_s = 0;
};

// The findings of a screen, most severe first: failed nodes; then per metric the GPUs below
// their peers (a node whose every GPU is below is one node finding), the nodes below, the GPU
// pairs of a node (a GPU slow to every peer, or one link), the node pairs (a node slow in every
// pair, or the link between two). `points` (matched by index) give the telemetry evidence.
std::vector<ScreenFinding> find_fleet_outliers(const ScreenSection& screen,
                                               const std::vector<PointResult>& points);

// "node a1 GPU 3", "node a1", "GPU 1 -> GPU 3 on a1", "nodes a1 and a2".
std::string finding_subject(const ScreenSection& screen, const ScreenFinding& finding);

// What the run recorded that explains a low figure of GPU `gpu` of `node` in `point` (null:
// none): its power limit, a PCIe link below the GPU's (`link`: a host-link metric), NVLink links
// down, temperature or clocks held low against the point's other GPUs, the node's doctor
// warnings. Empty when nothing recorded explains it.
std::vector<std::string> gpu_evidence(const ScreenNode& node, const PointResult* point, int gpu,
                                      bool link);
// The node's doctor warnings and failures that bear on a slow figure.
std::vector<std::string> node_evidence(const ScreenNode& node);
// What the node's facts say of the link between its GPUs `a` and `b`: the topology's path
// between them, NVLink links down on either.
std::vector<std::string> link_evidence(const ScreenNode& node, int a, int b);

void to_json(Json& j, const ScreenNode& n);
void from_json(const Json& j, ScreenNode& n);
void to_json(Json& j, const ScreenFigure& f);
void from_json(const Json& j, ScreenFigure& f);
void to_json(Json& j, const ScreenFinding& f);
void from_json(const Json& j, ScreenFinding& f);
void to_json(Json& j, const ScreenSection& s);
void from_json(const Json& j, ScreenSection& s);  // throws on a malformed section

}  // namespace mgbench
