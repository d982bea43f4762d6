#pragma once
// Sweep options (what the user asked for) and the plan (groups and points to run).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/analysis/scaling.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/launcher.hpp"

namespace mgbench {

enum class Isolation { process, none };

struct SweepOptions {
  std::vector<int> gpu_counts;               // empty: powers of two up to the count, plus it
  std::vector<int> devices;                  // empty: all visible
  std::vector<std::string> workloads;        // empty: all registered
  std::vector<std::string> batch_sizes;      // applies to axes named "batch"
  bool batch_auto = false;                   // --batch-sizes auto
  std::vector<std::string> dtypes;           // applies to axes named "dtype"
  std::map<std::string, std::vector<std::string>> param_overrides;  // --param axis=v1,v2
  Profile profile = Profile::standard;
  RunSettings settings;
  std::string out_dir;                       // empty: results/<UTC>-<host>/
  std::string json_path, csv_path;
  std::string resume_dir;
  bool force = false;                        // --force: start over where a journal is
  std::string run_id;                        // empty: a new one (--resume: the journal's)
  bool dry_run = false;
  Isolation isolation = Isolation::process;
  LaunchOptions launch;                      // --launcher, --hosts/--hostfile, --gpus-per-node
  ScalingMode scaling = ScalingMode::weak;
  bool baseline_each = false;
  bool skip_doctor = false;
  bool no_report = false;
  bool no_history = false;
  bool redact = false;  // results.json, --json and reports without identifying fields
  std::string db_path;
  double price_per_gpu_hour = 0;
  int verbosity = 0;                         // -1 quiet, 0 normal, 1 verbose
  std::string nvls;  // --nvls on|off|auto (NCCL_NVLS_ENABLE for every worker); "": not given
};

struct PlannedGroup {
  std::size_t index = 0;
  std::string workload;
  std::vector<int> devices;  // on each node
  std::vector<PlannedPoint> points;
  std::string purpose = "scaling";  // or "baseline" (--baseline each)
  Placement placement;              // process model, launcher, nodes and hosts
  int gpus() const { return placement.nodes * placement.gpus_per_node; }
};

struct Plan {
  std::vector<PlannedGroup> groups;
  std::size_t total_points = 0;
  double estimated_s = 0;
  std::vector<int> devices;     // the selected physical devices (of each node)
  int gpus_per_node = 0;        // the most ranks a node takes (launchers other than local)
  std::vector<int> gpu_counts;  // the GPU counts planned
  std::vector<std::string> notes;  // what the plan left out and why (one line each)
};

// Parses and validates `--gpus`; `available` is the number of selectable devices
// (-1 when unknown: dry run without a GPU). Throws UsageError.
std::vector<int> parse_gpu_counts(const std::string& text, int available);
std::vector<int> default_gpu_counts(int available);
// Parses `--devices` against `visible` devices (-1 when unknown). Throws UsageError.
std::vector<int> parse_device_list(const std::string& text, int visible);
// The checks of both on values already typed (a resumed sweep's plan, read from its journal):
// each at most 2^20, positive (or, with `allow_zero`, not negative), none twice. `what` names the
// option in the UsageError ("--gpus value").
std::vector<int> checked_int_list(const std::vector<std::int64_t>& values, const std::string& what,
                                  bool allow_zero);

// Expands the options into groups and points; `visible` is the number of CUDA devices
// (-1 when unknown). Throws UsageError for anything invalid; nothing is run.
// Strong scaling (--scaling strong): a workload's "batch" values are global batches, and a
// group of n GPUs runs batch / n per GPU; a global batch that n does not divide exactly is
// left out of that group (rounding would change the global batch and break the series), with
// a line in `notes`. With --launcher mpirun or srun, a GPU count may span nodes: up to the GPUs
// per node it runs on one node, beyond that on count / per-node nodes (a count the GPUs per
// node do not divide, or that needs more nodes than known, is left out with a note).
// --baseline each: one 1-GPU group on every selected device that no 1-GPU
// scaling group already covers (the first device, too, when --gpus has no 1).
Plan make_plan(const SweepOptions& options, int visible);
Json plan_to_json(const Plan& plan);
std::string default_out_dir();

}  // namespace mgbench
