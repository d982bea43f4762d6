// The sweep orchestrator: a worker process per group, every point journalled as it finishes,
// crashed, hung, silent or interrupted workers accounted for point by point.
#include "mgbench/run/orchestrator.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/core/text.hpp"
#include "mgbench/model/non_finite.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/platform/subprocess.hpp"
#include "mgbench/run/progress.hpp"
#include "mgbench/run/worker.hpp"
#include "worker_attempt.hpp"

namespace mgbench {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

void on_interrupt(int) { interrupt_flag().store(true); }

// Rank 0 of a launch waits at a collective for late ranks: said while it waits.
void warn_stall(std::size_t group, const WorkerStall& stall) {
  if (stall.missing.empty()) return;
  logging::warn("group {}: rank 0 has waited {:.1f} s at '{}' for {} rank(s), rank {} on {} first",
                group, stall.waited_s, one_line(stall.step), stall.missing.size(),
                stall.missing[0].rank, one_line(stall.missing[0].host));
}

// Why an attempt ended badly: the worker's fatal line (with a launcher, naming the rank and its
// host), and how the worker or the launcher ended.
std::string failure_reason(const AttemptOutcome& outcome, Launcher launcher) {
  const std::string who = launcher == Launcher::local ? "worker" : to_string(launcher);
  const std::string how = who + " " + outcome.exit.describe();
  return outcome.fatal.empty() ? how : outcome.fatal + " (" + how + ")";
}

}  // namespace

void LaunchWatch::observe(const WorkerMessage& message) {
  switch (message.kind) {
    case WorkerMessageKind::hello:
      if (!message.text.empty()) rank0_host_ = message.text;
      break;
    case WorkerMessageKind::started:
    case WorkerMessageKind::point:
      stall_.reset();
      break;
    case WorkerMessageKind::stalled:
      if (message.stall.missing.empty()) {
        stall_.reset();
      } else {
        stall_ = message.stall;
      }
      break;
    default:
      break;
  }
}

std::string LaunchWatch::timeout_reason(double timeout_s, bool launched) const {
  if (!launched) {
    return fmt::format("group made no progress for {:.0f} s (--group-timeout)", timeout_s);
  }
  const std::string tail = fmt::format("no progress for {:.0f} s (--group-timeout)", timeout_s);
  if (!stall_) {
    const std::string host = rank0_host_.empty() ? "an unknown host" : one_line(rank0_host_);
    return fmt::format("rank 0 on {} made no progress, and no other rank was late to a "
                       "collective it waited at; {}", host, tail);
  }
  constexpr std::size_t kNamed = 8;  // ranks named in full; the rest are counted
  std::string ranks;
  for (std::size_t i = 0; i < stall_->missing.size() && i < kNamed; ++i) {
    const StalledRank& r = stall_->missing[i];
    ranks += fmt::format("{}rank {} on {}", i == 0 ? "" : ", ", r.rank, one_line(r.host));
  }
  if (stall_->missing.size() > kNamed) {
    ranks += fmt::format(" and {} more", stall_->missing.size() - kNamed);
  }
  return fmt::format("{} did not reach '{}' within {:.3g} s of rank 0 arriving there; {}", ranks,
                     one_line(stall_->step), stall_->waited_s, tail);
}

std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking waits return so the flag is seen
  // A closed terminal (SIGHUP) and a polite kill (SIGTERM) end the sweep like Ctrl-C does.
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

ProbeResult probe(Isolation isolation, bool doctor) {
  Json body;
  if (isolation == Isolation::none) {
    body = execute_probe(doctor);
  } else {
    bool got = false;
    const auto outcome = run_worker(
        Json{{"mode", "probe"}, {"doctor", doctor}}, kProbeTimeoutSeconds,
        [&](const WorkerMessage& m) {
          if (m.kind == WorkerMessageKind::probe) {
            body = m.body;
            got = true;
          }
        },
        {}, worker_arguments(Launcher::local));
    if (!got) {
      if (!outcome.fatal.empty()) throw EnvironmentError(outcome.fatal);
      if (!outcome.start_error.empty()) throw EnvironmentError(outcome.start_error);
      throw EnvironmentError("device probe failed: worker " + outcome.exit.describe());
    }
  }
  return probe_result(body);
}

ProbeResult probe_result(const Json& body) {
  ProbeResult result;
  result.inventory = body.at("inventory").get<DeviceInventory>();
  result.environment = body.value("environment", Json::object());
  result.doctor = body.contains("doctor") ? body.at("doctor") : Json();
  return result;
}

void validate_sweep_arguments(const SweepOptions& options) {
  // make_plan without devices validates everything else; GPU counts 1..N stand in for the
  // unknown ones so that every workload (whatever its minimum) is checked.
  SweepOptions check = options;
  if (check.gpu_counts.empty()) {
    const int n = check.devices.empty() ? 8 : static_cast<int>(check.devices.size());
    for (int i = 1; i <= n; ++i) check.gpu_counts.push_back(i);
  }
  (void)make_plan(check, -1);
}

void check_resumed_points(const Plan& plan, const std::map<std::size_t, PointResult>& finished) {
  std::map<std::size_t, std::pair<const PlannedGroup*, const PlannedPoint*>> planned;
  for (const auto& g : plan.groups) {
    for (const auto& p : g.points) planned[p.index] = {&g, &p};
  }
  for (const auto& [index, done] : finished) {
    const auto it = planned.find(index);
    std::string why;
    if (it == planned.end()) {
      why = "is not in the new plan";
    } else if (done.workload != it->second.first->workload) {
      why = fmt::format("was {}, the plan now has {}", done.workload, it->second.first->workload);
    } else if (done.params != it->second.second->params) {
      why = fmt::format("had [{}], the plan now has [{}]", describe_params(done.params),
                        describe_params(it->second.second->params));
    } else if (done.placement.process_model != it->second.first->placement.process_model ||
               done.placement.nodes != it->second.first->placement.nodes) {
      why = fmt::format("ran as {} on {} node(s), the plan now has {} on {}",
                        to_string(done.placement.process_model), done.placement.nodes,
                        to_string(it->second.first->placement.process_model),
                        it->second.first->placement.nodes);
    } else if (done.devices != it->second.first->devices) {
      why = fmt::format("ran on GPU(s) {}, the plan now uses {}", fmt::join(done.devices, ","),
                        fmt::join(it->second.first->devices, ","));
    }
    if (!why.empty()) {
      throw UsageError(fmt::format("cannot resume: the plan changed: finished point #{} {}", index,
                                   why));
    }
  }
}

JournalMode sweep_journal_mode(const std::string& out_dir, bool resuming,
                               const std::vector<std::string>& argv) {
  if (resuming) return JournalMode::resume;
  const std::string path = out_dir + "/journal.jsonl";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return JournalMode::create;
  if (std::find(argv.begin(), argv.end(), "--force") == argv.end()) {
    throw UsageError(fmt::format("'{}' holds a sweep already: continue it with --resume {}, or "
                                 "start over with --force",
                                 out_dir, out_dir));
  }
  logging::warn("--force: starting over in '{}'; its previous journal is replaced", out_dir);
  return JournalMode::replace;
}

PointResult unfinished_point(const PlannedGroup& group, const PlannedPoint& point, Status status,
                             const std::string& message) {
  PointResult r;
  r.index = point.index;
  r.workload = group.workload;
  r.params = point.params;
  r.gpus = group.gpus();
  r.devices = group.devices;
  r.placement = group.placement;
  r.status = status;
  r.message = message;
  r.started_at = utc_now_iso8601();
  return r;
}

Orchestrator::Orchestrator(const SweepOptions& options, const Plan& plan, Journal* journal,
                           std::map<std::size_t, PointResult> finished)
    : options_(options), plan_(plan), journal_(journal), results_(std::move(finished)) {
  tty_ = ::isatty(2) && options.verbosity >= 0;
}

void Orchestrator::record(const PointResult& reported, bool quiet) {
  PointResult point = reported;
  reject_non_finite(point);  // in-process groups, and workers of other builds
  results_[point.index] = point;
  ++done_count_;
  if (journal_ && !journal_->append(point) && journal_error_.empty()) {
    journal_error_ = journal_->error();
    logging::error("{}: no further group is started", journal_error_);
  }
  if (quiet) return;  // a point not run after a launch that did not start: said once, later
  const std::string figure = headline_figure(point);
  if (point.status == Status::ok && !figure.empty()) last_figure_ = figure;
  if (!tty_ && options_.verbosity >= 0) {
    // Not a terminal: one plain line per finished point instead of a line rewritten in place.
    ProgressState state{results_.size(), plan_.total_points,
                        fmt::format("{} x{} {}: {}", point.workload, point.gpus,
                                    describe_params(point.params), figure),
                        eta_s(), ""};
    std::fprintf(stderr, "%s\n", progress_line(state).c_str());
  }
  if (point.status != Status::ok) {
    logging::warn("{} [{}] {} on {} GPU(s): {}{}", point.workload, describe_params(point.params),
                  to_string(point.status), point.gpus, point.message,
                  point.noisy ? " (noisy)" : "");
  } else if (point.noisy || !point.flags.empty()) {
    logging::warn("{} [{}] on {} GPU(s): {}", point.workload, describe_params(point.params),
                  point.gpus, one_line(quality_note(point.spread, point.flags)));
  } else {
    logging::debug("{} [{}] ok: median {:.6g} s", point.workload, describe_params(point.params),
                   point.stats.median);
  }
}

void Orchestrator::record_unfinished(const PlannedGroup& group, const PlannedPoint& point,
                                     Status status, const std::string& message) {
  record(unfinished_point(group, point, status, message));
}

double Orchestrator::eta_s() const {
  const std::size_t left = plan_.total_points - std::min(plan_.total_points, results_.size());
  return progress_eta_s(monotonic_seconds() - started_s_, done_count_, left, plan_.estimated_s);
}

void Orchestrator::progress(const PlannedGroup& group, std::size_t index) {
  if (!tty_) return;  // plain lines are written as points finish (record)
  std::string params;
  for (const auto& p : group.points) {
    if (p.index == index) params = describe_params(p.params);
  }
  const ProgressState state{results_.size() + 1, plan_.total_points,
                            fmt::format("{} x{} {}", group.workload, group.devices.size(),
                                        params.substr(0, 60)),
                            eta_s(), last_figure_};
  std::fprintf(stderr, "\r\033[K%s", progress_line(state).c_str());
  std::fflush(stderr);
}

GroupSpec Orchestrator::make_spec(const PlannedGroup& group,
                                  const std::vector<PlannedPoint>& points) const {
  GroupSpec spec;
  spec.group_index = group.index;
  spec.workload = group.workload;
  spec.devices = group.devices;
  spec.points = points;
  spec.settings = settings_for_workload(options_.settings, group.workload);
  spec.placement = group.placement;
  return spec;
}

std::vector<PointResult> Orchestrator::results() const {
  std::vector<PointResult> out;
  for (const auto& [index, point] : results_) out.push_back(point);
  return out;
}

void Orchestrator::run() {
  started_s_ = monotonic_seconds();
  for (const auto& group : plan_.groups) {
    if (!journal_error_.empty() || !launch_error_.empty()) {
      // What is not in the journal could not be resumed, and after a launch that did not start
      // the next would not either: start nothing new.
      const std::string& why = journal_error_.empty() ? launch_error_ : journal_error_;
      for (const auto& p : group.points) {
        if (!results_.count(p.index)) {
          record(unfinished_point(group, p, Status::skipped, "not run: " + why),
                 !launch_error_.empty());
        }
      }
      continue;
    }
    run_group(group);
    if (interrupt_flag().load()) interrupted_ = true;
  }
  if (tty_) std::fprintf(stderr, "\r\033[K");
}

void Orchestrator::run_group(const PlannedGroup& group) {
  std::vector<PlannedPoint> todo;
  for (const auto& p : group.points) {
    if (!results_.count(p.index)) todo.push_back(p);
  }
  if (todo.empty()) return;
  logging::info("group {}: {} on GPU(s) {} ({} point(s))", group.index, group.workload,
                fmt::join(group.devices, ","), todo.size());
  if (options_.isolation == Isolation::none) {
    run_group_in_process(group, std::move(todo));
    return;
  }
  while (!todo.empty()) {
    if (interrupt_flag().load()) {
      for (const auto& p : todo) record_unfinished(group, p, Status::skipped, "interrupted");
      return;
    }
    todo = run_group_attempt(group, todo);
  }
}

// What one attempt at a group has seen so far.
struct Orchestrator::Attempt {
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  explicit Attempt(const std::vector<PlannedPoint>& planned) : points(planned) {}
  const std::vector<PlannedPoint>& points;
  std::size_t in_flight = kNone;  // started and not yet reported
  std::set<std::size_t> reported;
  LaunchWatch watch;
  const PlannedPoint* find(std::size_t index) const {
    for (const auto& p : points) {
      if (p.index == index) return &p;
    }
    return nullptr;
  }
};

void Orchestrator::on_group_message(const PlannedGroup& group, Attempt& a,
                                    const WorkerMessage& m) {
  a.watch.observe(m);
  if (m.kind == WorkerMessageKind::stalled) warn_stall(group.index, m.stall);
  if (m.kind == WorkerMessageKind::notes) {
    for (const auto& note : m.notes) {  // each kind once per sweep: launches repeat them
      if (noted_.insert(note.kind).second) logging::warn("{}", one_line(note.text));
    }
  }
  if (m.kind != WorkerMessageKind::started && m.kind != WorkerMessageKind::point) return;
  // An index outside this attempt's points must never stand for another point.
  if (!a.find(m.index) || a.reported.count(m.index)) {
    logging::warn("ignoring a '{}' message for point {}: not expected in group {}",
                  m.kind == WorkerMessageKind::started ? "started" : "point", m.index,
                  group.index);
    return;
  }
  if (m.kind == WorkerMessageKind::started) {
    a.in_flight = m.index;
    progress(group, m.index);
    return;
  }
  a.reported.insert(m.index);
  a.in_flight = Attempt::kNone;
  record(m.point);
}

// A launch that did not start stops the sweep (an environment error: root, SSH, slots, a host
// list too long to exec...): the points not run are skipped, quietly, for --resume.
void Orchestrator::stop_for_launch(const PlannedGroup& group,
                                   const std::vector<PlannedPoint>& points,
                                   const std::string& why) {
  launch_error_ = why;
  for (const auto& p : points) {
    record(unfinished_point(group, p, Status::skipped, "not run: " + why), true);
  }
}

std::vector<PlannedPoint> Orchestrator::run_group_attempt(const PlannedGroup& group,
                                                          const std::vector<PlannedPoint>& points) {
  constexpr std::size_t kNone = Attempt::kNone;
  Attempt attempt(points);
  const bool launched = options_.launch.launcher != Launcher::local;
  std::unique_ptr<PreparedLaunch> launch;
  try {
    launch = std::make_unique<PreparedLaunch>(options_.launch, group.placement);
  } catch (const EnvironmentError& e) {
    stop_for_launch(group, points, e.what());
    return {};
  }
  const auto outcome = run_worker(
      Json{{"mode", "group"}, {"group", make_spec(group, points)}},
      options_.settings.group_timeout_s,
      [&](const WorkerMessage& m) { on_group_message(group, attempt, m); }, launch->prefix(),
      worker_arguments(options_.launch.launcher, launched ? group.devices : std::vector<int>{}));
  if (!outcome.start_error.empty() ||
      (launched && attempt.reported.empty() && attempt.in_flight == kNone)) {
    const std::string why = !outcome.start_error.empty()
                                ? outcome.start_error
                                : launch_start_failure(outcome, options_.launch.launcher,
                                                       options_.settings.group_timeout_s);
    if (!why.empty()) {
      stop_for_launch(group, points, why);
      return {};
    }
  }
  pass_on_output(outcome);
  return after_attempt(group, attempt, outcome, launched);
}

// How an attempt ended, point by point; returns the points a fresh worker should run.
std::vector<PlannedPoint> Orchestrator::after_attempt(const PlannedGroup& group,
                                                      const Attempt& attempt,
                                                      const AttemptOutcome& outcome,
                                                      bool launched) {
  constexpr std::size_t kNone = Attempt::kNone;
  const std::size_t in_flight = attempt.in_flight;
  const std::set<std::size_t>& reported = attempt.reported;
  auto find_point = [&](std::size_t index) { return attempt.find(index); };
  std::vector<PlannedPoint> left;
  for (const auto& p : attempt.points) {
    if (!reported.count(p.index) && p.index != in_flight) left.push_back(p);
  }
  if (outcome.interrupted) {
    if (in_flight != kNone) {
      record_unfinished(group, *find_point(in_flight), Status::skipped, "interrupted");
    }
    for (const auto& p : left) record_unfinished(group, p, Status::skipped, "interrupted");
    return {};
  }
  if (outcome.timed_out) {
    // A launch (a process per GPU) that hung in a point costs that point only.
    return after_timeout(group, in_flight != kNone ? find_point(in_flight) : nullptr, left,
                         attempt.watch.timeout_reason(options_.settings.group_timeout_s, launched),
                         launched && in_flight != kNone);
  }
  const bool clean = outcome.done && outcome.exit.exited && outcome.exit.code == 0;
  if (clean) {
    if (in_flight != kNone) {
      record_unfinished(group, *find_point(in_flight), Status::failed,
                        "the worker exited (exit code 0) without reporting this point");
    }
    for (const auto& p : left) {
      record_unfinished(group, p, Status::failed, "the worker did not report this point");
    }
    return {};
  }
  const std::string reason = failure_reason(outcome, options_.launch.launcher);
  if (in_flight != kNone) record_unfinished(group, *find_point(in_flight), Status::failed, reason);
  if (in_flight != kNone || !reported.empty()) {
    // The worker made progress before it died: a fresh one continues with the rest.
    if (!left.empty()) {
      logging::warn("restarting the worker for the {} remaining point(s) of group {}", left.size(),
                    group.index);
    }
    return left;
  }
  // Nothing ran: the group itself cannot start (e.g. init failure). Do not loop.
  for (const auto& p : left) record_unfinished(group, p, Status::failed, reason);
  return {};
}

std::vector<PlannedPoint> Orchestrator::after_timeout(const PlannedGroup& group,
                                                      const PlannedPoint* in_flight,
                                                      const std::vector<PlannedPoint>& left,
                                                      const std::string& why, bool relaunch) {
  if (in_flight != nullptr) record_unfinished(group, *in_flight, Status::timeout, why);
  if (relaunch) {
    if (!left.empty()) {
      logging::warn("relaunching group {} for its {} remaining point(s)", group.index, left.size());
    }
    return left;
  }
  for (const auto& p : left) {
    record_unfinished(group, p, Status::timeout, "not run: the group timed out");
  }
  return {};
}

void Orchestrator::run_group_in_process(const PlannedGroup& group,
                                        std::vector<PlannedPoint> points) {
  class Sink : public PointSink {
   public:
    Sink(Orchestrator& o, const PlannedGroup& g) : o_(o), g_(g) {}
    void point_started(std::size_t index) override {
      in_flight = index;
      o_.progress(g_, index);
    }
    void point_finished(const PointResult& result) override {
      reported.insert(result.index);
      in_flight.reset();
      o_.record(result);
    }
    std::optional<std::size_t> in_flight;
    std::set<std::size_t> reported;

   private:
    Orchestrator& o_;
    const PlannedGroup& g_;
  } sink(*this, group);
  const GroupSpec spec = make_spec(group, points);
  std::string error;
  try {
    execute_group(spec, sink);
  } catch (const std::exception& e) {
    error = e.what();
  }
  for (const auto& p : points) {
    if (sink.reported.count(p.index)) continue;
    const bool was_running = sink.in_flight && *sink.in_flight == p.index;
    record_unfinished(group, p, Status::failed,
                      error.empty() ? "not reported" : (was_running ? error : "not run: " + error));
  }
}

}  // namespace mgbench
