#include "mgbench/run/orchestrator.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mgbench/core/error.hpp"
#include "mgbench/platform/subprocess.hpp"
#include "mgbench/run/worker.hpp"

namespace mgbench {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void on_interrupt(int) { interrupt_flag().store(true); }

// Runs one worker request and hands every parsed message to `on_message`.
struct AttemptOutcome {
  ExitInfo exit;
  bool done = false;
  bool timed_out = false;
  bool interrupted = false;
  std::string fatal;
};

template <typename OnMessage>
AttemptOutcome run_worker(const Json& request, double progress_timeout_s, OnMessage on_message) {
  AttemptOutcome outcome;
  WorkerProcess worker({"worker", "--result-fd", "3"}, request.dump());
  LineBuffer lines;
  double last_progress = now_s();
  std::string chunk;
  while (true) {
    chunk.clear();
    const bool open = worker.read_some(chunk, 200);
    if (!chunk.empty()) {
      lines.append(chunk.data(), chunk.size());
      for (const auto& line : lines.take_lines()) {
        std::string error;
        auto message = parse_worker_line(line, &error);
        if (!message) {
          spdlog::warn("ignoring a malformed line from worker {} ({}): {:.80}", worker.pid(),
                       error, line);
          continue;
        }
        if (message->kind == WorkerMessageKind::done) outcome.done = true;
        if (message->kind == WorkerMessageKind::fatal) outcome.fatal = message->text;
        if (message->kind == WorkerMessageKind::point) last_progress = now_s();
        on_message(*message);
      }
    }
    if (!open) break;
    if (interrupt_flag().load()) {
      outcome.interrupted = true;
      worker.kill_group();
      break;
    }
    if (now_s() - last_progress > progress_timeout_s) {
      outcome.timed_out = true;
      spdlog::error("worker {} made no progress for {:.0f} s: killing it", worker.pid(),
                    progress_timeout_s);
      worker.kill_group();
      break;
    }
  }
  outcome.exit = worker.wait();
  if (!lines.pending().empty()) {
    spdlog::warn("worker {} left a truncated line: {:.80}", worker.pid(), lines.pending());
  }
  return outcome;
}

}  // namespace

std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking waits return so the flag is seen
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

ProbeResult probe(Isolation isolation, bool doctor) {
  Json body;
  if (isolation == Isolation::none) {
    body = execute_probe(doctor);
  } else {
    bool got = false;
    std::string fatal;
    const auto outcome = run_worker(Json{{"mode", "probe"}, {"doctor", doctor}}, 120.0,
                                    [&](const WorkerMessage& m) {
                                      if (m.kind == WorkerMessageKind::probe) {
                                        body = m.body;
                                        got = true;
                                      }
                                    });
    if (!got) {
      if (!outcome.fatal.empty()) throw EnvironmentError(outcome.fatal);
      throw EnvironmentError("device probe failed: worker " + outcome.exit.describe());
    }
  }
  ProbeResult result;
  result.inventory = body.at("inventory").get<DeviceInventory>();
  result.environment = body.value("environment", Json::object());
  result.doctor = body.contains("doctor") ? body.at("doctor") : Json();
  return result;
}

PointResult unfinished_point(const std::string& workload, const std::vector<int>& devices,
                             const PlannedPoint& point, Status status, const std::string& message) {
  PointResult r;
  r.index = point.index;
  r.workload = workload;
  r.params = point.params;
  r.gpus = static_cast<int>(devices.size());
  r.devices = devices;
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

void Orchestrator::record(const PointResult& point) {
  results_[point.index] = point;
  ++done_count_;
  if (journal_) journal_->append(point);
  if (point.status != Status::ok) {
    spdlog::warn("{} [{}] {} on {} GPU(s): {}{}", point.workload, describe_params(point.params),
                 to_string(point.status), point.gpus, point.message,
                 point.noisy ? " (noisy)" : "");
  } else {
    spdlog::debug("{} [{}] ok: median {:.6g} s", point.workload, describe_params(point.params),
                  point.stats.median);
  }
}

void Orchestrator::record_unfinished(const PlannedGroup& group, const PlannedPoint& point,
                                     Status status, const std::string& message) {
  record(unfinished_point(group.workload, group.devices, point, status, message));
}

void Orchestrator::progress(const PlannedGroup& group, std::size_t index) {
  if (!tty_) return;
  const double elapsed = now_s() - started_s_;
  const std::size_t total = plan_.total_points;
  const std::size_t done = results_.size();
  const double eta = done > 0 ? elapsed / static_cast<double>(done) *
                                    static_cast<double>(total - done)
                              : plan_.estimated_s;
  std::string params;
  for (const auto& p : group.points) {
    if (p.index == index) params = describe_params(p.params);
  }
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s x%zu %s  ETA %.0f s", done + 1, total,
               group.workload.c_str(), group.devices.size(), params.substr(0, 60).c_str(), eta);
  std::fflush(stderr);
}

GroupSpec Orchestrator::make_spec(const PlannedGroup& group,
                                  const std::vector<PlannedPoint>& points) const {
  GroupSpec spec;
  spec.group_index = group.index;
  spec.workload = group.workload;
  spec.devices = group.devices;
  spec.points = points;
  spec.settings = options_.settings;
  return spec;
}

std::vector<PointResult> Orchestrator::results() const {
  std::vector<PointResult> out;
  for (const auto& [index, point] : results_) out.push_back(point);
  return out;
}

void Orchestrator::run() {
  started_s_ = now_s();
  for (const auto& group : plan_.groups) {
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
  spdlog::info("group {}: {} on GPU(s) {} ({} point(s))", group.index, group.workload,
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

std::vector<PlannedPoint> Orchestrator::run_group_attempt(const PlannedGroup& group,
                                                          const std::vector<PlannedPoint>& points) {
  const GroupSpec spec = make_spec(group, points);
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::size_t in_flight = kNone;  // the point started and not yet reported
  std::set<std::size_t> reported;
  const auto outcome = run_worker(
      Json{{"mode", "group"}, {"group", spec}}, options_.settings.group_timeout_s,
      [&](const WorkerMessage& m) {
        if (m.kind == WorkerMessageKind::started) {
          in_flight = m.index;
          progress(group, m.index);
        } else if (m.kind == WorkerMessageKind::point) {
          bool planned = false;
          for (const auto& p : points) planned = planned || p.index == m.point.index;
          if (!planned || reported.count(m.point.index)) {
            spdlog::warn("ignoring a result for unexpected point {}", m.point.index);
            return;
          }
          reported.insert(m.point.index);
          in_flight = kNone;
          record(m.point);
        }
      });
  std::vector<PlannedPoint> left;
  for (const auto& p : points) {
    if (!reported.count(p.index) && p.index != in_flight) left.push_back(p);
  }
  auto find_point = [&](std::size_t index) -> const PlannedPoint& {
    for (const auto& p : points) {
      if (p.index == index) return p;
    }
    return points.front();
  };
  if (outcome.interrupted) {
    if (in_flight != kNone) record_unfinished(group, find_point(in_flight), Status::skipped, "interrupted");
    for (const auto& p : left) record_unfinished(group, p, Status::skipped, "interrupted");
    return {};
  }
  if (outcome.timed_out) {
    const std::string why = fmt::format("group made no progress for {:.0f} s (--group-timeout)",
                                        options_.settings.group_timeout_s);
    if (in_flight != kNone) record_unfinished(group, find_point(in_flight), Status::timeout, why);
    for (const auto& p : left) {
      record_unfinished(group, p, Status::timeout, "not run: the group timed out");
    }
    return {};
  }
  const bool clean = outcome.done && outcome.exit.exited && outcome.exit.code == 0;
  if (clean) {
    if (in_flight != kNone) {
      record_unfinished(group, find_point(in_flight), Status::failed,
                        "the worker exited without reporting this point");
    }
    for (const auto& p : left) {
      record_unfinished(group, p, Status::failed, "the worker did not report this point");
    }
    return {};
  }
  const std::string reason =
      outcome.fatal.empty() ? "worker " + outcome.exit.describe()
                            : outcome.fatal + " (worker " + outcome.exit.describe() + ")";
  if (in_flight != kNone) record_unfinished(group, find_point(in_flight), Status::failed, reason);
  if (in_flight != kNone || !reported.empty()) {
    // The worker made progress before it died: a fresh one continues with the rest.
    if (!left.empty()) {
      spdlog::warn("restarting the worker for the {} remaining point(s) of group {}", left.size(),
                   group.index);
    }
    return left;
  }
  // Nothing ran: the group itself cannot start (e.g. init failure). Do not loop.
  for (const auto& p : left) record_unfinished(group, p, Status::failed, reason);
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
