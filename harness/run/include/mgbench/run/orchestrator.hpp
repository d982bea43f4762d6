#pragma once
// The sweep orchestrator: probes devices through a worker, runs each planned group in a
// worker process (or in-process with --isolation none), records every point in the journal
// as it finishes, and survives crashed, hung or interrupted workers.
#include <atomic>
#include <map>
#include <set>
#include <string>

#include "mgbench/platform/devices.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

struct ProbeResult {
  DeviceInventory inventory;
  Json environment = Json::object();
  Json doctor;  // null unless asked
};

// Runs `mgbench worker` in probe mode (or in-process). Throws EnvironmentError.
ProbeResult probe(Isolation isolation, bool doctor);

// Set from the SIGINT/SIGTERM handler; checked between reads.
std::atomic<bool>& interrupt_flag();
void install_interrupt_handlers();

class Orchestrator {
 public:
  // `finished` holds points already done (resume); they are not run again.
  Orchestrator(const SweepOptions& options, const Plan& plan, Journal* journal,
               std::map<std::size_t, PointResult> finished);
  void run();
  bool interrupted() const { return interrupted_; }
  std::vector<PointResult> results() const;  // every planned point, in plan order

 private:
  void run_group(const PlannedGroup& group);
  void run_group_in_process(const PlannedGroup& group, std::vector<PlannedPoint> points);
  // Runs one worker attempt; returns the points still to run (after a crash) or none.
  std::vector<PlannedPoint> run_group_attempt(const PlannedGroup& group,
                                              const std::vector<PlannedPoint>& points);
  GroupSpec make_spec(const PlannedGroup& group, const std::vector<PlannedPoint>& points) const;
  void record(const PointResult& point);
  void record_unfinished(const PlannedGroup& group, const PlannedPoint& point, Status status,
                         const std::string& message);
  void progress(const PlannedGroup& group, std::size_t index);

  const SweepOptions& options_;
  const Plan& plan_;
  Journal* journal_;
  std::map<std::size_t, PointResult> results_;
  bool interrupted_ = false;
  std::size_t done_count_ = 0;
  double started_s_ = 0;
  bool tty_ = false;
};

// A PointResult for a point that never produced one (failed, timeout, skipped...).
PointResult unfinished_point(const std::string& workload, const std::vector<int>& devices,
                             const PlannedPoint& point, Status status, const std::string& message);

}  // namespace mgbench
