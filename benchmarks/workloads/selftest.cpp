// A CPU-only workload for testing the orchestrator's fault handling without a GPU.
// Registered only when MGBENCH_ENABLE_TEST_WORKLOADS=1 (never in normal runs); with
// MGBENCH_TEST_FAKE_DEVICES=N the device probe then reports N fake GPUs. The test hooks are
// listed in docs/TESTING-HOOKS.md. Axis `behavior`, per point:
//   ok           fake samples                  crash      abort
//   hang         sleep forever                 garbage    junk on the result pipe, then ok
//   wrong        verification fails            slow       sleep 300 ms, then ok
//   brief        sleep 20 ms, then ok          nan        a NaN sample and metric
//   steady       12 fake samples of 1 ms x (1 + MGBENCH_TEST_SLOWDOWN), with a fixed ripple
//                (for the compare gate: identical runs are `same`, a slowdown is `slower`)
//   chatty       2 MiB on stdout and 2 MiB on stderr (protocol look-alikes included), then ok
//   silent-exit  the group returns before reporting the point: the worker exits 0
//   bad-index    announces and reports an index outside the plan, then aborts
//   interrupt    stops the orchestrator, reports the point, sends it SIGINT and resumes it:
//                the point is on the pipe when the orchestrator sees the interrupt
//   setup-crash  one rank thread per device; the last rank throws during set-up, before the
//                ranks' first barrier (the executor's poisonable barrier): every rank ends
//                at once and the group fails with that rank's error
//   hang-in-collective  one rank thread per device; the last rank never joins the collective,
//                the others give up after the NCCL watchdog's deadline for a window
//                (watchdog_deadline_s), report the point `timeout` and end the worker, so
//                that a fresh worker runs the points left
//   rank-crash   with a process per GPU, the last rank aborts (with threads: crash)
//   rank-hang    with a process per GPU, the last rank sleeps for ever (with threads: hang)
//   rank0-hang   with a process per GPU, rank 0 sleeps for ever (with threads: hang)
//   screen       `mgbench screen`'s fake fleet: every rank's own samples around 1 ms with a
//                fresh random ripple of +-1 %, times the slowdown MGBENCH_TEST_SCREEN_FAULT
//                gives its GPU, its host or the launch's hosts; with 2+ GPUs on a node, a fake
//                p2p matrix (extra.ranks[0].details.bw_matrix_GBps, 100 GB/s with the same
//                ripple, slowed per pair); sleeps for ever when the hook hangs a host it joins
// With a process per GPU (mpirun, srun), every point of every behaviour also exercises the
// process group: each rank checks that it runs rank 0's group and hands in rank + 1 with the
// GPU the launch gave it (ordinal and bus id), and rank 0 checks the gathered sum (a wrong sum
// is a `wrong` point, another group a `failed` one).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <random>
#include <stdexcept>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "mgbench/bench/rank_barrier.hpp"
#include "mgbench/bench/watchdog_deadline.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/platform/telemetry.hpp"

namespace mgbench {
namespace {

constexpr std::size_t kBogusIndex = 1000000;

enum class Behavior {
  ok, crash, hang, garbage, wrong, slow, brief, nan, chatty, silent_exit, bad_index, interrupt,
  steady, setup_crash, hang_in_collective, rank_crash, rank_hang, rank0_hang, screen
};

// The behaviours by name (the header's list): the axis's allowed values and its reading.
const std::initializer_list<std::pair<const char*, Behavior>> kBehaviors{
    {"ok", Behavior::ok},
    {"crash", Behavior::crash},
    {"hang", Behavior::hang},
    {"garbage", Behavior::garbage},
    {"wrong", Behavior::wrong},
    {"slow", Behavior::slow},
    {"brief", Behavior::brief},
    {"nan", Behavior::nan},
    {"chatty", Behavior::chatty},
    {"silent-exit", Behavior::silent_exit},
    {"bad-index", Behavior::bad_index},
    {"interrupt", Behavior::interrupt},
    {"steady", Behavior::steady},
    {"setup-crash", Behavior::setup_crash},
    {"hang-in-collective", Behavior::hang_in_collective},
    {"rank-crash", Behavior::rank_crash},
    {"rank-hang", Behavior::rank_hang},
    {"rank0-hang", Behavior::rank0_hang},
    {"screen", Behavior::screen}};

std::vector<std::string> behavior_names() {
  std::vector<std::string> names;
  for (const auto& [name, behavior] : kBehaviors) names.emplace_back(name);
  return names;
}

// A point planned without the axis (built by hand) behaves: ok.
Behavior behavior_of(const Params& params) {
  return params.contains("behavior") ? params.choice<Behavior>("behavior", kBehaviors)
                                     : Behavior::ok;
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

[[noreturn]] void hang() {
  while (true) sleep_ms(1000);
}

// Megabytes of chatter on stdout and stderr, some of it shaped like protocol lines.
void chatter() {
  const std::string line =
      "{\"type\":\"point\",\"result\":{\"index\":0}} chatter chatter chatter chatter chatter\n";
  for (std::size_t written = 0; written < (2u << 20); written += line.size()) {
    std::fputs(line.c_str(), stdout);
    std::fputs(line.c_str(), stderr);
  }
  std::fflush(stdout);
  std::fflush(stderr);
}

// Process state letter of `pid` from /proc (e.g. 'T' when stopped); '?' when unreadable.
char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : '?';
}

PointResult make_result(const GroupContext& ctx, const PlannedPoint& planned, Behavior behavior) {
  PointResult r;
  r.index = planned.index;
  r.workload = ctx.spec.workload;
  r.params = planned.params;
  r.gpus = ctx.spec.ranks();
  r.devices = ctx.spec.devices;
  r.placement = ctx.spec.placement;
  if (ctx.processes == nullptr) r.placement.gpus_per_node = r.gpus;  // one node of threads
  r.samples = {1.0e-3, 1.0e-3, 1.0e-3};
  if (behavior == Behavior::nan) r.samples[1] = std::numeric_limits<double>::quiet_NaN();
  const double scale = 1.0 + ctx.spec.settings.test_slowdown;
  if (behavior == Behavior::steady) {
    r.samples.clear();
    for (int i = 0; i < 12; ++i) r.samples.push_back(1.0e-3 * scale * (1.0 + 0.0005 * (i % 5)));
  }
  r.stats = compute_statistics(r.samples);
  r.metrics = {{"ops_per_s", behavior == Behavior::nan ? std::numeric_limits<double>::quiet_NaN()
                                                       : r.gpus / r.stats.median}};
  r.verification = {{"ok", behavior != Behavior::wrong}};
  if (behavior == Behavior::wrong) {
    r.status = Status::wrong;
    r.message = "selftest: deliberately wrong";
  }
  r.started_at = utc_now_iso8601();
  return r;
}

// The hosts of the launch, one per node ("" for a local group that names none).
std::vector<std::string> launch_hosts(const GroupContext& ctx) {
  std::vector<std::string> hosts = ctx.spec.placement.hosts;
  hosts.resize(static_cast<std::size_t>(std::max(1, ctx.spec.placement.nodes)));
  return hosts;
}

// `screen`: each rank's own samples (see the header); the headline sample is the slowest rank's.
void screen_timings(const GroupContext& ctx, PointResult& r) {
  const auto faults = test_hooks::screen_faults();
  const std::vector<std::string> hosts = launch_hosts(ctx);
  std::mt19937_64 random(std::random_device{}());
  std::uniform_real_distribution<double> ripple(-0.01, 0.01);
  const int per_node = ctx.processes == nullptr ? static_cast<int>(ctx.spec.devices.size())
                                                : ctx.spec.placement.gpus_per_node;
  constexpr std::size_t kSamples = 12;
  r.samples.assign(kSamples, 0.0);
  r.ranks.clear();
  for (int rank = 0; rank < r.gpus; ++rank) {
    const auto node = static_cast<std::size_t>(rank / std::max(1, per_node));
    const int device = ctx.spec.devices[static_cast<std::size_t>(rank % std::max(1, per_node))];
    const double slow = test_hooks::screen_slowdown(faults, hosts, hosts[node], device);
    std::vector<double> mine;
    for (std::size_t i = 0; i < kSamples; ++i) {
      mine.push_back(1.0e-3 * slow * (1.0 + ripple(random)));
      r.samples[i] = std::max(r.samples[i], mine.back());
    }
    const Statistics own = compute_statistics(mine, 0);
    r.ranks.push_back({rank, device, own.median, own.mean});
  }
  r.stats = compute_statistics(r.samples);
  r.metrics = {{"ops_per_s", r.gpus / r.stats.median}, {"ops_per_s_per_gpu", 1.0 / r.stats.median}};
  if (ctx.processes != nullptr || ctx.spec.devices.size() < 2) return;
  Json bw = Json::array();
  for (int i : ctx.spec.devices) {
    Json row = Json::array();
    for (int j : ctx.spec.devices) {
      row.push_back(i == j ? Json() : Json(100.0 * (1.0 + ripple(random)) /
                                           test_hooks::screen_slowdown(faults, hosts, hosts[0], i, j)));
    }
    bw.push_back(std::move(row));
  }
  r.extra["ranks"] = Json::array({Json{{"details", Json{{"bw_matrix_GBps", bw}}}}});
}

// Reports the point while the orchestrator is stopped, then interrupts it.
[[noreturn]] void report_then_interrupt(GroupContext& ctx, const PointResult& r) {
  const pid_t parent = ::getppid();
  sleep_ms(100);  // the orchestrator is back waiting on the pipe
  ::kill(parent, SIGSTOP);
  for (int i = 0; i < 500 && process_state(parent) != 'T'; ++i) sleep_ms(2);
  ctx.sink.point_finished(r);
  ::kill(parent, SIGINT);
  ::kill(parent, SIGCONT);
  hang();
}

// setup-crash: one thread per device meets at a poisonable barrier; the last rank throws
// before it. Rethrows that rank's own error (not the echo the others saw).
void setup_crash(const GroupContext& ctx) {
  const int n = static_cast<int>(ctx.spec.devices.size());
  bench::RankBarrier barrier(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        if (r == n - 1) {
          throw EnvironmentError(fmt::format("selftest: set-up failed on rank {}", r));
        }
        barrier.wait(r, "set-up done");
      } catch (const std::exception& e) {
        errors[r] = std::current_exception();
        barrier.poison(r, e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  if (errors[n - 1]) std::rethrow_exception(errors[n - 1]);
  throw EnvironmentError("selftest: setup-crash did not fail");  // needs 2+ devices
}

// hang-in-collective: the last rank never arrives; the others wait for the watchdog's
// deadline, then the point is a timeout and the worker must restart.
void hang_in_collective(GroupContext& ctx, const PlannedPoint& planned) {
  const int n = static_cast<int>(ctx.spec.devices.size());
  const double deadline_s = bench::watchdog_deadline_s(ctx.spec.settings, 0.0);
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  std::thread([] { hang(); }).detach();  // the rank that never joins
  std::vector<std::thread> threads;
  for (int r = 0; r + 1 < n; ++r) {
    threads.emplace_back([&] {
      std::unique_lock<std::mutex> lock(mutex);
      ++arrived;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::duration<double>(deadline_s), [&] { return arrived == n; });
    });
  }
  for (auto& t : threads) t.join();
  PointResult r = make_result(ctx, planned, Behavior::ok);
  r.status = Status::timeout;
  r.message = fmt::format("a collective did not complete within its {:.3g} s deadline",
                          deadline_s);
  ctx.sink.point_finished(r);
  throw EnvironmentError("selftest: a collective hung; the worker must restart");
}

// The process group's checks for one point (see the header), recorded in the point.
void check_process_group(ProcessGroup& group, const GroupSpec& spec, PointResult& r) {
  const std::string plan = dump_json(Json(spec));
  const std::string where = fmt::format("point {}: ", r.index);
  const bool same_plan = group.broadcast(plan, where + "the group's plan") == plan;
  const Json mine{{"rank", group.rank()},         {"value", group.rank() + 1},
                  {"host", group.host()},         {"local_rank", group.local_rank()},
                  {"same_plan", same_plan},       {"device", group.device()},
                  {"bus_id", group.device_bus_id()}};
  Json ranks = Json::array();
  std::int64_t sum = 0;
  bool all_same = true;
  std::vector<std::string> hosts;
  for (const std::string& text : group.all_gather(dump_json(mine), where + "the ranks' values")) {
    const Json rank = Json::parse(text);
    sum += rank.at("value").get<std::int64_t>();
    all_same = all_same && rank.at("same_plan").get<bool>();
    const std::string host = rank.at("host").get<std::string>();
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    ranks.push_back(rank);
  }
  const std::int64_t n = group.size();
  r.extra["process_group"] = {{"size", n}, {"sum", sum}, {"ranks", ranks}};
  if (r.placement.hosts.empty() && static_cast<int>(hosts.size()) == r.placement.nodes) {
    r.placement.hosts = hosts;
  }
  if (n != spec.ranks() || !all_same) {
    r.status = Status::failed;
    r.message = fmt::format("selftest: {} rank(s) launched for a group of {}{}", n, spec.ranks(),
                            all_same ? "" : ", and a rank runs another group than rank 0");
  } else if (sum != n * (n + 1) / 2) {
    r.status = Status::wrong;
    r.message = fmt::format("selftest: the ranks' values gathered to {}, not {}", sum,
                            n * (n + 1) / 2);
  }
  r.verification["ok"] = r.status == Status::ok;
}

// The point's telemetry (an observer exists under MGBENCH_TEST_FAKE_TELEMETRY or with NVML):
// with processes, every node leader's, gathered to rank 0 like the executor does.
Json point_telemetry(GroupContext& ctx, std::size_t index) {
  Json mine = ctx.observer != nullptr ? ctx.observer->end_point() : Json();
  if (ctx.processes != nullptr && ctx.spec.settings.telemetry) {
    mine = gather_node_telemetry(*ctx.processes, mine, fmt::format("point {}: telemetry", index));
  }
  return mine;
}

bool first_rank(const GroupContext& ctx) {
  return ctx.processes == nullptr || ctx.processes->rank() == 0;
}

bool last_rank(const GroupContext& ctx) {
  return ctx.processes == nullptr || ctx.processes->rank() == ctx.processes->size() - 1;
}

void run_selftest_group(GroupContext& ctx) {
  for (std::size_t k = 0; k < ctx.spec.point_count(); ++k) {
    const PlannedPoint planned = ctx.spec.point_at(k);
    ctx.sink.point_started(planned.index);
    if (ctx.observer != nullptr) ctx.observer->begin_point(ctx.spec.devices);
    const Behavior behavior = behavior_of(planned.params);
    if (behavior == Behavior::crash || (behavior == Behavior::rank_crash && last_rank(ctx))) {
      std::abort();
    }
    if (behavior == Behavior::hang || (behavior == Behavior::rank_hang && last_rank(ctx)) ||
        (behavior == Behavior::rank0_hang && first_rank(ctx)) ||
        (behavior == Behavior::screen &&
         test_hooks::screen_hangs(test_hooks::screen_faults(), launch_hosts(ctx)))) {
      hang();
    }
    if (behavior == Behavior::interrupt && ctx.processes != nullptr) {
      throw UsageError("selftest: 'interrupt' stops the worker's parent: a local worker only");
    }
    if (behavior == Behavior::silent_exit) return;
    if (behavior == Behavior::setup_crash) setup_crash(ctx);
    if (behavior == Behavior::hang_in_collective) hang_in_collective(ctx, planned);
    if (behavior == Behavior::bad_index) {
      PointResult bogus = make_result(ctx, planned, behavior);
      bogus.index = kBogusIndex + planned.index;
      ctx.sink.point_started(bogus.index);
      ctx.sink.point_finished(bogus);
      std::abort();
    }
    if (behavior == Behavior::garbage && ctx.processes == nullptr && ::fcntl(3, F_GETFD) != -1) {
      const char junk[] = "this is not json\n{\"type\":\"point\",\"result\":{\"trunc\n";
      (void)!::write(3, junk, sizeof(junk) - 1);
    }
    if (behavior == Behavior::chatty) chatter();
    if (behavior == Behavior::slow) sleep_ms(300);
    if (behavior == Behavior::brief) sleep_ms(20);
    PointResult r = make_result(ctx, planned, behavior);
    if (behavior == Behavior::screen) screen_timings(ctx, r);
    if (ctx.processes != nullptr) check_process_group(*ctx.processes, ctx.spec, r);
    r.telemetry = point_telemetry(ctx, planned.index);
    if (behavior == Behavior::interrupt) report_then_interrupt(ctx, r);
    ctx.sink.point_finished(r);
  }
}

// The table and charts every plain workload gets: op/s per point and vs the batch.
Presentation selftest_presentation() {
  return Presentation()
      .metric(MetricSpec("ops_per_s", "op/s", "op/s").format(ValueFormat::rate))
      .axis(AxisSpec("batch", "batch"))
      .table(TableSpec()
                 .column(ColumnSpec::gpus())
                 .column(ColumnSpec::devices())
                 .column(ColumnSpec::params())
                 .column(ColumnSpec::median_time())
                 .column(ColumnSpec::metric("ops_per_s", "op/s"))
                 .column(ColumnSpec::speedup())
                 .column(ColumnSpec::efficiency())
                 .tail())
      .chart(ChartSpec::scaling())
      .chart(ChartSpec::line("rate", "ops_per_s"));
}

const bool registered =
    test_hooks::enabled() &&
    register_workload(Workload("selftest")
                          .summary("test-only: fake points and deliberate faults")
                          .axis(Axis::text("behavior", {"ok"}).allowed(behavior_names()))
                          .axis(Axis::integer("batch", {"1"}))
                          .throughput("ops_per_s", "op/s")
                          .present(selftest_presentation())
                          .estimate_seconds_per_point(0.01)
                          .runner(run_selftest_group));

}  // namespace
}  // namespace mgbench
