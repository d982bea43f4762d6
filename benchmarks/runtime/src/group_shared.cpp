// The shared state of a group's rank threads (see group_shared.hpp): outcomes, CUDA
// resources, collectives and the gated timed sample.
#include "group_shared.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/bench/watchdog_deadline.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/gate.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench::bench {

namespace {
// Communicator creation may take this share of the group timeout.
constexpr double kInitShareOfGroupTimeout = 0.5;
}  // namespace

std::unique_ptr<NcclComms> make_group_comms(const GroupSpec& spec, ProcessGroup* processes,
                                            int device) {
  const double timeout_s = std::min(kInitShareOfGroupTimeout * spec.settings.group_timeout_s,
                                    300.0);
  if (processes == nullptr) return std::make_unique<NcclComms>(spec.devices, timeout_s);
  const std::string id = processes->broadcast(
      processes->rank() == 0 ? NcclComms::new_unique_id() : std::string(), "NCCL unique id");
  return std::make_unique<NcclComms>(device, processes->rank(), processes->size(), id, timeout_s);
}

bool is_sticky(int code) {
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

RankOutcome outcome_of(const std::exception_ptr& error, int rank) {
  RankOutcome out;
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemoryError& e) {
    out.status = Status::oom;
    out.message = e.what();
  } catch (const WaivedError& e) {
    out.status = Status::waived;
    out.message = e.what();
  } catch (const ApiError& e) {
    out.status = Status::failed;
    out.message = e.what();
    out.sticky = e.library() == "CUDA" && is_sticky(e.api_code());
  } catch (const std::exception& e) {
    out.status = Status::failed;
    out.message = fmt::format("rank {}: {}", rank, e.what());
  }
  return out;
}

int severity(Status s) {
  switch (s) {
    case Status::ok: return 0;
    case Status::skipped: return 1;
    case Status::waived: return 2;
    case Status::wrong: return 3;
    case Status::oom: return 4;
    case Status::timeout: return 5;
    case Status::failed: return 6;
  }
  return 6;
}

HostFlag::HostFlag(int device) {
  MGBENCH_CUDA_CHECK(cudaSetDevice(device));
  void* memory = nullptr;
  MGBENCH_CUDA_CHECK(
      cudaHostAlloc(&memory, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  flag = static_cast<volatile int*>(memory);
  *flag = 0;
}

HostFlag::~HostFlag() { MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(const_cast<int*>(flag))); }

RankResources::RankResources(int device) {
  MGBENCH_CUDA_CHECK(cudaSetDevice(device));
  // Every host wait of a rank thread (setup, verification, the stop event) blocks instead of
  // spinning or yielding: no wait is timed on the host, and eight spinning rank threads in a
  // small cpuset starve NCCL's proxy threads and the telemetry sampler.
  MGBENCH_CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
  MGBENCH_CUDA_CHECK(cudaEventCreate(&start));
  // The host waits on `stop` but does not time that wait (the events time the GPU): block
  // instead of spinning, so that eight rank threads leave the CPUs to NCCL's proxy threads
  // and the telemetry sampler.
  MGBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  MGBENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&gate_timed_out), sizeof(int),
                                   cudaHostAllocMapped | cudaHostAllocPortable));
  *gate_timed_out = 0;
  MGBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

RankResources::~RankResources() {
  MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(gate_timed_out));
  MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(stop));
  MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(start));
  MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(comm_stream));
  MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
}

GroupShared::GroupShared(const std::vector<int>& devices, const RunSettings& settings,
                         ProcessGroup* processes, int device)
    : processes_(processes),
      n_(processes != nullptr ? processes->size() : static_cast<int>(devices.size())),
      barrier_(processes != nullptr ? 1 : n_), settings_(settings),
      gate_(processes != nullptr ? device : devices.at(0)), enqueue_failed_(n_, 0), ptrs_(n_),
      times_(n_), outcomes_(n_), in_step_failure_(n_, 0), resources_(n_, nullptr),
      drained_rank_(n_, 0) {}

std::string GroupShared::step_name(const char* step) const {
  return where_.empty() ? std::string(step) : where_ + ": " + step;
}

void GroupShared::barrier(int rank, const char* step) {
  if (processes_ != nullptr) {
    processes_->barrier(step_name(step));
  } else {
    barrier_.wait(rank, step);
  }
}

ScopedWatchdog::ScopedWatchdog(NcclComms* comms, bool arm, double seconds)
    : comms_(arm ? comms : nullptr) {
  if (comms_ != nullptr) previous_ = comms_->arm(seconds);
}

ScopedWatchdog::~ScopedWatchdog() {
  if (comms_ != nullptr) comms_->restore(previous_);
}

void GroupShared::fail(int rank, const std::string& reason) {
  if (n_ < 2) return;
  // The other processes may wait for this one in a collective: end them all.
  if (processes_ != nullptr) processes_->abort(reason);
  barrier_.poison(rank, reason);
  if (comms != nullptr) comms->abort(fmt::format("rank {} failed: {}", rank, reason));
}

void GroupShared::drain(int rank, double timeout_s) {
  if (processes_ != nullptr) return;  // no peer in this process reads its buffers
  std::unique_lock<std::mutex> lock(drain_mutex_);
  if (drained_rank_[rank] == 0) {
    drained_rank_[rank] = 1;
    ++drained_;
    drain_cv_.notify_all();
  }
  drain_cv_.wait_for(lock, std::chrono::duration<double>(std::max(timeout_s, 0.0)),
                     [&] { return drained_ >= n_; });
}

bool GroupShared::take_in_step_failure(int rank) {
  const bool was = in_step_failure_[rank] != 0;
  in_step_failure_[rank] = 0;
  return was;
}

std::vector<void*> GroupShared::all_gather_ptr(int rank, void* mine) {
  if (processes_ != nullptr) {  // values only: an address means nothing in another process
    std::vector<void*> all;
    for (const Json& v : gather_json(rank, reinterpret_cast<std::uintptr_t>(mine), "pointers")) {
      all.push_back(reinterpret_cast<void*>(v.get<std::uintptr_t>()));
    }
    return all;
  }
  ptrs_[rank] = mine;
  barrier(rank, "all_gather_ptr");
  std::vector<void*> all = ptrs_;
  barrier(rank, "all_gather_ptr read");  // nobody overwrites a slot before everyone read it
  return all;
}

void GroupShared::enqueue_gated(RankResources& res, int generation,
                                const std::function<void()>& enqueue, int reps,
                                std::uint64_t extra_busy_ns, bool gated) {
  if (gated) {
    MGBENCH_CUDA_CHECK(kernels::launch_start_gate(
        gate_.flag, generation, static_cast<std::uint64_t>(settings_.gate_timeout_s * 1e9),
        res.gate_timed_out, res.stream));
  }
  MGBENCH_CUDA_CHECK(cudaEventRecord(res.start, res.stream));
  for (int i = 0; i < reps; ++i) enqueue();
  if (extra_busy_ns > 0) {
    MGBENCH_CUDA_CHECK(kernels::launch_busy_wait(extra_busy_ns, res.stream));
  }
  MGBENCH_CUDA_CHECK(cudaEventRecord(res.stop, res.stream));
}

double GroupShared::finish_sample(RankResources& res) {
  MGBENCH_CUDA_CHECK(cudaEventSynchronize(res.stop));
  float ms = 0;
  MGBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, res.start, res.stop));
  if (*res.gate_timed_out) throw EnvironmentError("the start gate was not released in time");
  return ms * 1e-3;
}

std::pair<double, double> GroupShared::timed_sample(int rank,
                                                    const std::function<void()>& enqueue,
                                                    int reps, std::uint64_t extra_busy_ns,
                                                    bool gated) {
  RankResources& res = resources(rank);
  const int generation = next_generation_ + 1;  // identical on all ranks (read before barrier)
  std::exception_ptr error;
  *res.gate_timed_out = 0;  // the previous gate kernel has finished
  if (!gated) barrier(rank, "sample: launch together");
  try {
    enqueue_gated(res, generation, enqueue, reps, extra_busy_ns, gated);
  } catch (...) {
    error = std::current_exception();
  }
  enqueue_failed_[rank] = error ? 1 : 0;
  if (processes_ != nullptr) {  // every process learns who failed, then opens its own gate
    const std::vector<Json> failed =
        gather_json(rank, static_cast<int>(enqueue_failed_[rank]), "start gates enqueued");
    for (int r = 0; r < n_; ++r) enqueue_failed_[r] = failed[r].get<int>() != 0 ? 1 : 0;
  } else {
    barrier(rank, "sample: enqueued");  // everything enqueued behind the gates
  }
  std::unique_ptr<ScopedWatchdog> watchdog;
  if (arms_watchdog(rank)) open_gate(generation, reps, extra_busy_ns, watchdog);
  double mine = 0;
  if (!error) {
    try {
      mine = finish_sample(res);
    } catch (...) {
      error = std::current_exception();
    }
  }
  const RankOutcome own = error ? outcome_of(error, rank) : RankOutcome{};
  const SampleRound round = processes_ != nullptr
                                ? settle_processes(mine, own, watchdog)
                                : settle_threads(rank, mine, own, watchdog);
  if (round.aborted) {  // one reading for every rank: they all throw, or none does
    in_step_failure_[rank] = 1;
    throw EnvironmentError("NCCL communicators aborted" +
                           (comms != nullptr && comms->aborted() ? ": " + comms->abort_reason()
                                                                 : " on another rank"));
  }
  if (round.worst.status != Status::ok) {
    in_step_failure_[rank] = 1;
    if (error) std::rethrow_exception(error);
    throw EnvironmentError("another rank failed: " + round.worst.message);
  }
  return {round.slowest, mine};
}

GroupShared::SampleRound GroupShared::settle_threads(int rank, double mine, const RankOutcome& own,
                                                     std::unique_ptr<ScopedWatchdog>& watchdog) {
  times_[rank] = mine;
  outcomes_[rank] = own;
  barrier(rank, "sample: measured");
  watchdog.reset();
  if (rank == 0) aborted_slot_ = comms != nullptr && comms->aborted();
  SampleRound round;
  for (int r = 0; r < n_; ++r) {
    round.slowest = std::max(round.slowest, times_[r]);
    if (severity(outcomes_[r].status) > severity(round.worst.status)) round.worst = outcomes_[r];
  }
  barrier(rank, "sample: combined");  // slots may be reused after this
  round.aborted = aborted_slot_;
  return round;
}

GroupShared::SampleRound GroupShared::settle_processes(double mine, const RankOutcome& own,
                                                       std::unique_ptr<ScopedWatchdog>& watchdog) {
  watchdog.reset();
  const Json sample{{"seconds", mine},
                    {"status", to_string(own.status)},
                    {"message", own.message},
                    {"aborted", comms != nullptr && comms->aborted()}};
  SampleRound round;
  for (const Json& r : gather_json(processes_->rank(), sample, "times measured")) {
    round.slowest = std::max(round.slowest, r.at("seconds").get<double>());
    round.aborted = round.aborted || r.at("aborted").get<bool>();
    const Status status = status_from_string(r.at("status").get<std::string>());
    if (severity(status) > severity(round.worst.status)) {
      round.worst = {status, r.at("message").get<std::string>(), false};
    }
  }
  return round;
}

void GroupShared::open_gate(int generation, int reps, std::uint64_t extra_busy_ns,
                            std::unique_ptr<ScopedWatchdog>& watchdog) {
  next_generation_ = generation;
  const double expected = static_cast<double>(reps) * op_estimate_s_ +
                          static_cast<double>(extra_busy_ns) * 1e-9;
  watchdog =
      std::make_unique<ScopedWatchdog>(comms, true, watchdog_deadline_s(settings_, expected));
  // The gate opens in any case (every rank's queue drains, the gate kernels end); when a
  // rank could not enqueue its part, the others' collectives can never complete: abort now
  // rather than wait out the deadline.
  __atomic_store_n(const_cast<int*>(gate_.flag), generation, __ATOMIC_RELEASE);
  for (int r = 0; r < n_; ++r) {
    if (enqueue_failed_[r] != 0 && comms != nullptr) {
      comms->abort(fmt::format("rank {} failed to enqueue its part of a timed sample", r));
      break;
    }
  }
}

RankOutcome GroupShared::combine(int rank, const RankOutcome& mine) {
  if (processes_ != nullptr) {
    RankOutcome worst;
    const Json own{{"status", to_string(mine.status)}, {"message", mine.message},
                   {"sticky", mine.sticky}};
    for (const Json& r : gather_json(rank, own, "outcomes")) {
      const Status status = status_from_string(r.at("status").get<std::string>());
      if (severity(status) > severity(worst.status)) {
        worst.status = status;
        worst.message = r.at("message").get<std::string>();
      }
      worst.sticky = worst.sticky || r.at("sticky").get<bool>();
    }
    return worst;
  }
  outcomes_[rank] = mine;
  barrier(rank, "combine");
  RankOutcome worst;
  for (int r = 0; r < n_; ++r) {
    if (severity(outcomes_[r].status) > severity(worst.status)) worst = outcomes_[r];
    worst.sticky = worst.sticky || outcomes_[r].sticky;
  }
  barrier(rank, "combine read");
  return worst;
}

std::vector<Json> GroupShared::gather_json(int rank, Json value, const char* step) {
  if (processes_ != nullptr) {
    std::vector<Json> all;
    for (const std::string& text : processes_->all_gather(dump_json(value), step_name(step))) {
      all.push_back(Json::parse(text));
    }
    return all;
  }
  {
    std::lock_guard<std::mutex> lock(json_mutex_);
    if (json_slots_.size() != static_cast<std::size_t>(n_)) json_slots_.assign(n_, Json());
    json_slots_[rank] = std::move(value);
  }
  barrier(rank, "gather");
  std::vector<Json> all = json_slots_;
  barrier(rank, "gather read");
  return all;
}

std::vector<double> GroupShared::gather_double(int rank, double value, const char* step) {
  if (processes_ != nullptr) {
    std::vector<double> all;
    for (const Json& v : gather_json(rank, value, step)) all.push_back(v.get<double>());
    return all;
  }
  times_[rank] = value;
  barrier(rank, "gather");
  std::vector<double> all = times_;
  barrier(rank, "gather read");
  return all;
}

void RankEnv::barrier() const { shared->barrier(rank, "workload barrier"); }

void RankEnv::fail_group(const std::string& reason) const { shared->fail(rank, reason); }

std::vector<void*> RankEnv::all_gather_ptr(void* mine) const {
  return shared->all_gather_ptr(rank, mine);
}

std::vector<Json> RankEnv::all_gather_json(Json mine) const {
  return shared->gather_json(rank, std::move(mine), "workload values");
}

std::vector<std::uint64_t> RankEnv::sum_over_ranks(const std::vector<std::uint64_t>& mine) const {
  std::vector<std::uint64_t> total(mine.size(), 0);
  for (const Json& counts : all_gather_json(Json(mine))) {
    for (std::size_t i = 0; i < total.size() && i < counts.size(); ++i) {
      total[i] += counts[i].get<std::uint64_t>();
    }
  }
  return total;
}

bool RankEnv::ranks_share_process() const { return shared->processes() == nullptr; }

RankSlot RankEnv::slot() const { return RankSlot::of(rank, nranks, shared->processes()); }

double RankEnv::collective_time(const std::function<void()>& enqueue, int samples,
                                TimingMethod method) const {
  std::vector<double> maxima;
  for (int i = 0; i < samples; ++i) {
    maxima.push_back(
        shared->timed_sample(rank, enqueue, 1, 0, method == TimingMethod::device).first);
  }
  return median_of(maxima);
}

std::string host_wait_mode() {
  unsigned flags = 0;
  if (cudaGetDeviceFlags(&flags) != cudaSuccess) return "unknown";
  switch (flags & cudaDeviceScheduleMask) {
    case cudaDeviceScheduleBlockingSync: return "blocking";
    case cudaDeviceScheduleSpin: return "spin";
    case cudaDeviceScheduleYield: return "yield";
    default: return "auto";
  }
}

}  // namespace mgbench::bench
