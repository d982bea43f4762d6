// The group executor (see executor.hpp): rank threads, start gate, CUDA-event timing,
// stopping rule, per-point protocol, verification and reporting.
#include "mgbench/bench/executor.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/kernels/gate.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "mgbench/model/workload.hpp"

namespace mgbench::bench {

namespace {

// Ops queued behind one start gate. The CUDA launch queue holds on the order of a thousand
// launches; an op may launch dozens of kernels (a training step), so stay well below.
constexpr int kMaxOpsPerSample = 64;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A reusable barrier for the rank threads of one group.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int n_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
};

// Sticky CUDA errors leave the context unusable: the worker must exit after reporting.
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

// Pinned, host-mapped memory holding the gate flag.
struct HostFlag {
  HostFlag() {
    void* memory = nullptr;
    MGBENCH_CUDA_CHECK(
        cudaHostAlloc(&memory, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    flag = static_cast<volatile int*>(memory);
    *flag = 0;
  }
  ~HostFlag() { MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(const_cast<int*>(flag))); }
  HostFlag(const HostFlag&) = delete;
  HostFlag& operator=(const HostFlag&) = delete;
  volatile int* flag = nullptr;
};

// What one rank reports for one phase.
struct RankOutcome {
  Status status = Status::ok;
  std::string message;
  bool sticky = false;
};

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

// Severity order for combining ranks: the worst status wins.
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

}  // namespace

// State shared by the rank threads of one group.
class GroupShared {
 public:
  GroupShared(int n, const RunSettings& settings)
      : n_(n), barrier_(n), settings_(settings), ptrs_(n), times_(n), outcomes_(n) {}

  int size() const { return n_; }
  void barrier() { barrier_.wait(); }
  const RunSettings& settings() const { return settings_; }

  std::vector<void*> all_gather_ptr(int rank, void* mine) {
    ptrs_[rank] = mine;
    barrier();
    std::vector<void*> all = ptrs_;
    barrier();  // nobody overwrites a slot before everyone has read it
    return all;
  }

  // One collective timed sample: gate, `reps` calls of enqueue, slowest rank's seconds.
  // Every rank calls it; returns the max over ranks (seconds for all reps) and this rank's.
  std::pair<double, double> timed_sample(int rank, cudaStream_t stream, cudaEvent_t start,
                                         cudaEvent_t stop, int* gate_timed_out,
                                         const std::function<void()>& enqueue, int reps,
                                         std::uint64_t extra_busy_ns, NcclComms* comms) {
    const int generation = next_generation_ + 1;  // identical on all ranks (read before barrier)
    std::exception_ptr error;
    *gate_timed_out = 0;  // the previous gate kernel has finished
    try {
      MGBENCH_CUDA_CHECK(kernels::launch_start_gate(gate_.flag, generation,
                                                   static_cast<std::uint64_t>(
                                                       settings_.gate_timeout_s * 1e9),
                                                   gate_timed_out, stream));
      MGBENCH_CUDA_CHECK(cudaEventRecord(start, stream));
      for (int i = 0; i < reps; ++i) enqueue();
      if (extra_busy_ns > 0) MGBENCH_CUDA_CHECK(kernels::launch_busy_wait(extra_busy_ns, stream));
      MGBENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    } catch (...) {
      error = std::current_exception();
    }
    barrier();  // everything enqueued behind the gates
    if (rank == 0) {
      next_generation_ = generation;
      if (comms) comms->arm(settings_.group_timeout_s);
      __atomic_store_n(const_cast<int*>(gate_.flag), generation, __ATOMIC_RELEASE);
    }
    double mine = 0;
    if (!error) {
      try {
        MGBENCH_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        MGBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        mine = ms * 1e-3;
        if (*gate_timed_out) {
          throw EnvironmentError("the start gate was not released in time");
        }
      } catch (...) {
        error = std::current_exception();
      }
    }
    times_[rank] = mine;
    outcomes_[rank] = error ? outcome_of(error, rank) : RankOutcome{};
    barrier();
    if (rank == 0 && comms) comms->disarm();
    double slowest = 0;
    RankOutcome worst;
    for (int r = 0; r < n_; ++r) {
      slowest = std::max(slowest, times_[r]);
      if (severity(outcomes_[r].status) > severity(worst.status)) worst = outcomes_[r];
    }
    barrier();  // slots may be reused after this
    if (comms && comms->aborted()) {
      throw EnvironmentError("NCCL communicators aborted: " + comms->abort_reason());
    }
    if (worst.status != Status::ok) {
      if (error) std::rethrow_exception(error);
      throw EnvironmentError("another rank failed: " + worst.message);
    }
    return {slowest, mine};
  }

  // Combines one outcome per rank (collective); returns the worst.
  RankOutcome combine(int rank, const RankOutcome& mine) {
    outcomes_[rank] = mine;
    barrier();
    RankOutcome worst;
    for (int r = 0; r < n_; ++r) {
      if (severity(outcomes_[r].status) > severity(worst.status)) worst = outcomes_[r];
      worst.sticky = worst.sticky || outcomes_[r].sticky;
    }
    barrier();
    return worst;
  }

  // Broadcast of a value from rank 0 (collective).
  template <typename T>
  T broadcast(int rank, const T& value, T& slot) {
    if (rank == 0) slot = value;
    barrier();
    T out = slot;
    barrier();
    return out;
  }

  // Gathers a JSON value per rank (collective).
  std::vector<Json> gather_json(int rank, Json value) {
    {
      std::lock_guard<std::mutex> lock(json_mutex_);
      if (json_slots_.size() != static_cast<std::size_t>(n_)) json_slots_.assign(n_, Json());
      json_slots_[rank] = std::move(value);
    }
    barrier();
    std::vector<Json> all = json_slots_;
    barrier();
    return all;
  }

  std::vector<double> gather_double(int rank, double value) {
    times_[rank] = value;
    barrier();
    std::vector<double> all = times_;
    barrier();
    return all;
  }

  NcclComms* comms = nullptr;

  // Rank-0-written, barrier-published decision slots.
  int int_slot = 0;
  double double_slot = 0;
  std::string string_slot;

 private:
  int n_;
  Barrier barrier_;
  const RunSettings& settings_;
  HostFlag gate_;
  int next_generation_ = 0;
  std::vector<void*> ptrs_;
  std::vector<double> times_;
  std::vector<RankOutcome> outcomes_;
  std::mutex json_mutex_;
  std::vector<Json> json_slots_;
};

// Per-rank CUDA resources for the whole group.
struct RankResources {
  explicit RankResources(int device) {
    MGBENCH_CUDA_CHECK(cudaSetDevice(device));
    MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MGBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
    MGBENCH_CUDA_CHECK(cudaEventCreate(&start));
    MGBENCH_CUDA_CHECK(cudaEventCreate(&stop));
    MGBENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&gate_timed_out), sizeof(int),
                                     cudaHostAllocMapped | cudaHostAllocPortable));
    *gate_timed_out = 0;
    MGBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~RankResources() {
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaFreeHost(gate_timed_out));
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(stop));
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaEventDestroy(start));
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(comm_stream));
    MGBENCH_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
  }
  RankResources(const RankResources&) = delete;
  RankResources& operator=(const RankResources&) = delete;
  cudaStream_t stream = nullptr, comm_stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  int* gate_timed_out = nullptr;  // host-mapped: the gate kernel sets it, the host reads it
};

void RankEnv::barrier() const { shared->barrier(); }

std::vector<void*> RankEnv::all_gather_ptr(void* mine) const {
  return shared->all_gather_ptr(rank, mine);
}

namespace {
thread_local RankResources* t_resources = nullptr;

}  // namespace

double RankEnv::collective_time(const std::function<void()>& enqueue, int samples) const {
  std::vector<double> maxima;
  for (int i = 0; i < samples; ++i) {
    const auto [slowest, mine] =
        shared->timed_sample(rank, stream, t_resources->start, t_resources->stop,
                             t_resources->gate_timed_out, enqueue, 1, 0, shared->comms);
    (void)mine;
    maxima.push_back(slowest);
  }
  return median_of(maxima);
}

namespace {

struct PointRecord {
  std::vector<double> headline;               // seconds per op, slowest rank
  std::vector<std::vector<double>> per_rank;  // seconds per op, per rank
};

// Params without "batch": the key of a batch-size series (for --batch-sizes auto).
std::string series_key(const Params& params) {
  Params p = params;
  p.erase("batch");
  return p.dump();
}

class GroupRun {
 public:
  GroupRun(GroupContext& ctx, RankPointFactory factory, MetricsFn metrics, RunnerOptions options)
      : ctx_(ctx), factory_(std::move(factory)), metrics_(std::move(metrics)), options_(options),
        n_(static_cast<int>(ctx.spec.devices.size())) {}

  void run() {
    shared_ = std::make_unique<GroupShared>(n_, ctx_.spec.settings);
    std::unique_ptr<NcclComms> comms;
    if (options_.needs_nccl) {
      comms = std::make_unique<NcclComms>(ctx_.spec.devices,
                                          std::min(ctx_.spec.settings.group_timeout_s, 300.0));
      shared_->comms = comms.get();
    }
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(n_);
    for (int r = 0; r < n_; ++r) {
      threads.emplace_back([this, r, &errors] {
        try {
          rank_main(r);
        } catch (...) {
          errors[r] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    shared_->comms = nullptr;
    comms.reset();
    for (auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }

 private:
  void rank_main(int rank) {
    set_current_rank(rank);
    const int device = ctx_.spec.devices[rank];
    RankResources res(device);
    t_resources = &res;
    if (options_.needs_peer_access) enable_peer_access(device);
    bool fatal = false;
    std::string fatal_message;
    for (const auto& planned : ctx_.spec.points) {
      const RankOutcome outcome = run_point(rank, device, res, planned);
      if (outcome.sticky) {
        fatal = true;
        fatal_message = outcome.message;
        break;
      }
    }
    t_resources = nullptr;
    if (fatal) throw EnvironmentError("sticky CUDA error, the worker must restart: " + fatal_message);
  }

  void enable_peer_access(int device) {
    for (int other : ctx_.spec.devices) {
      if (other == device) continue;
      int can = 0;
      MGBENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, other));
      if (!can) continue;
      const cudaError_t err = cudaDeviceEnablePeerAccess(other, 0);
      if (err != cudaSuccess && err != cudaErrorPeerAccessAlreadyEnabled) {
        MGBENCH_CUDA_CHECK(err);
      }
      (void)cudaGetLastError();
    }
  }

  // Runs one point on this rank; rank 0 reports it. Returns the combined outcome.
  RankOutcome run_point(int rank, int device, RankResources& res, const PlannedPoint& planned) {
    const RunSettings& settings = ctx_.spec.settings;
    const double t0 = now_s();
    PointResult result;
    result.index = planned.index;
    result.workload = ctx_.spec.workload;
    result.params = planned.params;
    result.gpus = n_;
    result.devices = ctx_.spec.devices;
    result.started_at = utc_now_iso8601();

    // --batch-sizes auto: skip batches above a known OOM boundary (rank 0 decides).
    std::string skip_reason;
    if (rank == 0) {
      ctx_.sink.point_started(planned.index);
      if (settings.batch_auto && planned.params.contains("batch")) {
        const auto it = oom_batch_.find(series_key(planned.params));
        if (it != oom_batch_.end() && planned.params["batch"].get<std::int64_t>() > it->second) {
          skip_reason = fmt::format("above the OOM boundary: batch {} ran out of memory",
                                    it->second);
        }
      }
    }
    skip_reason = shared_->broadcast(rank, skip_reason, shared_->string_slot);
    if (!skip_reason.empty()) {
      if (rank == 0) {
        result.status = Status::skipped;
        result.message = skip_reason;
        ctx_.sink.point_finished(result);
      }
      return {};
    }

    RankEnv env;
    env.rank = rank;
    env.nranks = n_;
    env.device = device;
    env.stream = res.stream;
    env.comm_stream = res.comm_stream;
    env.comm = shared_->comms ? shared_->comms->comm(rank) : nullptr;
    env.params = &planned.params;
    env.settings = &settings;
    env.shared = shared_.get();

    std::unique_ptr<RankPoint> point;
    PointRecord record;
    Json rank_detail = Json::object();
    Verification verification;
    std::size_t reps = 1;
    bool noisy = false;

    // Setup.
    RankOutcome mine;
    try {
      point = factory_(env);
    } catch (...) {
      mine = outcome_of(std::current_exception(), rank);
    }
    RankOutcome combined = shared_->combine(rank, mine);

    // Warm-up and sampling.
    if (combined.status == Status::ok) {
      try {
        auto enqueue = [&] { point->enqueue(); };
        // One op outside the gate: lazy module loading and NCCL connection set-up may need
        // the device to be idle, which a spinning gate kernel would prevent.
        enqueue();
        MGBENCH_CUDA_CHECK(cudaStreamSynchronize(res.stream));
        shared_->barrier();
        // One op to size warm-up and batching (collective).
        const auto [first, unused] = shared_->timed_sample(rank, res.stream, res.start, res.stop,
                                                           res.gate_timed_out, enqueue, 1, 0,
                                                           shared_->comms);
        (void)unused;
        const double op_s = std::max(first, 1e-7);
        // Warm-up runs ungated: behind a spinning gate kernel, a long queue of launches would
        // fill the stream's launch queue and block the host before it could open the gate.
        const int warm = static_cast<int>(std::clamp(settings.warmup_s / op_s, 1.0, 1000.0));
        for (int i = 0; i < warm; ++i) enqueue();
        MGBENCH_CUDA_CHECK(cudaStreamSynchronize(res.stream));
        shared_->barrier();
        // Ops per sample: enough for target_sample_s, few enough that everything queued
        // behind the gate fits the launch queue (kMaxOpsPerSample).
        reps = static_cast<std::size_t>(std::clamp(std::ceil(settings.target_sample_s / op_s), 1.0,
                                                   static_cast<double>(kMaxOpsPerSample)));
        const double slowdown = settings.test_slowdown;
        const auto busy_ns =
            static_cast<std::uint64_t>(std::max(0.0, slowdown) * op_s * static_cast<double>(reps) * 1e9);

        if (rank == 0 && ctx_.observer) ctx_.observer->begin_point(ctx_.spec.devices);
        record.per_rank.assign(1, {});
        std::vector<double> sample_totals;
        const double loop_start = now_s();
        while (true) {
          const auto [slowest, own] = shared_->timed_sample(
              rank, res.stream, res.start, res.stop, res.gate_timed_out, enqueue,
              static_cast<int>(reps), busy_ns, shared_->comms);
          record.headline.push_back(slowest / static_cast<double>(reps));
          record.per_rank[0].push_back(own / static_cast<double>(reps));
          sample_totals.push_back(slowest);  // whole samples: min_time counts measured time
          int decision = 0;
          if (rank == 0) {
            const StopDecision d =
                evaluate_stop(settings.stopping, sample_totals, now_s() - loop_start);
            decision = d == StopDecision::keep_going ? 0 : (d == StopDecision::converged ? 1 : 2);
          }
          decision = shared_->broadcast(rank, decision, shared_->int_slot);
          if (decision != 0) {
            noisy = decision == 2;
            break;
          }
        }
        if (rank == 0 && ctx_.observer) result.telemetry = ctx_.observer->end_point();
        MGBENCH_CUDA_CHECK(cudaStreamSynchronize(res.stream));
      } catch (...) {
        mine = outcome_of(std::current_exception(), rank);
        if (rank == 0 && ctx_.observer) (void)ctx_.observer->end_point();
      }
      // A failed timed_sample already synchronised all ranks through its barriers; ranks
      // that failed outside it (warm-up sizing) meet here.
      combined = shared_->combine(rank, mine);
    }

    // Verification (mandatory) and per-rank details.
    if (combined.status == Status::ok) {
      RankOutcome v;
      // Rank 0 arms the NCCL watchdog for the whole verification (collectives inside).
      if (rank == 0 && shared_->comms) shared_->comms->arm(settings.group_timeout_s);
      shared_->barrier();
      try {
        verification = point->verify();
        rank_detail = point->rank_details();
        if (!verification.ok) {
          v.status = Status::wrong;
          v.message = fmt::format("rank {}: {}", rank, verification.message);
        }
      } catch (...) {
        v = outcome_of(std::current_exception(), rank);
      }
      combined = shared_->combine(rank, v);
      if (rank == 0 && shared_->comms) shared_->comms->disarm();
    }

    // Gather per-rank timings and details; rank 0 reports.
    const double own_median = record.per_rank.empty() || record.per_rank[0].empty()
                                  ? 0.0
                                  : median_of(record.per_rank[0]);
    double own_mean = 0;
    if (!record.per_rank.empty() && !record.per_rank[0].empty()) {
      for (double s : record.per_rank[0]) own_mean += s;
      own_mean /= static_cast<double>(record.per_rank[0].size());
    }
    const auto medians = shared_->gather_double(rank, own_median);
    const auto means = shared_->gather_double(rank, own_mean);
    const auto details = shared_->gather_json(rank, Json{{"rank", rank},
                                                         {"device", device},
                                                         {"details", rank_detail},
                                                         {"verification", verification.details}});
    // Free the point's memory on every rank before the next point (OOM recovery).
    try {
      point.reset();
      MGBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      const RankOutcome o = outcome_of(std::current_exception(), rank);
      if (o.sticky) combined.sticky = true;
    }
    if (combined.status == Status::failed && !combined.sticky) {
      // A failure may have left a sticky error behind: probe the context.
      const cudaError_t probe = cudaDeviceSynchronize();
      if (probe != cudaSuccess && is_sticky(probe)) combined.sticky = true;
      (void)cudaGetLastError();
    }
    if (shared_->comms && shared_->comms->aborted()) {
      // Dead communicators: this worker cannot run further collectives; restart it.
      combined.status = Status::timeout;
      combined.message = "NCCL communicators aborted: " + shared_->comms->abort_reason();
      combined.sticky = true;
    }
    combined = shared_->combine(rank, combined);

    if (rank == 0) {
      result.status = combined.status;
      result.message = combined.message;
      result.noisy = noisy;
      result.ops_per_sample = reps;
      result.samples = record.headline;
      result.stats = compute_statistics(record.headline);
      for (int r = 0; r < n_; ++r) {
        result.ranks.push_back({r, ctx_.spec.devices[r], medians[r], means[r]});
      }
      Json ranks = Json::array();
      Json peak = Json::array();
      bool have_peak = false;
      for (const auto& d : details) {
        ranks.push_back(d);
        if (d["details"].contains("peak_bytes")) {
          peak.push_back(d["details"]["peak_bytes"]);
          have_peak = true;
        }
      }
      if (!details.empty()) result.verification = details[0]["verification"];
      result.verification["ok"] = verification.ok && combined.status != Status::wrong;
      if (n_ > 1) result.verification["per_rank"] = ranks;
      result.extra["ranks"] = ranks;
      if (have_peak) result.memory["peak_bytes"] = peak;
      if (combined.status == Status::ok && !record.headline.empty() && metrics_) {
        try {
          result.metrics = metrics_(planned.params, n_, result.stats.median);
          // Secondary measurements a workload makes itself (e.g. a step-time breakdown).
          if (details[0]["details"].contains("metrics")) {
            result.metrics.update(details[0]["details"]["metrics"]);
          }
          if (const Workload* w = find_workload(ctx_.spec.workload)) {
            add_energy_metrics(result, w->throughput_metric());
          }
        } catch (const std::exception& e) {
          spdlog::warn("metrics of point {} failed: {}", planned.index, e.what());
        }
      }
      if (combined.status == Status::oom && planned.params.contains("batch")) {
        auto& known = oom_batch_[series_key(planned.params)];
        const std::int64_t b = planned.params["batch"].get<std::int64_t>();
        known = known == 0 ? b : std::min(known, b);
      }
      result.wall_s = now_s() - t0;
      ctx_.sink.point_finished(result);
    }
    shared_->barrier();
    return combined;
  }

  GroupContext& ctx_;
  RankPointFactory factory_;
  MetricsFn metrics_;
  RunnerOptions options_;
  int n_;
  std::unique_ptr<GroupShared> shared_;
  std::map<std::string, std::int64_t> oom_batch_;  // rank 0 only
};

}  // namespace

GroupRunner make_runner(RankPointFactory factory, MetricsFn metrics, RunnerOptions options) {
  return [factory = std::move(factory), metrics = std::move(metrics), options](GroupContext& ctx) {
    GroupRun run(ctx, factory, metrics, options);
    run.run();
  };
}

}  // namespace mgbench::bench
