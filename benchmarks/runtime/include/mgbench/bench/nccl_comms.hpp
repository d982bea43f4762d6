#pragma once
// One NCCL communicator per rank of a group, all in this process (one GPU per rank), created
// once per group: blocking, as nccl-tests and frameworks create theirs (on a non-blocking one
// NCCL runs every call of two ranks or more through a thread of its own and returns
// ncclInProgress: tens of microseconds a call that would be timed too), split from a
// non-blocking bootstrap communicator so that creating them is bounded and abortable. A watchdog
// thread polls ncclCommGetAsyncError; past the armed deadline, or on an asynchronous error,
// it aborts every communicator so a hung collective returns instead of hanging the worker.
//
// Thread safety: NCCL forbids using a communicator while another thread aborts it (the
// abort frees it). Rank threads therefore issue NCCL calls through call() / nccl_call()
// (the collectives as collective_call() builds them, the only place that names them),
// which hold the rank's lock for the duration of the call (an enqueue: short, except where NCCL
// connects lazily to its peers) and refuse once an abort has started; the watchdog takes the
// same lock before ncclCommAbort (it waits at most 2 s for it, then aborts anyway, which is
// how NCCL ends a call blocked on a peer, rather than hang). Waiting on the GPU
// (cudaStreamSynchronize, events) needs no lock: an abort makes NCCL's kernels return.
//
// NVLink SHARP (NCCL_NVLS_ENABLE) is NCCL's default unless the user sets the variable or
// `sweep --nvls`: nothing here changes it (docs/METHODOLOGY.md).
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/bench/collective_kind.hpp"

namespace mgbench::bench {

// One operation of a collective workload on one rank.
struct CollectiveOp {
  collective::Kind kind = collective::Kind::allreduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // NCCL's count argument (collective_math.hpp)
  ncclDataType_t type = ncclFloat32;
  int root = 0;  // broadcast, reduce
  cudaStream_t stream = nullptr;
};
// The NCCL call of `op`, to be issued through NcclComms::call() or nccl_call() (which pass the
// communicator): ncclAllReduce, ncclAllGather, ncclReduceScatter, ncclBroadcast, ncclReduce
// (sums); send/recv as nccl-tests' sendrecv_perf (in one group, to rank + 1 and from rank - 1);
// all-to-all as one group of a send and a receive of `count` elements with every rank (what
// NCCL's own ncclAlltoAll enqueues). nccl_collectives.cpp is the only file that names these
// NCCL functions (a unit test keeps it so).
std::function<ncclResult_t(ncclComm_t)> collective_call(const CollectiveOp& op);
// "ncclAllGather", "ncclSend/ncclRecv": the call, for messages.
const char* collective_call_name(collective::Kind kind);

class NcclComms {
 public:
  // Creates the communicators (one thread: ncclCommInitRankConfig with blocking = 0 for every
  // device inside one ncclGroupStart/End, then ncclCommSplit of each into a blocking one, then
  // the bootstrap ones finalized); waits for both steps to finish or `timeout_s` to pass (then
  // aborts what was created and throws EnvironmentError). NCCL_COMM_BLOCKING, when the user
  // sets it, overrides both configs (NCCL's rule); call() handles either mode.
  NcclComms(const std::vector<int>& devices, double timeout_s);
  // One communicator of a group spread over processes (one per GPU): rank `rank` of `nranks`
  // on `device`, joined through `unique_id` (new_unique_id() of rank 0, sent to every rank).
  // comm(0) is this process's communicator.
  NcclComms(int device, int rank, int nranks, const std::string& unique_id, double timeout_s);
  static std::string new_unique_id();  // an ncclUniqueId as bytes
  // Finalizes and destroys the communicators (aborts them when they do not quiesce within
  // a few seconds, or after an abort/error). Joins the watchdog first.
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  ncclComm_t comm(int rank) const { return comms_.at(rank); }
  int size() const { return static_cast<int>(comms_.size()); }
  const std::vector<int>& devices() const { return devices_; }

  // The watchdog's arming: whether a deadline is set, for how long, and until when.
  struct Arming {
    bool armed = false;
    double seconds = 0;
    std::chrono::steady_clock::time_point deadline;
  };
  // Arms the watchdog for one operation window: if not disarmed within timeout_s, or if a
  // communicator reports an async error, every communicator is aborted. Re-arming moves
  // the deadline. Returns the previous arming, so that a window nested in another (a timed
  // sample inside the verification) can hand the outer deadline back with restore().
  // Callable from any thread.
  Arming arm(double timeout_s);
  void restore(const Arming& previous);
  void disarm() { restore(Arming{}); }
  // The seconds of the current arming (0 when disarmed).
  double armed_for_s() const;
  // Aborts every communicator now (idempotent; the first reason is kept).
  void abort(const std::string& reason);
  bool aborted() const { return aborted_.load(); }
  std::string abort_reason() const;

  // Issues one NCCL call on rank `rank`'s communicator under the rank's lock (see above),
  // then waits until it is no longer ncclInProgress (only where NCCL_COMM_BLOCKING=0 made the
  // communicator non-blocking: yielding for a millisecond, then sleeping between polls).
  // Throws EnvironmentError when the communicators were aborted, ApiError when the call or the
  // communicator fails.
  void call(int rank, const std::function<ncclResult_t(ncclComm_t)>& fn, const char* what);
  // The sum all-reduce of `count` elements on rank `rank`'s communicator, enqueued on `stream`
  // through call(): in place when send == recv. Throws as call() does.
  void allreduce(int rank, const void* send, void* recv, std::size_t count,
                 ncclDataType_t type, cudaStream_t stream);
  // Waits for a non-blocking NCCL call on rank `rank` to complete (ncclInProgress polling);
  // throws on error or abort.
  void wait_ready(int rank) const;

  // The live NcclComms that owns `comm` (nullptr when none) and the rank of `comm` in it.
  static NcclComms* owner_of(ncclComm_t comm, int* rank);

 private:
  struct Watchdog;
  void abort_all(const std::string& reason);
  void watchdog_main();

  void init(const ncclUniqueId& id, int first_rank, int nranks, double timeout_s);

  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::atomic<bool> aborted_{false};
  std::unique_ptr<Watchdog> watchdog_;
};

// Issues one NCCL call on `comm`: through its owning NcclComms::call() when it has one,
// otherwise directly (then polling ncclInProgress). For workloads that only hold env.comm.
void nccl_call(ncclComm_t comm, const std::function<ncclResult_t(ncclComm_t)>& fn,
               const char* what);

// The sum all-reduce on `comm` through nccl_call() (NcclComms::allreduce when it has an
// owner).
void nccl_allreduce(ncclComm_t comm, const void* send, void* recv, std::size_t count,
                    ncclDataType_t type, cudaStream_t stream);

// Sets NCCL variables for the communicators created while it lives (NCCL reads NCCL_ALGO and
// NCCL_PROTO when a communicator is created) and restores the process's own values (or their
// absence) when it ends. The environment is process-wide: create it only where no other thread
// of the process creates communicators or reads these variables (the executor does, between the
// stretches of a group, with no rank thread running).
class ScopedNcclEnv {
 public:
  explicit ScopedNcclEnv(const std::vector<std::pair<std::string, std::string>>& variables);
  ~ScopedNcclEnv();
  ScopedNcclEnv(const ScopedNcclEnv&) = delete;
  ScopedNcclEnv& operator=(const ScopedNcclEnv&) = delete;

 private:
  struct Saved {
    std::string name;
    bool was_set = false;
    std::string value;
  };
  std::vector<Saved> saved_;
};

// NCCL versions: as compiled against (NCCL_VERSION_CODE) and as loaded (ncclGetVersion,
// 0 when unknown).
int nccl_version_built();
int nccl_version_loaded();

}  // namespace mgbench::bench
