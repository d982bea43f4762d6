#pragma once
// `mgbench screen`: find the bad GPU, link or node of a fleet in minutes (docs/SCREEN.md).
//   Stage 1, on every node at once: a short GEMM, memory bandwidth and host-to-device copies,
//     every GPU of the node on its own work at the same time (no collective).
//   Stage 2, on every node at once: the p2p matrix (one process with a thread per GPU: the
//     local launcher only) and one all-reduce over the node's GPUs.
//   Stage 3, between nodes (mpirun or srun, two nodes or more): pairs of nodes in rounds, every
//     node meeting about log2(N) others (pair_schedule), an all-reduce over each pair, the pairs
//     of a round at once; then one all-reduce over every node.
// Every figure is judged against its peers (analysis/fleet.hpp). A node whose launch hangs,
// crashes or computes wrong results is a finding itself and takes no further part.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/analysis/fleet.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/sweep.hpp"

namespace mgbench {

struct ScreenOptions {
  LaunchOptions launch;
  std::vector<int> stages{1, 2, 3};
  FleetThresholds thresholds;
  RunSettings settings;
  int parallel = 32;  // launches running at once
  std::string out_dir, json_path, db_path, exclude_list;
  bool dry_run = false, no_report = false, no_history = false;
  int verbosity = 0;
};

// Parses `mgbench screen` arguments (argv[0] is the command name). Throws UsageError.
ScreenOptions parse_screen_options(int argc, char** argv);

// Stage 3's rounds of node pairs over `nodes` nodes (none for fewer than two): no node twice in
// a round; round r pairs node i with node i XOR 2^r (ceil(log2 N) rounds), nodes whose partner
// does not exist pair among themselves with someone new, and one or two more rounds are added
// while a node has met fewer than min(2, N - 1) others.
std::vector<std::vector<std::pair<int, int>>> pair_schedule(int nodes);

// What the screen measures: a workload at fixed parameters, and what one point of it gives.
enum class ScreenScope {
  gpu,     // one figure per GPU, from each rank's own time (stage 1)
  matrix,  // one figure per ordered GPU pair of the node (the p2p matrix)
  node,    // one figure per launch: its node, its pair of nodes, or every node
};
struct ScreenItem {
  int stage = 1;
  std::string label;     // "gemm", "membw", "h2d", "p2p", "allreduce"
  std::string workload;  // what runs it
  std::map<std::string, std::vector<std::string>> params;  // one value each
  std::string metric, unit;
  ScreenScope scope = ScreenScope::gpu;
  bool link = false;  // bound by a link (PCIe, NVLink, the network): link facts explain it
};
// The items of each stage; with `fake` (fake GPUs, a test), each is the selftest's `screen`
// behaviour under the same label.
std::vector<ScreenItem> screen_items(bool fake);

// One launch of the screen: an item on one node, a pair of nodes, or every node.
struct ScreenLaunch {
  ScreenItem item;
  std::vector<int> nodes;  // indices into the fleet
  PlannedGroup group;      // one point
};

struct ScreenPlan {
  std::vector<std::string> hosts;
  int gpus_per_node = 0;
  std::vector<std::vector<ScreenLaunch>> node_launches;  // stages 1 and 2, per node, in order
  std::vector<std::vector<std::pair<int, int>>> rounds;  // stage 3
  std::vector<std::vector<ScreenLaunch>> round_launches;  // one per pair of each round
  std::vector<ScreenLaunch> whole;                        // stage 3 over every node (0 or 1)
  std::vector<std::string> notes;                         // what does not run and why
  double estimated_s = 0;
};

// The screen of `hosts` (every node with `gpus_per_node` GPUs, devices 0..n-1) through
// options.launch. `nodes`: the indices of the nodes that take part (stage 3 runs on them only);
// `first_index`: the plan index of its first point. Throws UsageError for items that plan no
// point.
ScreenPlan make_screen_plan(const ScreenOptions& options, const std::vector<std::string>& hosts,
                            int gpus_per_node, bool fake, const std::vector<int>& nodes,
                            std::size_t first_index = 0);
// --dry-run: the schedule, each launch's command line and the estimated time.
std::string describe_screen_plan(const ScreenPlan& plan, const ScreenOptions& options);

// The exit code of a finished screen: 0 nothing found, 1 findings, 4 nothing could be screened
// (every node failed).
int screen_exit_code(const ScreenSection& screen);

// Probes every node, runs the stages, judges the figures and writes results.json (its own kind
// of run: settings.mode "screen", the "screen" section), the sinks and the history entry.
// Returns the exit code (screen_exit_code, or 4 / 130 as a sweep's).
int run_screen(const ScreenOptions& options, const std::vector<std::string>& argv,
               const RunSinks& sinks);

}  // namespace mgbench
