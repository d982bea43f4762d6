#pragma once
// Internals of the group executor shared by its sources: the per-rank outcome of a phase,
// the per-rank CUDA resources, and GroupShared, the group communicator of the ranks of one
// group (barrier, gathers, broadcast, abort-flag publication, the gated timed sample). Its
// ranks are the threads of this process (one per GPU), or, with a ProcessGroup, one rank per
// process (mpirun, srun): then every collective goes through the ProcessGroup, each process
// opens its own start gate after the ranks' barrier, and arms its own NCCL watchdog.
#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/bench/executor.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/bench/rank_barrier.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/model/process_group.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench::bench {


// What one rank reports for one phase.
struct RankOutcome {
  Status status = Status::ok;
  std::string message;
  bool sticky = false;
};

// The group's NCCL communicators: every rank's in this process (threads), or this process's one
// (rank processes->rank() on `device`), joined with rank 0's unique id, which goes out through
// the ProcessGroup. Creation may take half the group timeout (at most 300 s).
std::unique_ptr<NcclComms> make_group_comms(const GroupSpec& spec, ProcessGroup* processes,
                                            int device);

// Sticky CUDA errors leave the context unusable: the worker must exit after reporting.
bool is_sticky(int code);
RankOutcome outcome_of(const std::exception_ptr& error, int rank);
// Severity order for combining ranks: the worst status wins.
int severity(Status s);

// Pinned, host-mapped memory holding the gate flag, allocated with `device` (a device of the
// group) current: never through a context on a device outside the group.
struct HostFlag {
  explicit HostFlag(int device);
  ~HostFlag();
  HostFlag(const HostFlag&) = delete;
  HostFlag& operator=(const HostFlag&) = delete;
  volatile int* flag = nullptr;
};

// How the current device's host waits are scheduled (cudaGetDeviceFlags): "blocking", "spin",
// "yield" or "auto"; reported with every rank so a test can read it back.
std::string host_wait_mode();

// Per-rank CUDA resources for the whole group.
struct RankResources {
  explicit RankResources(int device);
  ~RankResources();
  RankResources(const RankResources&) = delete;
  RankResources& operator=(const RankResources&) = delete;
  cudaStream_t stream = nullptr, comm_stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  int* gate_timed_out = nullptr;  // host-mapped: the gate kernel sets it, the host reads it
};

// Arms the NCCL watchdog (when the group has communicators and `arm`: rank 0 of threads,
// every process of a process group) for the lifetime of the object, and hands the previous
// arming back when it ends: windows nest.
class ScopedWatchdog {
 public:
  ScopedWatchdog(NcclComms* comms, bool arm, double seconds);
  ~ScopedWatchdog();
  ScopedWatchdog(const ScopedWatchdog&) = delete;
  ScopedWatchdog& operator=(const ScopedWatchdog&) = delete;

 private:
  NcclComms* comms_;
  NcclComms::Arming previous_;
};

// State shared by the rank threads of one group. Every collective below is called by every
// rank in the same order; each names its step for the barrier (see rank_barrier.hpp).
class GroupShared {
 public:
  // `devices`: the group's CUDA ordinals in rank order (the gate flag is allocated on the
  // first one, from the calling thread, whose current device it leaves there). With
  // `processes`: the devices of this node, of which this process uses the one of its local
  // rank (`device`).
  GroupShared(const std::vector<int>& devices, const RunSettings& settings,
              ProcessGroup* processes = nullptr, int device = -1);

  int size() const { return n_; }
  void barrier(int rank, const char* step);
  // Where the ranks are (e.g. "point 3, sample 2"): with a process group, the steps of its
  // collectives are named "<where>: <step>", which a report of a late rank shows.
  void set_where(std::string where) {
    if (processes_ != nullptr) where_ = std::move(where);  // one rank thread: no race
  }
  std::string step_name(const char* step) const;
  const RunSettings& settings() const { return settings_; }
  ProcessGroup* processes() const { return processes_; }
  // Whether this rank arms its NCCL watchdog: rank 0 of threads, every process.
  bool arms_watchdog(int rank) const { return rank == 0 || processes_ != nullptr; }
  // The index of `rank`'s communicator in this process's NcclComms.
  int comm_slot(int rank) const { return processes_ != nullptr ? 0 : rank; }

  // This rank failed outside the steps the ranks share: poisons the barrier (every rank's
  // current and next barrier throws RankFailure) and aborts the NCCL communicators, so that
  // no rank keeps waiting for it on the host or on the GPU. A group of one rank has nobody
  // to wake: its per-point recovery stays as it is.
  void fail(int rank, const std::string& reason);
  // A failed group's last meeting, which works while the barrier is poisoned: this rank has
  // quiesced its GPU; waits until every rank has (or `timeout_s` passes), so that buffers a
  // peer may still read are freed only afterwards. A rank that leaves without a point to
  // free calls it with timeout 0; a second call of a rank counts once.
  void drain(int rank, double timeout_s);
  // True (once) when this rank's last timed_sample() threw on every rank together: the
  // ranks are still in step and need no poison.
  bool take_in_step_failure(int rank);

  void set_resources(int rank, RankResources* resources) { resources_[rank] = resources; }
  RankResources& resources(int rank) const { return *resources_[rank]; }

  std::vector<void*> all_gather_ptr(int rank, void* mine);
  // One collective timed sample: gate, `reps` calls of enqueue, slowest rank's seconds.
  // Every rank calls it; returns the max over ranks (seconds for all reps) and this rank's.
  // gated = false (timing=host/graph): no gate; the ranks meet on the host, then each
  // launches its reps back to back between its two events, launch cost included.
  std::pair<double, double> timed_sample(int rank, const std::function<void()>& enqueue,
                                         int reps, std::uint64_t extra_busy_ns,
                                         bool gated = true);
  // Combines one outcome per rank (collective); returns the worst.
  RankOutcome combine(int rank, const RankOutcome& mine);
  // Broadcast of a value from rank 0 (collective).
  template <typename T>
  T broadcast(int rank, const T& value, T& slot, const char* step = "broadcast") {
    if (processes_ != nullptr) {
      return Json::parse(processes_->broadcast(dump_json(Json(value)), step_name(step))).get<T>();
    }
    if (rank == 0) slot = value;
    barrier(rank, "broadcast");
    T out = slot;
    barrier(rank, "broadcast read");
    return out;
  }
  // Gathers a JSON value per rank (collective).
  std::vector<Json> gather_json(int rank, Json value, const char* step = "gather");
  std::vector<double> gather_double(int rank, double value, const char* step = "gather");

  // Rank 0's estimate of one op's seconds, which sizes the NCCL watchdog's deadline for the
  // timed samples (only rank 0 arms it; other ranks' calls do nothing).
  void set_op_estimate(int rank, double seconds) {
    if (arms_watchdog(rank)) op_estimate_s_ = seconds;
  }

  NcclComms* comms = nullptr;

  // Rank-0-written, barrier-published decision slots.
  int int_slot = 0;
  double double_slot = 0;
  std::string string_slot;

 private:
  // Enqueues the gate, `reps` ops and the busy wait behind it (this rank's part).
  void enqueue_gated(RankResources& res, int generation, const std::function<void()>& enqueue,
                     int reps, std::uint64_t extra_busy_ns, bool gated);
  // Rank 0, once every rank has enqueued: arms the watchdog for the sample, opens the gate,
  // and aborts the communicators at once when a rank failed to enqueue.
  void open_gate(int generation, int reps, std::uint64_t extra_busy_ns,
                 std::unique_ptr<ScopedWatchdog>& watchdog);
  // Waits for this rank's sample and returns its seconds (throws on a failure or gate timeout).
  static double finish_sample(RankResources& res);
  // After a sample: every rank's time and outcome, and whether a rank's communicators were
  // aborted (threads: rank 0 reads the flag once and publishes it; processes: any rank's).
  struct SampleRound {
    double slowest = 0;
    RankOutcome worst;
    bool aborted = false;
  };
  SampleRound settle_threads(int rank, double mine, const RankOutcome& own,
                             std::unique_ptr<ScopedWatchdog>& watchdog);
  SampleRound settle_processes(double mine, const RankOutcome& own,
                               std::unique_ptr<ScopedWatchdog>& watchdog);

  ProcessGroup* processes_;
  std::string where_;
  int n_;
  RankBarrier barrier_;
  const RunSettings& settings_;
  HostFlag gate_;
  int next_generation_ = 0;
  double op_estimate_s_ = 0;
  std::vector<char> enqueue_failed_;  // per rank, this sample; read by rank 0 before the gate
  bool aborted_slot_ = false;         // rank 0 reads the abort flag once and publishes it
  std::vector<void*> ptrs_;
  std::vector<double> times_;
  std::vector<RankOutcome> outcomes_;
  std::vector<char> in_step_failure_;
  std::vector<RankResources*> resources_;
  std::mutex drain_mutex_;
  std::condition_variable drain_cv_;
  int drained_ = 0;
  std::vector<char> drained_rank_;
  std::mutex json_mutex_;
  std::vector<Json> json_slots_;
};

}  // namespace mgbench::bench
