// The collectives of one rank of the transformer step (see transformer_comm.hpp).
#include "training/transformer_comm.hpp"

#include <chrono>
#include <string>

#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/bench/watchdog_deadline.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench::bench::transformer {

namespace {

constexpr auto kMonitorPeriod = std::chrono::milliseconds(10);
constexpr auto kAbortLockWait = std::chrono::seconds(2);
constexpr auto kSplitPoll = std::chrono::microseconds(200);

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::bf16: return ncclBfloat16;
    case DType::fp16: return ncclFloat16;
    default: return ncclFloat32;
  }
}

}  // namespace

struct StepComms::Split {
  int device = 0;
  ncclComm_t comm = nullptr;
  std::timed_mutex mutex;  // held around every call on `comm` and around its abort
  bool aborted = false;    // guarded by mutex

  // Aborts the communicator once (waits at most kAbortLockWait for a call in progress).
  void abort() {
    std::unique_lock<std::timed_mutex> lock(mutex, std::defer_lock);
    const bool locked = lock.try_lock_for(kAbortLockWait);
    if (comm != nullptr && !aborted) {
      (void)cudaSetDevice(device);
      MGBENCH_NCCL_CHECK_NOEXCEPT(ncclCommAbort(comm));
      aborted = true;
    }
    if (locked) lock.unlock();
  }
};

StepComms::StepComms(const RankEnv& env, const StepConfig& cfg) : group_comm_(env.comm) {
  if (group_comm_ == nullptr) throw EnvironmentError("transformer_step: no NCCL communicator");
  dp_size_ = cfg.dp();
  tp_rank_ = env.rank % cfg.tp;
  dp_rank_ = env.rank / cfg.tp;
  if (cfg.strategy != Strategy::tp_dp) return;
  tp_ = std::make_unique<Split>();
  dp_ = std::make_unique<Split>();
  tp_->device = dp_->device = env.device;
  try {
    split(env, cfg);
  } catch (...) {
    tp_->abort();
    dp_->abort();
    throw;
  }
  monitor_ = std::thread([this] { monitor(); });
}

StepComms::~StepComms() {
  stop_.store(true);
  if (monitor_.joinable()) monitor_.join();
  // Every op of the point has finished (the point synchronised its streams): aborting frees the
  // split communicators without a collective teardown that a failed peer could hang.
  if (tp_) tp_->abort();
  if (dp_) dp_->abort();
}

void StepComms::split(const RankEnv& env, const StepConfig& cfg) {
  const double timeout_s = watchdog_deadline_s(*env.settings, 1.0);
  // The group's communicator is blocking, so a split blocks until every rank has joined: the
  // first rank of its owner arms the owner's watchdog (an abort of the parent also ends its
  // children's init). The children are blocking too: what NCCL's users time.
  int local = 0;
  NcclComms* owner = NcclComms::owner_of(group_comm_, &local);
  const bool arms = owner != nullptr && local == 0;
  const NcclComms::Arming previous = arms ? owner->arm(timeout_s) : NcclComms::Arming{};
  try {
    split_both(env, cfg, timeout_s);
  } catch (...) {
    if (arms) owner->restore(previous);
    throw;
  }
  if (arms) owner->restore(previous);
}

void StepComms::split_both(const RankEnv& env, const StepConfig& cfg, double timeout_s) {
  for (Split* target : {tp_.get(), dp_.get()}) {
    const bool tp_group = target == tp_.get();
    const int color = tp_group ? env.rank / cfg.tp : env.rank % cfg.tp;
    const int key = tp_group ? env.rank % cfg.tp : env.rank / cfg.tp;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;
    nccl_call(
        group_comm_,
        [&](ncclComm_t parent) {
          return ncclCommSplit(parent, color, key, &target->comm, &config);
        },
        "ncclCommSplit");
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(timeout_s));
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
      if (target->comm == nullptr) break;
      MGBENCH_NCCL_CHECK(ncclCommGetAsyncError(target->comm, &state));
      if (state == ncclInProgress && std::chrono::steady_clock::now() > deadline) {
        throw EnvironmentError("transformer_step: splitting the communicator timed out");
      }
      if (state == ncclInProgress) std::this_thread::sleep_for(kSplitPoll);
    }
    if (target->comm == nullptr || state != ncclSuccess) {
      throw EnvironmentError(std::string("transformer_step: ncclCommSplit failed: ") +
                             ncclGetErrorString(state));
    }
  }
}

void StepComms::monitor() {
  while (!stop_.load()) {
    int rank = 0;
    NcclComms* owner = NcclComms::owner_of(group_comm_, &rank);
    if (owner != nullptr && owner->aborted()) {
      tp_->abort();
      dp_->abort();
      return;
    }
    std::this_thread::sleep_for(kMonitorPeriod);
  }
}

void StepComms::issue(Split* split, ncclComm_t group_comm,
                      const std::function<ncclResult_t(ncclComm_t)>& fn, const char* what) {
  if (split == nullptr) {
    nccl_call(group_comm, fn, what);
    return;
  }
  std::lock_guard<std::timed_mutex> lock(split->mutex);
  if (split->aborted) {
    throw EnvironmentError(std::string(what) + ": the communicators were aborted");
  }
  nccl_call(split->comm, fn, what);
}

void StepComms::tp_allreduce(void* data, std::size_t count, DType dtype, cudaStream_t stream) {
  counted_.all_reduce_tp += static_cast<double>(count * kernels::dtype_size(dtype));
  if (!tp_) {
    nccl_allreduce(group_comm_, data, data, count, nccl_type(dtype), stream);
    return;
  }
  std::lock_guard<std::timed_mutex> lock(tp_->mutex);
  if (tp_->aborted) throw EnvironmentError("TP all-reduce: the communicators were aborted");
  nccl_allreduce(tp_->comm, data, data, count, nccl_type(dtype), stream);
}

void StepComms::dp_allreduce(float* data, std::size_t count, cudaStream_t stream) {
  counted_.all_reduce_dp += static_cast<double>(count * sizeof(float));
  if (!dp_) {
    nccl_allreduce(group_comm_, data, data, count, ncclFloat32, stream);
    return;
  }
  std::lock_guard<std::timed_mutex> lock(dp_->mutex);
  if (dp_->aborted) throw EnvironmentError("DP all-reduce: the communicators were aborted");
  nccl_allreduce(dp_->comm, data, data, count, ncclFloat32, stream);
}

void StepComms::all_gather(const void* shard, void* full, std::size_t shard_count, DType dtype,
                           cudaStream_t stream) {
  counted_.all_gather += static_cast<double>(shard_count * static_cast<std::size_t>(dp_size_) *
                                             kernels::dtype_size(dtype));
  issue(dp_.get(), group_comm_,
        collective_call({collective::Kind::allgather, shard, full, shard_count, nccl_type(dtype),
                         0, stream}),
        "ncclAllGather");
}

void StepComms::reduce_scatter(const float* full, float* shard, std::size_t shard_count,
                               cudaStream_t stream) {
  counted_.reduce_scatter +=
      static_cast<double>(shard_count * static_cast<std::size_t>(dp_size_) * sizeof(float));
  issue(dp_.get(), group_comm_,
        collective_call({collective::Kind::reducescatter, full, shard, shard_count, ncclFloat32,
                         0, stream}),
        "ncclReduceScatter");
}

}  // namespace mgbench::bench::transformer
