#pragma once
// A group is one workload on one device set; the unit a worker process runs.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/process_group.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench {

struct RunSettings {
  StoppingCriteria stopping;
  double warmup_s = 0.05;          // minimum warm-up time per point (at least 2 ops)
  bool warmup_given = false;       // --warmup: warmup_s for every workload, sustained or not
  double target_sample_s = 0.002;  // ops are batched so that one sample lasts at least this
  double gate_timeout_s = 10.0;    // a start gate never released within this gives up
  double group_timeout_s = 600.0;  // NCCL watchdog / orchestrator kill deadline for a group
  bool telemetry = true;
  double telemetry_interval_s = 0.1;
  std::string profile = "standard";
  bool batch_auto = false;         // --batch-sizes auto: grow the batch until out of memory
  double test_slowdown = 0;        // MGBENCH_TEST_SLOWDOWN (test mode only; docs/TESTING-HOOKS.md)
};
void to_json(Json& j, const RunSettings& s);
void from_json(const Json& j, RunSettings& s);

struct PlannedPoint {
  std::size_t index = 0;  // global index in the plan
  Params params;
};

struct GroupSpec {
  std::size_t group_index = 0;
  std::string workload;
  std::vector<int> devices;  // CUDA ordinals, in rank order (on each node with processes)
  std::vector<PlannedPoint> points;
  // The points run this many times in turn (the soak: one point, one round per window), each
  // copy made as it runs: round r's copy of points[i] has index points[i].index + r * size().
  std::size_t rounds = 1;
  RunSettings settings;
  Placement placement;       // threads: gpus_per_node == devices.size(), one node
  // Points to run, rounds included, and the k-th of them (k < point_count()).
  std::size_t point_count() const { return points.size() * rounds; }
  PlannedPoint point_at(std::size_t k) const {
    PlannedPoint p = points[k % points.size()];
    p.index += (k / points.size()) * points.size();
    return p;
  }
  // Ranks of the group: one per device with threads, nodes x GPUs per node with processes.
  int ranks() const {
    return placement.process_model == ProcessModel::threads
               ? static_cast<int>(devices.size())
               : placement.nodes * placement.gpus_per_node;
  }
};
void to_json(Json& j, const GroupSpec& g);
void from_json(const Json& j, GroupSpec& g);

// Receives results as they happen (the worker forwards them to the orchestrator's pipe).
class PointSink {
 public:
  virtual ~PointSink() = default;
  virtual void point_started(std::size_t index) = 0;
  virtual void point_finished(const PointResult& result) = 0;
};

// Telemetry hook around each point's sampling loop (NVML; may be null).
class PointObserver {
 public:
  virtual ~PointObserver() = default;
  virtual void begin_point(const std::vector<int>& devices) = 0;
  // Returns the point's telemetry summary (JSON null when nothing could be read).
  virtual Json end_point() = 0;
};

struct GroupContext {
  const GroupSpec& spec;
  PointSink& sink;  // rank 0's results; other processes of a group hand in one that drops them
  PointObserver* observer = nullptr;
  // One process per GPU (mpirun, srun): this process's rank among the group's processes and
  // the collectives between them. Null with one thread per GPU.
  ProcessGroup* processes = nullptr;
};

// Runs every point of a group, reporting each through ctx.sink; throws only for errors
// that leave the process unusable (sticky CUDA errors), after reporting what finished.
using GroupRunner = std::function<void(GroupContext& ctx)>;

}  // namespace mgbench
