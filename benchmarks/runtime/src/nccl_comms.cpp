// NcclComms: the blocking communicators of one group (split from a non-blocking bootstrap so
// that creating them is bounded), the abort watchdog and guarded NCCL calls (see
// nccl_comms.hpp).
#include "mgbench/bench/nccl_comms.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/bench/device_restore.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"

namespace mgbench::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kWatchdogPeriod = std::chrono::milliseconds(10);
constexpr auto kAbortLockWait = std::chrono::seconds(2);
constexpr auto kReadyPoll = std::chrono::microseconds(20);
constexpr auto kReadySpin = std::chrono::milliseconds(1);  // yield, not sleep, this long
constexpr double kDestroyTimeoutS = 10.0;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(std::max(seconds, 0.0)));
}

// One wait between two polls of an ncclInProgress call that started at `since`: a yield for
// the first millisecond (a sleep costs tens of microseconds, more than a small collective),
// then kReadyPoll.
void pause_poll(Clock::time_point since) {
  if (Clock::now() - since < kReadySpin) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(kReadyPoll);
  }
}

// Communicators of every live NcclComms, so that a workload holding only env.comm can
// issue guarded calls.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<ncclComm_t, std::pair<NcclComms*, int>>& registry() {
  static std::map<ncclComm_t, std::pair<NcclComms*, int>> r;
  return r;
}

std::string nccl_error_text(ncclComm_t comm, ncclResult_t result) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

[[noreturn]] void throw_nccl(ncclResult_t result, const std::string& text, const char* what) {
  throw_api_error("NCCL", static_cast<int>(result), "ncclResult_t", text.c_str(), what, __FILE__,
                  __LINE__, false);
}

}  // namespace

struct NcclComms::Watchdog {
  std::vector<std::unique_ptr<std::timed_mutex>> rank_locks;  // held around every NCCL call
  std::atomic<bool> aborting{false};
  double call_timeout_s = 300.0;  // an NCCL call may stay in progress this long

  std::mutex mutex;  // guards everything below
  std::condition_variable cv;
  bool stop = false;
  bool armed = false;
  double armed_for_s = 0;
  Clock::time_point deadline;
  std::string reason;
  std::thread thread;
};

namespace {

// Why creating the communicators failed (empty text: it did not).
struct InitFailure {
  std::string text;
  ncclResult_t code = ncclSuccess;
};

// Aborts every communicator created so far.
void abort_created(const std::vector<int>& devices, std::vector<ncclComm_t>& comms) {
  for (std::size_t r = 0; r < comms.size(); ++r) {
    if (comms[r] == nullptr) continue;
    (void)cudaSetDevice(devices[r]);
    MGBENCH_NCCL_CHECK_NOEXCEPT(ncclCommAbort(comms[r]));
    comms[r] = nullptr;
  }
}

// Starts the non-blocking init of this process's bootstrap communicators (ranks first_rank.. of
// nranks). One thread initialises every rank: the calls must be grouped.
InitFailure start_init(const std::vector<int>& devices, std::vector<ncclComm_t>& comms,
                       const ncclUniqueId& id, int first_rank, int nranks) {
  const int n = static_cast<int>(devices.size());
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  InitFailure failure;
  MGBENCH_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < n && failure.text.empty(); ++r) {
    const cudaError_t set = cudaSetDevice(devices[r]);
    if (set != cudaSuccess) {
      failure = {fmt::format("cudaSetDevice({}): {}", devices[r], cudaGetErrorString(set)),
                 ncclUnhandledCudaError};
      break;
    }
    const ncclResult_t res =
        ncclCommInitRankConfig(&comms[r], nranks, id, first_rank + r, &config);
    if (res != ncclSuccess && res != ncclInProgress) {
      failure = {fmt::format("ncclCommInitRankConfig(rank {}): {}", first_rank + r,
                             ncclGetErrorString(res)),
                 res};
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  if (failure.text.empty() && end != ncclSuccess && end != ncclInProgress) {
    failure = {fmt::format("ncclGroupEnd after ncclCommInitRankConfig: {}",
                           ncclGetErrorString(end)),
               end};
  }
  return failure;
}

// Polls every non-blocking communicator until it leaves ncclInProgress (its init, or the
// splits it parents, finished). Sets *timed_out (and returns no failure) when `deadline`
// passes first.
InitFailure wait_init(const std::vector<int>& devices, const std::vector<ncclComm_t>& comms,
                      Clock::time_point deadline, bool* timed_out) {
  for (std::size_t r = 0; r < comms.size(); ++r) {
    while (true) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t res = ncclCommGetAsyncError(comms[r], &state);
      if (res != ncclSuccess) {
        return {fmt::format("ncclCommGetAsyncError(rank {}): {}", r, ncclGetErrorString(res)),
                res};
      }
      if (state == ncclSuccess) break;
      if (state != ncclInProgress) {
        return {fmt::format("NCCL init of rank {} (device {}) failed: {}", r, devices[r],
                            nccl_error_text(comms[r], state)),
                state};
      }
      if (Clock::now() > deadline) {
        *timed_out = true;
        return {};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return {};
}

// Splits every bootstrap communicator into a blocking one of the same ranks in the same order,
// in one group. The split runs in the background (its parents are non-blocking): wait_init on
// `boot` bounds it, and `comms` are set once it has finished.
InitFailure start_split(const std::vector<ncclComm_t>& boot, std::vector<ncclComm_t>& comms,
                        int first_rank) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  InitFailure failure;
  MGBENCH_NCCL_CHECK(ncclGroupStart());
  for (std::size_t r = 0; r < boot.size() && failure.text.empty(); ++r) {
    const int rank = first_rank + static_cast<int>(r);
    const ncclResult_t res = ncclCommSplit(boot[r], 0, rank, &comms[r], &config);
    if (res != ncclSuccess && res != ncclInProgress) {
      failure = {fmt::format("ncclCommSplit(rank {}): {}", rank, ncclGetErrorString(res)), res};
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  if (failure.text.empty() && end != ncclSuccess && end != ncclInProgress) {
    failure = {fmt::format("ncclGroupEnd after ncclCommSplit: {}", ncclGetErrorString(end)), end};
  }
  return failure;
}

// Finalizes `comms` in one group (one thread drives every device), waits until they are
// quiescent, then destroys them; aborts them instead when that fails or takes more than
// kDestroyTimeoutS. Returns whether they finalized cleanly.
bool release(const std::vector<int>& devices, std::vector<ncclComm_t>& comms) {
  bool clean = ncclGroupStart() == ncclSuccess;
  if (clean) {
    for (std::size_t r = 0; r < comms.size(); ++r) {
      (void)cudaSetDevice(devices[r]);
      const ncclResult_t res = ncclCommFinalize(comms[r]);
      if (res != ncclSuccess && res != ncclInProgress) clean = false;
    }
    const ncclResult_t end = ncclGroupEnd();
    if (end != ncclSuccess && end != ncclInProgress) clean = false;
  }
  const auto deadline = deadline_after(kDestroyTimeoutS);
  for (std::size_t r = 0; r < comms.size() && clean; ++r) {
    while (true) {
      ncclResult_t state = ncclSuccess;
      if (ncclCommGetAsyncError(comms[r], &state) != ncclSuccess) state = ncclInternalError;
      if (state == ncclSuccess) break;
      if (state != ncclInProgress || Clock::now() > deadline) {
        clean = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  for (std::size_t r = 0; r < comms.size(); ++r) {
    (void)cudaSetDevice(devices[r]);
    if (clean) {
      MGBENCH_NCCL_CHECK_NOEXCEPT(ncclCommDestroy(comms[r]));
    } else {
      MGBENCH_NCCL_CHECK_NOEXCEPT(ncclCommAbort(comms[r]));
    }
    comms[r] = nullptr;
  }
  return clean;
}

// Creates this process's blocking communicators of a group: a non-blocking bootstrap (its
// init bounded by `timeout_s` and abortable), split into blocking ones (bounded the same way),
// then the bootstrap released. Blocking communicators are what nccl-tests and frameworks time:
// on a non-blocking one every call of two ranks or more returns ncclInProgress after starting
// a thread, tens of microseconds a call (docs/METHODOLOGY.md). Throws EnvironmentError on a
// timeout, ApiError when NCCL fails; nothing is left allocated then.
void create_blocking(const std::vector<int>& devices, std::vector<ncclComm_t>& comms,
                     const ncclUniqueId& id, int first_rank, int nranks, double timeout_s) {
  std::vector<ncclComm_t> boot(devices.size(), nullptr);
  const auto deadline = deadline_after(timeout_s);
  InitFailure failure = start_init(devices, boot, id, first_rank, nranks);
  bool timed_out = false;
  if (failure.text.empty()) failure = wait_init(devices, boot, deadline, &timed_out);
  if (failure.text.empty() && !timed_out) failure = start_split(boot, comms, first_rank);
  if (failure.text.empty() && !timed_out) failure = wait_init(devices, boot, deadline, &timed_out);
  const bool made = failure.text.empty() && !timed_out &&
                    std::none_of(comms.begin(), comms.end(), [](ncclComm_t c) { return !c; });
  if (!made) {
    abort_created(devices, boot);  // also ends a split still in progress
    abort_created(devices, comms);
    if (timed_out) {
      throw EnvironmentError(fmt::format(
          "NCCL communicator init for devices [{}] did not finish within {:.3g} s",
          fmt::join(devices, ","), timeout_s));
    }
    if (failure.text.empty()) failure = {"ncclCommSplit gave no communicator", ncclInternalError};
    throw_nccl(failure.code, failure.text, "NcclComms init");
  }
  if (!release(devices, boot)) logging::warn("the NCCL bootstrap communicators were aborted");
}

}  // namespace

std::string NcclComms::new_unique_id() {
  ncclUniqueId id;
  MGBENCH_NCCL_CHECK(ncclGetUniqueId(&id));
  return std::string(id.internal, sizeof(id.internal));
}

NcclComms::NcclComms(const std::vector<int>& devices, double timeout_s)
    : devices_(devices), comms_(devices.size(), nullptr),
      watchdog_(std::make_unique<Watchdog>()) {
  if (devices.empty()) throw UsageError("NCCL communicators need at least one device");
  const std::string id = new_unique_id();
  ncclUniqueId unique;
  std::memcpy(unique.internal, id.data(), sizeof(unique.internal));
  init(unique, 0, size(), timeout_s);
}

NcclComms::NcclComms(int device, int rank, int nranks, const std::string& unique_id,
                     double timeout_s)
    : devices_{device}, comms_(1, nullptr), watchdog_(std::make_unique<Watchdog>()) {
  ncclUniqueId unique;
  if (unique_id.size() != sizeof(unique.internal)) {
    throw EnvironmentError(fmt::format("rank {}: the NCCL unique id has {} bytes, not {}", rank,
                                       unique_id.size(), sizeof(unique.internal)));
  }
  std::memcpy(unique.internal, unique_id.data(), sizeof(unique.internal));
  init(unique, rank, nranks, timeout_s);
}

void NcclComms::init(const ncclUniqueId& id, int first_rank, int nranks, double timeout_s) {
  const int n = size();
  for (int r = 0; r < n; ++r) watchdog_->rank_locks.push_back(std::make_unique<std::timed_mutex>());
  watchdog_->call_timeout_s = timeout_s;

  DeviceRestore restore(devices_);
  create_blocking(devices_, comms_, id, first_rank, nranks, timeout_s);

  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (int r = 0; r < n; ++r) registry()[comms_[r]] = {this, r};
  }
  watchdog_->thread = std::thread([this] { watchdog_main(); });
  logging::debug("NCCL communicators ready on devices [{}] (NCCL {} loaded)",
                 fmt::join(devices_, ","), nccl_version_loaded());
}

NcclComms::~NcclComms() {
  Watchdog& w = *watchdog_;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.stop = true;
  }
  w.cv.notify_all();
  if (w.thread.joinable()) w.thread.join();
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    for (auto it = registry().begin(); it != registry().end();) {
      it = it->second.first == this ? registry().erase(it) : std::next(it);
    }
  }
  if (w.aborting.load()) return;  // abort_all freed them

  DeviceRestore restore(devices_);
  if (!release(devices_, comms_)) {
    logging::warn("NCCL communicators did not finalize cleanly; they were aborted");
  }
}

NcclComms::Arming NcclComms::arm(double timeout_s) {
  Watchdog& w = *watchdog_;
  std::lock_guard<std::mutex> lock(w.mutex);
  const Arming previous{w.armed, w.armed_for_s, w.deadline};
  w.armed = true;
  w.armed_for_s = timeout_s;
  w.deadline = deadline_after(timeout_s);
  return previous;
}

void NcclComms::restore(const Arming& previous) {
  Watchdog& w = *watchdog_;
  std::lock_guard<std::mutex> lock(w.mutex);
  w.armed = previous.armed;
  w.armed_for_s = previous.seconds;
  w.deadline = previous.deadline;
}

double NcclComms::armed_for_s() const {
  Watchdog& w = *watchdog_;
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.armed ? w.armed_for_s : 0.0;
}

void NcclComms::abort(const std::string& reason) { abort_all(reason); }

std::string NcclComms::abort_reason() const {
  Watchdog& w = *watchdog_;
  std::lock_guard<std::mutex> lock(w.mutex);
  return w.reason;
}

void NcclComms::abort_all(const std::string& reason) {
  Watchdog& w = *watchdog_;
  if (w.aborting.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(w.mutex);
    w.reason = reason;
    w.armed = false;
  }
  aborted_.store(true);
  logging::error("aborting the NCCL communicators of devices [{}]: {}", fmt::join(devices_, ","),
                 reason);
  DeviceRestore restore(devices_);
  for (std::size_t r = 0; r < comms_.size(); ++r) {
    std::unique_lock<std::timed_mutex> rank_lock(*w.rank_locks[r], std::defer_lock);
    if (!rank_lock.try_lock_for(kAbortLockWait)) {
      logging::warn("rank {} has been inside an NCCL call for {} s; aborting it anyway", r,
                    std::chrono::duration_cast<std::chrono::seconds>(kAbortLockWait).count());
    }
    if (comms_[r] == nullptr) continue;
    (void)cudaSetDevice(devices_[r]);
    MGBENCH_NCCL_CHECK_NOEXCEPT(ncclCommAbort(comms_[r]));
  }
}

void NcclComms::watchdog_main() {
  Watchdog& w = *watchdog_;
  // A fresh thread's current device is 0: make it one of the group before any CUDA or NCCL
  // call could create a context there.
  (void)cudaSetDevice(devices_.front());
  std::unique_lock<std::mutex> lock(w.mutex);
  while (!w.stop) {
    w.cv.wait_for(lock, kWatchdogPeriod, [&] { return w.stop; });
    if (w.stop || w.aborting.load()) continue;
    if (w.armed && Clock::now() > w.deadline) {
      const std::string reason =
          fmt::format("a collective did not complete within its {:.3g} s deadline",
                      w.armed_for_s);
      lock.unlock();
      abort_all(reason);
      lock.lock();
      continue;
    }
    lock.unlock();
    std::string error;
    for (int r = 0; r < size() && error.empty(); ++r) {
      // Never wait for a rank thread: skip this rank when it is inside a call.
      std::unique_lock<std::timed_mutex> rank_lock(*w.rank_locks[r], std::try_to_lock);
      if (!rank_lock.owns_lock() || w.aborting.load()) continue;
      ncclResult_t state = ncclSuccess;
      const ncclResult_t res = ncclCommGetAsyncError(comms_[r], &state);
      if (res != ncclSuccess) {
        error = fmt::format("rank {}: ncclCommGetAsyncError failed: {}", r,
                            ncclGetErrorString(res));
      } else if (state != ncclSuccess && state != ncclInProgress) {
        error = fmt::format("rank {} (device {}): NCCL asynchronous error: {}", r, devices_[r],
                            nccl_error_text(comms_[r], state));
      }
    }
    if (!error.empty()) abort_all(error);
    lock.lock();
  }
}

void NcclComms::call(int rank, const std::function<ncclResult_t(ncclComm_t)>& fn,
                     const char* what) {
  Watchdog& w = *watchdog_;
  ncclResult_t res;
  {
    std::lock_guard<std::timed_mutex> lock(*w.rank_locks.at(rank));
    if (w.aborting.load()) {
      throw EnvironmentError(
          fmt::format("{}: NCCL communicators aborted: {}", what, abort_reason()));
    }
    res = fn(comms_[rank]);
    if (res != ncclSuccess && res != ncclInProgress) {
      throw_nccl(res, nccl_error_text(comms_[rank], res), what);
    }
  }
  if (res == ncclInProgress) wait_ready(rank);
}

void NcclComms::allreduce(int rank, const void* send, void* recv, std::size_t count,
                          ncclDataType_t type, cudaStream_t stream) {
  call(rank, collective_call({collective::Kind::allreduce, send, recv, count, type, 0, stream}),
       "ncclAllReduce");
}

void NcclComms::wait_ready(int rank) const {
  Watchdog& w = *watchdog_;
  const auto since = Clock::now();
  const auto deadline = deadline_after(w.call_timeout_s);
  while (true) {
    ncclResult_t state = ncclSuccess;
    {
      std::lock_guard<std::timed_mutex> lock(*w.rank_locks.at(rank));
      if (w.aborting.load()) {
        throw EnvironmentError("NCCL communicators aborted: " + abort_reason());
      }
      MGBENCH_NCCL_CHECK(ncclCommGetAsyncError(comms_[rank], &state));
      if (state != ncclSuccess && state != ncclInProgress) {
        throw_nccl(state, nccl_error_text(comms_[rank], state), "ncclCommGetAsyncError");
      }
    }
    if (state == ncclSuccess) return;
    if (Clock::now() > deadline) {
      const std::string reason = fmt::format(
          "an NCCL call on rank {} stayed in progress for {:.3g} s", rank, w.call_timeout_s);
      const_cast<NcclComms*>(this)->abort_all(reason);
      throw EnvironmentError("NCCL communicators aborted: " + reason);
    }
    pause_poll(since);
  }
}

NcclComms* NcclComms::owner_of(ncclComm_t comm, int* rank) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const auto it = registry().find(comm);
  if (it == registry().end()) return nullptr;
  if (rank != nullptr) *rank = it->second.second;
  return it->second.first;
}

void nccl_call(ncclComm_t comm, const std::function<ncclResult_t(ncclComm_t)>& fn,
               const char* what) {
  int rank = 0;
  if (NcclComms* owner = NcclComms::owner_of(comm, &rank)) {
    owner->call(rank, fn, what);
    return;
  }
  ncclResult_t state = fn(comm);
  if (state != ncclSuccess && state != ncclInProgress) {
    throw_nccl(state, nccl_error_text(comm, state), what);
  }
  const auto since = Clock::now();
  while (state == ncclInProgress) {
    pause_poll(since);
    MGBENCH_NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
    if (state != ncclSuccess && state != ncclInProgress) {
      throw_nccl(state, nccl_error_text(comm, state), "ncclCommGetAsyncError");
    }
  }
}

void nccl_allreduce(ncclComm_t comm, const void* send, void* recv, std::size_t count,
                    ncclDataType_t type, cudaStream_t stream) {
  nccl_call(comm,
            collective_call({collective::Kind::allreduce, send, recv, count, type, 0, stream}),
            "ncclAllReduce");
}

ScopedNcclEnv::ScopedNcclEnv(const std::vector<std::pair<std::string, std::string>>& variables) {
  for (const auto& [name, value] : variables) {
    const char* old = std::getenv(name.c_str());
    saved_.push_back({name, old != nullptr, old != nullptr ? old : ""});
    if (::setenv(name.c_str(), value.c_str(), 1) != 0) {
      throw EnvironmentError(fmt::format("cannot set {}={}", name, value));
    }
    logging::debug("NCCL communicators created with {}={}", name, value);
  }
}

ScopedNcclEnv::~ScopedNcclEnv() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->was_set) {
      (void)::setenv(it->name.c_str(), it->value.c_str(), 1);
    } else {
      (void)::unsetenv(it->name.c_str());
    }
  }
}

int nccl_version_built() { return NCCL_VERSION_CODE; }

int nccl_version_loaded() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return 0;
  return version;
}

}  // namespace mgbench::bench
