#pragma once
// The sweep orchestrator: probes devices through a worker, runs each planned group in a
// worker process (or in-process with --isolation none), records every point in the journal
// as it finishes, and survives crashed, hung or interrupted workers.
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "mgbench/platform/devices.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/rank_placement.hpp"
#include "mgbench/model/results.hpp"
#include "mgbench/run/journal.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

struct AttemptOutcome;

struct ProbeResult {
  DeviceInventory inventory;
  Json environment = Json::object();
  Json doctor;  // null unless asked
  std::vector<NodeReport> nodes;  // a launched probe: every node's report (rank order)
};

// How long a device probe (a worker, or a launch of one rank per node) may take.
inline constexpr double kProbeTimeoutSeconds = 120.0;
// Runs `mgbench worker` in probe mode (or in-process). Throws EnvironmentError.
ProbeResult probe(Isolation isolation, bool doctor);
// A probe worker's `probe` message as a ProbeResult.
ProbeResult probe_result(const Json& body);

// Set from the SIGINT/SIGTERM/SIGHUP handler; checked between reads.
std::atomic<bool>& interrupt_flag();
void install_interrupt_handlers();

// Seconds on the monotonic clock (deadlines, window times).
double monotonic_seconds();

// How long the pipe of a killed worker is read for what it wrote before it died.
inline constexpr double kWorkerDrainSeconds = 10.0;

// Checks the workloads, dtypes, parameters and batch sizes against the registry without any
// device (so a bad value is named before a GPU is looked for). Throws UsageError.
void validate_sweep_arguments(const SweepOptions& options);
// Resume: every finished point of the journal must be the same point of the new plan (same
// index, workload, parameters and devices). Throws UsageError naming the first difference.
void check_resumed_points(const Plan& plan, const std::map<std::size_t, PointResult>& finished);
// How a sweep opens DIR/journal.jsonl: appended on resume; a new sweep refuses an existing
// journal (UsageError) unless `force` (--force), which starts over and says so.
JournalMode sweep_journal_mode(const std::string& out_dir, bool resuming, bool force);

// What the orchestrator learns from a launch's stream about where it is stuck: rank 0's host
// (its hello) and rank 0's latest report of ranks late to a collective, which any progress
// (`started`, `point`) or a report with nobody missing clears.
class LaunchWatch {
 public:
  void observe(const WorkerMessage& message);
  // The message of the point in flight when the group made no progress for `timeout_s`: with
  // a process per GPU (`launched`), the ranks rank 0 last waited for, with their hosts and the
  // step, or else rank 0 itself with its host; a local worker's message names no rank.
  std::string timeout_reason(double timeout_s, bool launched) const;

 private:
  std::string rank0_host_;
  std::optional<WorkerStall> stall_;
};

class Orchestrator {
 public:
  // `finished` holds points already done (resume); they are not run again.
  Orchestrator(const SweepOptions& options, const Plan& plan, Journal* journal,
               std::map<std::size_t, PointResult> finished);
  void run();
  bool interrupted() const { return interrupted_; }
  // The first journal write error (empty when none): groups after it were not started.
  const std::string& journal_error() const { return journal_error_; }
  // Why a launch did not start (empty when every launch started): the sweep stopped there, and
  // the points not run are `skipped`.
  const std::string& launch_error() const { return launch_error_; }
  std::vector<PointResult> results() const;  // every planned point, in plan order

 private:
  struct Attempt;
  void run_group(const PlannedGroup& group);
  void on_group_message(const PlannedGroup& group, Attempt& attempt, const WorkerMessage& m);
  void stop_for_launch(const PlannedGroup& group, const std::vector<PlannedPoint>& points,
                       const std::string& why);
  void run_group_in_process(const PlannedGroup& group, std::vector<PlannedPoint> points);
  // Runs one worker attempt; returns the points still to run (after a crash) or none.
  std::vector<PlannedPoint> run_group_attempt(const PlannedGroup& group,
                                              const std::vector<PlannedPoint>& points);
  std::vector<PlannedPoint> after_attempt(const PlannedGroup& group, const Attempt& attempt,
                                          const AttemptOutcome& outcome, bool launched);
  // After a group timeout: the point in flight (if any) is `timeout` with `why`; the points
  // left are returned for a fresh launch when `relaunch`, else recorded as not run.
  std::vector<PlannedPoint> after_timeout(const PlannedGroup& group, const PlannedPoint* in_flight,
                                          const std::vector<PlannedPoint>& left,
                                          const std::string& why, bool relaunch);
  GroupSpec make_spec(const PlannedGroup& group, const std::vector<PlannedPoint>& points) const;
  void record(const PointResult& point, bool quiet = false);
  void record_unfinished(const PlannedGroup& group, const PlannedPoint& point, Status status,
                         const std::string& message);
  void progress(const PlannedGroup& group, std::size_t index);
  double eta_s() const;  // time left at this session's rate so far

  const SweepOptions& options_;
  const Plan& plan_;
  Journal* journal_;
  std::map<std::size_t, PointResult> results_;
  bool interrupted_ = false;
  std::string journal_error_;
  std::string launch_error_;
  std::set<std::string> noted_;  // kinds of launch notes already said
  std::size_t done_count_ = 0;
  double started_s_ = 0;
  bool tty_ = false;
  std::string last_figure_;  // the last ok point's headline figure, for the progress line
};

// A PointResult for a point that never produced one (failed, timeout, skipped...).
PointResult unfinished_point(const PlannedGroup& group, const PlannedPoint& point, Status status,
                             const std::string& message);

}  // namespace mgbench
