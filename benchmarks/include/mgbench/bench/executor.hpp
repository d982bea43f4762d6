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

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mgbench/model/group.hpp"
#include "mgbench/core/params.hpp"

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

  // Blocks until every rank of the group arrives (throws RankFailure once the group failed).
  void barrier() const;
  // This rank failed where the others may wait for it (between collectives): every rank's
  // current and next barrier throws RankFailure, and the NCCL communicators are aborted.
  // The group ends; call it from a catch and rethrow.
  void fail_group(const std::string& reason) const;
  // Exchanges one pointer per rank (e.g. peer buffers); every rank must call it. With a
  // process per GPU only the values travel: a peer's address is not usable there.
  std::vector<void*> all_gather_ptr(void* mine) const;
  // Whether every rank of the group runs in this process (one thread per GPU), so that a
  // peer's device address from all_gather_ptr can be used.
  bool ranks_share_process() const;
  // Times `enqueue` the way the main loop does (gate, events, slowest rank), `samples`
  // times, and returns the median seconds per call. Collective: every rank calls it with
  // the same `samples`. For secondary measurements such as a step-time breakdown.
  double collective_time(const std::function<void()>& enqueue, int samples) const;
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
  bool needs_peer_access = false;  // enable peer access between all pairs where possible
};

GroupRunner make_runner(RankPointFactory factory, MetricsFn metrics, RunnerOptions options = {});

}  // namespace mgbench::bench
