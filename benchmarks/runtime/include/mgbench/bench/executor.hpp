#pragma once
// The shared group executor: one host thread per GPU, a start gate so that every rank
// starts each sample together, per-rank CUDA-event timing, the stopping rule, and the
// per-point protocol (setup -> warm-up -> samples -> verify) that every workload follows.
//
// A workload provides a factory that builds one RankPoint per rank and point. Its
// constructor is the setup (allocation, initialisation: outside the timed region; throw
// OutOfMemoryError / WaivedError as needed), enqueue() is the timed region (enqueue only),
// verify() is mandatory.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mgbench/bench/nccl_stretches.hpp"
#include "mgbench/bench/rank_slots.hpp"
#include "mgbench/model/group.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/measurement.hpp"
#include "mgbench/model/point_quality.hpp"

namespace mgbench::bench {

class GroupShared;

struct Verification {
  bool ok = true;
  std::string message;               // why it is wrong (empty when ok)
  Json details = Json::object();     // e.g. {"max_rel_error": 1e-3, "wrong": 0}
};

// Everything one rank sees while running a point.
struct RankEnv {
  int rank = 0;
  int nranks = 1;
  int device = 0;                 // CUDA ordinal
  cudaStream_t stream = nullptr;  // the timed stream
  cudaStream_t comm_stream = nullptr;  // a second stream (communication); join back into `stream`
  ncclComm_t comm = nullptr;      // set when the workload asked for NCCL
  const Params* params = nullptr;
  const RunSettings* settings = nullptr;
  GroupShared* shared = nullptr;
  TimingMethod timing = TimingMethod::device;  // how this point's samples are timed
  CacheMode cache = CacheMode::hot;            // whether its operands rotate through > 2 x L2

  // The buffer sets this point should cycle through for `set_bytes` per op: one when hot,
  // enough to exceed twice this device's L2 when cold (bounded by half the free memory and
  // kMaxRotationSets). The workload allocates them and counts them in its peak_bytes.
  // `max_sets` lowers the cap (e.g. to what every rank of a group can hold).
  Rotation rotation(std::size_t set_bytes, std::size_t max_sets = kMaxRotationSets) const;
  // rotation() with the same number of sets on every rank: the fewest any rank's memory holds
  // (collective; every rank calls it with the same `set_bytes`), so that every rank issues the
  // same ops over its sets. limited_by says "a peer's memory" when a peer lowered the count.
  Rotation agreed_rotation(std::size_t set_bytes) const;
  // What this rank's GPU can do (HBM peak, links; point_quality.hpp), unknowns left zero.
  HardwareLimits hardware_limits() const;

  // Blocks until every rank of the group arrives (throws RankFailure once the group failed).
  void barrier() const;
  // This rank failed where the others may wait for it (between collectives): every rank's
  // current and next barrier throws RankFailure, and the NCCL communicators are aborted.
  // The group ends; call it from a catch and rethrow.
  void fail_group(const std::string& reason) const;
  // Exchanges one pointer per rank (e.g. peer buffers); every rank must call it. With a
  // process per GPU only the values travel: a peer's address is not usable there.
  std::vector<void*> all_gather_ptr(void* mine) const;
  // Exchanges one JSON value per rank, in rank order (collective; host memory only).
  std::vector<Json> all_gather_json(Json mine) const;
  // Each of this rank's counts summed over the ranks (collective: every rank calls it once; a
  // rank that failed passes none and adds nothing), e.g. the wrong and checked elements of a
  // verification, so that a mismatch on any rank shows in the point's counts.
  std::vector<std::uint64_t> sum_over_ranks(const std::vector<std::uint64_t>& mine) const;
  // Whether every rank of the group runs in this process (one thread per GPU), so that a
  // peer's device address from all_gather_ptr can be used.
  bool ranks_share_process() const;
  // This rank's slot among the ranks of this process: the index of per-rank state a workload
  // keeps for the whole group (RankSlots, rank_slots.hpp).
  RankSlot slot() const;
  // Times `enqueue` the way the main loop does (events, slowest rank), `samples` times, and
  // returns the median seconds per call: behind the start gate with `method` device, launched
  // by the host after the ranks meet otherwise (host, graph: then `enqueue` may hold any number
  // of kernels and collectives; behind a closed gate at most kMaxNcclOpsPerSample collectives,
  // watchdog_deadline.hpp). Collective: every rank calls it with the same arguments. For
  // secondary measurements such as a step-time breakdown.
  double collective_time(const std::function<void()>& enqueue, int samples,
                         TimingMethod method = TimingMethod::device) const;
};

class RankPoint {
 public:
  virtual ~RankPoint() = default;
  // The timed region: enqueue work on env.stream only (no host synchronisation).
  virtual void enqueue() = 0;
  // Called after sampling; the harness poisons nothing: each workload poisons its own
  // outputs in its constructor and checks them here.
  virtual Verification verify() = 0;
  // Optional per-rank details merged into the point (e.g. {"peak_bytes": ...}).
  virtual Json rank_details() { return Json::object(); }
};

using RankPointFactory = std::function<std::unique_ptr<RankPoint>(RankEnv& env)>;
// Derived metrics from the headline seconds per op (slowest rank, median).
using MetricsFn = std::function<Json(const Params& params, int nranks, double seconds)>;

struct RunnerOptions {
  bool needs_nccl = false;         // create one communicator per rank once per group
  // Used when a point has no "timing" / "cache" parameter (see measurement.hpp).
  TimingMethod default_timing = TimingMethod::device;
  CacheMode default_cache = CacheMode::hot;
  // Points for which the executor also times the ops with the other launch method (device
  // when the point's method is host or graph, else host) and records both medians as
  // metrics "device_time_us" and "host_time_us": launch cost side by side with device time.
  std::function<bool(const Params&)> time_both;
  // Metrics checked against what the hardware can produce (flagged when above).
  std::vector<LimitCheck> limits;
  // The NCCL variables a point's communicators must be created with (e.g. NCCL_ALGO, which NCCL
  // reads when a communicator is created, not per call). Consecutive points that ask for the
  // same variables share the group's communicators; where the variables change, the executor
  // ends the stretch (every rank idle), destroys the communicators and creates new ones with the
  // variables set, restoring the process's own values right after. Each such point records the
  // values in extra.nccl_env. Unset or empty: one stretch, the process's environment.
  NcclEnvFn nccl_env;
};

GroupRunner make_runner(RankPointFactory factory, MetricsFn metrics, RunnerOptions options = {});

}  // namespace mgbench::bench
