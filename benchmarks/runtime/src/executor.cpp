// The group executor (see executor.hpp): rank threads and the per-point protocol, one named
// phase per step (skip, setup, warm-up, samples, verify, finish, report). The collectives
// the phases use live in group_shared.cpp.
#include "mgbench/bench/executor.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "group_shared.hpp"
#include "mgbench/core/logging.hpp"
#include "point_record.hpp"
#include "timing_methods.hpp"
#include "mgbench/bench/batch_boundary.hpp"
#include "mgbench/bench/cpu_affinity.hpp"
#include "mgbench/bench/nccl_comms.hpp"
#include "mgbench/bench/nccl_stretches.hpp"
#include "mgbench/bench/watchdog_deadline.hpp"
#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/platform/telemetry.hpp"

namespace mgbench::bench {

namespace {

// The NCCL watchdog's window for the warm-up (NCCL connects lazily on the first collective)
// and for the verification (a fresh op, checks, a workload's secondary timings): expected
// seconds on top of the settings' warm-up and stopping times.
constexpr double kWarmupWindowS = 5.0;
// Warm-up ops per second of warm-up at most: 1000 for the default 0.05 s, so that tiny
// host-launched ops (whose launch outlasts their GPU time) do not stretch it.
constexpr double kWarmupOpsPerSecond = 2e4;
constexpr double kVerifyWindowS = 5.0;
// A failed group's ranks wait this long beyond the gate timeout for each other to quiesce
// before they free their buffers (the own all-reduce's barriers give up after the gate
// timeout).
constexpr double kDrainSlackS = 5.0;
// Samples of the second timing method of a point timed both ways (RunnerOptions::time_both).
constexpr int kSecondMethodSamples = 25;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

struct PointRecord {
  std::vector<double> headline;               // seconds per op, slowest rank
  std::vector<std::vector<double>> per_rank;  // seconds per op, per rank
};

// One point on one rank, as it moves through the phases of run_point.
struct PointRun {
  PointRun(const PlannedPoint& p, int r, int d, RankResources& resources)
      : planned(p), rank(r), device(d), res(resources) {}
  const PlannedPoint& planned;
  int rank;
  int device;
  RankResources& res;
  double t0 = now_s();
  PointResult result;  // filled and reported by rank 0
  RankEnv env;
  std::unique_ptr<RankPoint> point;
  PointRecord record;
  Json rank_detail = Json::object();
  Verification verification;
  std::size_t reps = 1;
  double second_s = 0;  // seconds per op with the other timing method (time_both), else 0
  double warmup_s = 0;  // seconds the warm-up ran (host clock, first op to the last sync)
  RankOutcome combined;
};

// What the finish phase gathers from every rank for the report.
struct Gathered {
  std::vector<double> medians, means;
  std::vector<Json> details;
};

class GroupRun {
 public:
  GroupRun(GroupContext& ctx, RankPointFactory factory, MetricsFn metrics, RunnerOptions options)
      : ctx_(ctx), factory_(std::move(factory)), metrics_(std::move(metrics)), options_(options),
        n_(ctx.spec.ranks()) {}

  void run() {
    ProcessGroup* processes = ctx_.processes;
    if (processes != nullptr) check_process_rank(*processes);
    // This thread stays on the group's first device (see device_restore.hpp): the gate flag,
    // the communicators' set-up and every teardown run here. With a process per GPU, on
    // this process's device, and its only rank is its own.
    const int first = processes != nullptr ? processes->rank() : 0;
    shared_ = std::make_unique<GroupShared>(ctx_.spec.devices, ctx_.spec.settings, processes,
                                            device_of(first));
    const NcclEnvFn env = options_.needs_nccl ? options_.nccl_env : NcclEnvFn();
    for (const NcclStretch& stretch : nccl_stretches(ctx_.spec, env)) run_stretch(stretch, first);
  }

 private:
  // One stretch: its communicators (created with its NCCL variables set), then every rank's
  // points of the stretch; a failed rank ends the group as before.
  void run_stretch(const NcclStretch& stretch, int first) {
    std::unique_ptr<NcclComms> comms;
    if (options_.needs_nccl) {
      const ScopedNcclEnv env(stretch.variables);
      comms = make_group_comms(ctx_.spec, ctx_.processes, device_of(first));
      shared_->comms = comms.get();
    }
    nccl_env_ = Json::object();
    for (const auto& [name, value] : stretch.variables) nccl_env_[name] = value;
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> errors(n_);
    for (int r = first; r < (ctx_.processes != nullptr ? first + 1 : n_); ++r) {
      threads.emplace_back([this, r, &errors, &stretch] {
        try {
          rank_main(r, stretch.begin, stretch.end);
        } catch (...) {
          errors[r] = std::current_exception();
          // Nobody may keep waiting for a rank that left.
          shared_->fail(r, message_of(errors[r]));
          shared_->drain(r, 0.0);
        }
      });
    }
    for (auto& t : threads) t.join();
    shared_->comms = nullptr;
    comms.reset();
    rethrow_first(errors);
  }

  // The cause first: a rank's own error before the RankFailure the others saw.
  static void rethrow_first(const std::vector<std::exception_ptr>& errors) {
    std::exception_ptr first;
    for (const auto& e : errors) {
      if (!e) continue;
      try {
        std::rethrow_exception(e);
      } catch (const RankFailure&) {
        if (!first) first = e;
      } catch (...) {
        std::rethrow_exception(e);
      }
    }
    if (first) std::rethrow_exception(first);
  }

  // The device of `rank`: by rank with threads, as the launch mapped it with processes.
  int device_of(int rank) const {
    const ProcessGroup* processes = ctx_.processes;
    if (processes != nullptr && processes->device() >= 0) return processes->device();
    return ctx_.spec.devices.at(
        static_cast<std::size_t>(processes != nullptr ? processes->local_rank() : rank));
  }

  // A process of a group: the launch matches the plan, and its local rank has a device.
  void check_process_rank(const ProcessGroup& processes) const {
    if (processes.size() != n_) {
      throw EnvironmentError(fmt::format("the launch started {} process(es) for a group of {}",
                                         processes.size(), n_));
    }
    if (processes.local_rank() >= static_cast<int>(ctx_.spec.devices.size())) {
      throw EnvironmentError(fmt::format(
          "rank {} on {} is local rank {}, but its node has {} GPU(s) in the group",
          processes.rank(), processes.host(), processes.local_rank(), ctx_.spec.devices.size()));
    }
  }

  void rank_main(int rank, std::size_t begin, std::size_t end) {
    set_current_rank(rank);
    const int device = device_of(rank);
    pin_to_local_cpus(device);  // before anything is allocated: host memory lands nearby
    RankResources res(device);
    shared_->set_resources(rank, &res);
    bool fatal = false;
    std::string fatal_message;
    for (std::size_t k = begin; k < end; ++k) {
      const PlannedPoint planned = ctx_.spec.point_at(k);  // rounds made as they run
      RankOutcome outcome;
      try {
        outcome = run_point(rank, device, res, planned);
      } catch (const std::exception& e) {
        if (rank == 0) report_unfinished(planned, e.what());
        shared_->fail(rank, e.what());
        shared_->set_resources(rank, nullptr);
        throw;
      }
      if (outcome.sticky) {
        fatal = true;
        fatal_message = outcome.message;
        break;
      }
    }
    shared_->set_resources(rank, nullptr);
    if (fatal) throw EnvironmentError("sticky CUDA error, the worker must restart: " + fatal_message);
  }

  // Runs this thread on the CPUs local to `device` (its NUMA node), where known.
  static void pin_to_local_cpus(int device) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    const std::vector<int> cpus = pin_current_thread(parse_cpu_list(gpu_local_cpulist(bus)));
    logging::debug("rank thread of GPU {} runs on CPUs {}", device, format_cpu_list(cpus));
  }

  PointResult base_result(const PlannedPoint& planned) const {
    PointResult result;
    result.index = planned.index;
    result.workload = ctx_.spec.workload;
    result.params = planned.params;
    result.gpus = n_;
    result.devices = ctx_.spec.devices;
    result.placement = ctx_.spec.placement;
    if (ctx_.processes == nullptr) result.placement.gpus_per_node = n_;  // one node of threads
    result.started_at = utc_now_iso8601();
    return result;
  }

  // Rank 0, when the group failed inside a point it has not reported yet.
  void report_unfinished(const PlannedPoint& planned, const std::string& message) {
    if (reported_ && *reported_ == planned.index) return;
    PointResult result = base_result(planned);
    result.status = Status::failed;
    result.message = message;
    reported_ = planned.index;
    ctx_.sink.point_finished(result);
  }

  // Runs one point on this rank; rank 0 reports it. Returns the combined outcome.
  RankOutcome run_point(int rank, int device, RankResources& res, const PlannedPoint& planned) {
    PointRun p(planned, rank, device, res);
    p.result = base_result(planned);
    shared_->set_where(fmt::format("point {}", planned.index));
    try {
      if (skip_above_boundary(p)) return {};
      make_env(p);
      setup(p);
      if (p.combined.status == Status::ok) measure(p);
      if (p.combined.status == Status::ok) verify(p);
      const Gathered gathered = finish(p);
      if (rank == 0) report(p, gathered);
      shared_->barrier(rank, "point end");
    } catch (...) {
      // The group failed: a peer may still read this rank's buffers (the own all-reduce's
      // staging) until its own ops end. Release the others first (they may wait for this
      // rank), quiesce, wait for the others to quiesce, then free.
      shared_->fail(rank, message_of(std::current_exception()));
      (void)cudaDeviceSynchronize();
      (void)cudaGetLastError();
      shared_->drain(rank, ctx_.spec.settings.gate_timeout_s + kDrainSlackS);
      p.point.reset();
      throw;
    }
    return p.combined;
  }

  // --batch-sizes auto: skip batches above a known OOM boundary (rank 0 decides).
  bool skip_above_boundary(PointRun& p) {
    std::string skip_reason;
    if (p.rank == 0) {
      ctx_.sink.point_started(p.planned.index);
      if (ctx_.spec.settings.batch_auto) skip_reason = boundary_.skip_reason(p.planned.params);
    }
    skip_reason = shared_->broadcast(p.rank, skip_reason, shared_->string_slot, "skip decision");
    if (skip_reason.empty()) return false;
    if (p.rank == 0) {
      p.result.status = Status::skipped;
      p.result.message = skip_reason;
      reported_ = p.planned.index;
      ctx_.sink.point_finished(p.result);
    }
    return true;
  }

  void make_env(PointRun& p) {
    p.env.rank = p.rank;
    p.env.nranks = n_;
    p.env.device = p.device;
    p.env.stream = p.res.stream;
    p.env.comm_stream = p.res.comm_stream;
    p.env.comm = shared_->comms ? shared_->comms->comm(shared_->comm_slot(p.rank)) : nullptr;
    p.env.params = &p.planned.params;
    p.env.settings = &ctx_.spec.settings;
    p.env.shared = shared_.get();
    p.env.timing = timing_of(p.planned.params, options_.default_timing);
    p.env.cache = cache_of(p.planned.params, options_.default_cache);
  }

  // Setup: the workload's factory (allocation, initialisation) on every rank.
  void setup(PointRun& p) {
    RankOutcome mine;
    try {
      p.point = factory_(p.env);
    } catch (...) {
      mine = outcome_of(std::current_exception(), p.rank);
    }
    p.combined = shared_->combine(p.rank, mine);
  }

  // Warm-up and samples. A failure inside a timed sample happens on every rank together;
  // any other failure leaves this rank out of step with the others: it fails the group.
  void measure(PointRun& p) {
    RankOutcome mine;
    (void)shared_->take_in_step_failure(p.rank);
    try {
      const auto enqueue = [&p] { p.point->enqueue(); };
      const double op_s = warm_up(p, enqueue);
      sample(p, enqueue, op_s);
      MGBENCH_CUDA_CHECK(cudaStreamSynchronize(p.res.stream));
    } catch (...) {
      mine = outcome_of(std::current_exception(), p.rank);
      // No gather: the ranks are out of step.
      if (observes_telemetry(ctx_, p.rank)) (void)ctx_.observer->end_point();
      if (!shared_->take_in_step_failure(p.rank)) {
        shared_->fail(p.rank, message_of(std::current_exception()));
      }
    }
    p.combined = shared_->combine(p.rank, mine);
  }

  // Returns the seconds of one op (slowest rank), which size the warm-up and the samples.
  double warm_up(PointRun& p, const std::function<void()>& enqueue) {
    const RunSettings& settings = ctx_.spec.settings;
    const ScopedWatchdog watchdog(
        shared_->comms, shared_->arms_watchdog(p.rank),
        watchdog_deadline_s(settings, settings.warmup_s + kWarmupWindowS));
    // One op outside the gate: lazy module loading and NCCL connection set-up may need
    // the device to be idle, which a spinning gate kernel would prevent.
    const double start = now_s();
    enqueue();
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(p.res.stream));
    shared_->set_op_estimate(p.rank, now_s() - start);
    shared_->barrier(p.rank, "warm-up: first op");
    // One op to size warm-up and batching (collective), timed as the samples will be: behind
    // the start gate only with timing=device (a host-timed op, e.g. a whole training step of
    // hundreds of kernels and collectives, could fill the launch queue behind a closed gate).
    const double first =
        shared_->timed_sample(p.rank, enqueue, 1, 0, p.env.timing == TimingMethod::device).first;
    const double op_s = std::max(first, 1e-7);
    shared_->set_op_estimate(p.rank, op_s);
    // Warm-up runs ungated: behind a spinning gate kernel, a long queue of launches would
    // fill the stream's launch queue and block the host before it could open the gate.
    // Every rank computes the same count from the shared estimate (collectives must match).
    const double warmup_s = ctx_.spec.settings.warmup_s;
    const int warm = static_cast<int>(
        std::clamp(warmup_s / op_s, 1.0, std::max(1.0, warmup_s * kWarmupOpsPerSecond)));
    for (int i = 0; i < warm; ++i) enqueue();
    MGBENCH_CUDA_CHECK(cudaStreamSynchronize(p.res.stream));
    p.warmup_s = now_s() - start;
    shared_->barrier(p.rank, "warm-up: done");
    return op_s;
  }

  // Timed samples until the stopping rule (rank 0 decides, every rank follows).
  void sample(PointRun& p, const std::function<void()>& enqueue, double op_s) {
    const RunSettings& settings = ctx_.spec.settings;
    // Ops per sample: enough for target_sample_s, few enough that everything queued behind
    // the gate neither fills the launch queue nor blocks NCCL's enqueue (watchdog_deadline.hpp).
    // Host-launched samples have no closed gate to queue behind: the NCCL cap does not apply.
    const bool gated = p.env.timing == TimingMethod::device;
    p.reps = static_cast<std::size_t>(ops_per_sample(settings, op_s, options_.needs_nccl && gated));
    const double slowdown = settings.test_slowdown;
    const auto busy_ns = static_cast<std::uint64_t>(std::max(0.0, slowdown) * op_s *
                                                    static_cast<double>(p.reps) * 1e9);
    if (observes_telemetry(ctx_, p.rank)) ctx_.observer->begin_point(ctx_.spec.devices);
    p.record.per_rank.assign(1, {});
    std::vector<double> sample_totals;
    // timing=graph: the sample's ops captured once, the graph launched per sample.
    std::unique_ptr<CapturedOps> graph;
    if (p.env.timing == TimingMethod::graph) {
      graph = std::make_unique<CapturedOps>(p.res.stream, enqueue, static_cast<int>(p.reps));
    }
    const std::function<void()> launch_graph = [&] { graph->launch(p.res.stream); };
    const int launches = graph ? 1 : static_cast<int>(p.reps);
    const double loop_start = now_s();
    for (std::size_t n = 1;; ++n) {
      shared_->set_where(fmt::format("point {}, sample {}", p.planned.index, n));
      const auto [slowest, own] = shared_->timed_sample(p.rank, graph ? launch_graph : enqueue,
                                                        launches, busy_ns, gated);
      p.record.headline.push_back(slowest / static_cast<double>(p.reps));
      p.record.per_rank[0].push_back(own / static_cast<double>(p.reps));
      sample_totals.push_back(slowest);  // whole samples: min_time counts measured time
      int decision = 0;
      if (p.rank == 0) decision = stop_decision(sample_totals, now_s() - loop_start);
      decision = shared_->broadcast(p.rank, decision, shared_->int_slot, "stop decision");
      if (decision != 0) break;
    }
    shared_->set_where(fmt::format("point {}", p.planned.index));
    p.result.telemetry = end_point_telemetry(ctx_, p.rank, shared_->step_name("telemetry"));
    if (options_.time_both && options_.time_both(p.planned.params)) {
      const TimingMethod other = other_method(p.env.timing);
      const int reps = ops_per_sample(settings, op_s,
                                      options_.needs_nccl && other == TimingMethod::device);
      p.second_s = time_with_method(*shared_, p.rank, enqueue, reps, other, kSecondMethodSamples);
    }
  }

  // 0: keep going, 1: converged, 2: noisy (stop).
  int stop_decision(const std::vector<double>& sample_totals, double elapsed_s) const {
    check_stopping(ctx_.spec.settings.stopping);
    const StopDecision d = evaluate_stop(ctx_.spec.settings.stopping, sample_totals, elapsed_s);
    return d == StopDecision::keep_going ? 0 : (d == StopDecision::converged ? 1 : 2);
  }

  // Verification (mandatory) and per-rank details.
  void verify(PointRun& p) {
    RankOutcome v;
    // Rank 0 arms the NCCL watchdog for the whole verification (collectives inside; timed
    // samples inside arm their own window and hand this one back).
    const RunSettings& settings = ctx_.spec.settings;
    std::unique_ptr<ScopedWatchdog> watchdog = std::make_unique<ScopedWatchdog>(
        shared_->comms, shared_->arms_watchdog(p.rank),
        watchdog_deadline_s(settings, settings.stopping.max_time_s + kVerifyWindowS));
    shared_->barrier(p.rank, "verify: armed");
    try {
      p.verification = p.point->verify();
      p.rank_detail = p.point->rank_details();
      if (!p.verification.ok) {
        v.status = Status::wrong;
        v.message = fmt::format("rank {}: {}", p.rank, p.verification.message);
      }
    } catch (...) {
      v = outcome_of(std::current_exception(), p.rank);
    }
    watchdog.reset();
    p.combined = shared_->combine(p.rank, v);
  }

  // Gathers per-rank timings and details, frees the point, settles the final outcome.
  Gathered finish(PointRun& p) {
    const auto& own = p.record.per_rank;
    const bool have = !own.empty() && !own[0].empty();
    const double own_median = have ? median_of(own[0]) : 0.0;
    double own_mean = 0;
    if (have) {
      for (double s : own[0]) own_mean += s;
      own_mean /= static_cast<double>(own[0].size());
    }
    Gathered g;
    g.medians = shared_->gather_double(p.rank, own_median, "medians");
    g.means = shared_->gather_double(p.rank, own_mean, "means");
    Json mine{{"rank", p.rank},
              {"device", p.device},
              {"cpus", format_cpu_list(current_thread_cpus())},
              {"host_wait", host_wait_mode()},
              {"details", p.rank_detail},
              {"verification", p.verification.details}};
    if (ctx_.processes != nullptr) mine["host"] = ctx_.processes->host();
    g.details = shared_->gather_json(p.rank, std::move(mine), "rank details");
    release_point(p);
    p.combined = shared_->combine(p.rank, p.combined);
    return g;
  }

  // Frees the point's memory on every rank before the next point (OOM recovery) and
  // decides whether this worker can go on.
  void release_point(PointRun& p) {
    RankOutcome& combined = p.combined;
    // Device-sync, barrier, then free: no peer still reads this rank's buffers.
    try {
      MGBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      if (outcome_of(std::current_exception(), p.rank).sticky) combined.sticky = true;
    }
    shared_->barrier(p.rank, "release: every rank idle");
    try {
      p.point.reset();
      MGBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      const RankOutcome o = outcome_of(std::current_exception(), p.rank);
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
  }

  // Rank 0: the point's result.
  void report(PointRun& p, const Gathered& g) {
    PointResult& result = p.result;
    const RankOutcome& combined = p.combined;
    result.status = combined.status;
    result.message = combined.message;
    result.ops_per_sample = p.reps;
    result.measured.warmup_s = p.warmup_s;
    result.samples = p.record.headline;
    result.stats = compute_statistics(p.record.headline);
    record_method_and_noise(p.result, p.env, ctx_.spec.settings.stopping.max_noise);
    for (int r = 0; r < n_; ++r) {
      const auto at = static_cast<std::size_t>(r);
      result.ranks.push_back({r, g.details[at]["device"].get<int>(), g.medians[at], g.means[at]});
    }
    record_hosts(result, g.details);
    Json ranks = Json::array();
    Json peak = Json::array();
    bool have_peak = false;
    for (const auto& d : g.details) {
      ranks.push_back(d);
      if (d["details"].contains("peak_bytes")) {
        peak.push_back(d["details"]["peak_bytes"]);
        have_peak = true;
      }
    }
    if (!g.details.empty()) result.verification = g.details[0]["verification"];
    if (!nccl_env_.empty()) result.extra["nccl_env"] = nccl_env_;
    result.verification["ok"] = p.verification.ok && combined.status != Status::wrong;
    if (n_ > 1) result.verification["per_rank"] = ranks;
    result.extra["ranks"] = ranks;
    // The code that ran, when the workload names it (e.g. an own kernel and its version).
    if (!g.details.empty() && g.details[0]["details"].contains("implementation")) {
      result.extra["implementation"] = g.details[0]["details"]["implementation"];
    }
    if (have_peak) result.memory["peak_bytes"] = peak;
    if (combined.status == Status::ok && !p.record.headline.empty() && metrics_) {
      add_metrics(result, g.details[0]["details"]);
      add_method_metrics(result, p.second_s, options_.limits, ctx_.spec.devices);
    }
    boundary_.record(p.planned.params, combined.status);
    result.wall_s = now_s() - p.t0;
    reported_ = p.planned.index;
    ctx_.sink.point_finished(result);
  }

  void add_metrics(PointResult& result, const Json& rank0_details) const {
    try {
      result.metrics = metrics_(result.params, n_, result.stats.median);
      // Secondary measurements a workload makes itself (e.g. a step-time breakdown).
      if (rank0_details.contains("metrics")) result.metrics.update(rank0_details["metrics"]);
      if (const Workload* w = find_workload(ctx_.spec.workload)) {
        add_energy_metrics(result, w->throughput_metric());
      }
    } catch (const std::exception& e) {
      logging::warn("metrics of point {} failed: {}", result.index, e.what());
    }
  }

  GroupContext& ctx_;
  RankPointFactory factory_;
  MetricsFn metrics_;
  RunnerOptions options_;
  int n_;
  std::unique_ptr<GroupShared> shared_;
  BatchBoundary boundary_;                 // rank 0 only
  std::optional<std::size_t> reported_;    // rank 0: the last point it reported
  Json nccl_env_ = Json::object();          // the NCCL variables of this stretch's communicators
};

}  // namespace

GroupRunner make_runner(RankPointFactory factory, MetricsFn metrics, RunnerOptions options) {
  return [factory = std::move(factory), metrics = std::move(metrics), options](GroupContext& ctx) {
    GroupRun run(ctx, factory, metrics, options);
    run.run();
  };
}

}  // namespace mgbench::bench
