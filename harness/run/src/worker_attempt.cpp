// One run of a worker for the orchestrator (worker_attempt.hpp).
#include "worker_attempt.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/run/launcher.hpp"
#include "mgbench/run/orchestrator.hpp"

namespace mgbench {

namespace {

// Hands every complete message of `lines` to `on_message`, noting what the outcome keeps.
void take_messages(LineBuffer& lines, pid_t pid, AttemptOutcome& outcome, double& last_progress,
                   const std::function<void(const WorkerMessage&)>& on_message) {
  for (const auto& line : lines.take_lines()) {
    std::string error;
    auto message = parse_worker_line(line, &error);
    if (!message) {
      logging::warn("ignoring a malformed line from worker {} ({}): {:.80}", pid, error, line);
      continue;
    }
    if (message->kind == WorkerMessageKind::hello) outcome.said_hello = true;
    outcome.working = outcome.working || message->kind == WorkerMessageKind::started ||
                      message->kind == WorkerMessageKind::point ||
                      message->kind == WorkerMessageKind::probe;
    if (message->kind == WorkerMessageKind::done) outcome.done = true;
    // The first fatal is the cause (other ranks of a launch may follow it).
    if (message->kind == WorkerMessageKind::fatal && outcome.fatal.empty()) {
      outcome.fatal = message->text;
      outcome.launch_fatal = message->launch;
    }
    if (message->kind == WorkerMessageKind::point) last_progress = monotonic_seconds();
    on_message(*message);
  }
}

}  // namespace

AttemptOutcome run_worker(const Json& request, double progress_timeout_s,
                          const std::function<void(const WorkerMessage&)>& on_message,
                          const std::vector<std::string>& launch,
                          const std::vector<std::string>& worker_args) {
  AttemptOutcome outcome;
  std::unique_ptr<WorkerProcess> started;
  try {
    started = std::make_unique<WorkerProcess>(worker_args, dump_json(request), launch);
  } catch (const EnvironmentError& e) {
    outcome.start_error = e.what();  // e.g. E2BIG: the launcher never ran
    return outcome;
  }
  WorkerProcess& worker = *started;
  LineBuffer lines;
  bool released = false;
  double last_progress = monotonic_seconds();
  // Reads what the pipe holds and hands on every complete message; false at EOF.
  auto pump = [&](int timeout_ms) {
    std::string chunk;
    const bool open = worker.read_some(chunk, timeout_ms);
    lines.append(chunk.data(), chunk.size());
    take_messages(lines, worker.pid(), outcome, last_progress, on_message);
    // The launch is at work: what the launcher and the ranks print goes to the user from now on.
    if (outcome.working && !released) {
      worker.release_stderr();
      released = true;
    }
    return open;
  };
  while (pump(200)) {
    if (interrupt_flag().load()) {
      outcome.interrupted = true;
      break;
    }
    if (monotonic_seconds() - last_progress > progress_timeout_s) {
      outcome.timed_out = true;
      logging::error("worker {} made no progress for {:.0f} s: killing it", worker.pid(),
                     progress_timeout_s);
      break;
    }
  }
  if (outcome.interrupted || outcome.timed_out) {
    worker.kill_group();
    // A point the worker wrote before it was killed is still in the pipe: read it to EOF.
    const double deadline = monotonic_seconds() + kWorkerDrainSeconds;
    while (pump(200) && monotonic_seconds() < deadline) {
    }
  }
  outcome.exit = worker.wait();
  if (!released) {
    outcome.launcher_output = worker.held_stderr();
    logging::debug("the launcher's output:\n{}", outcome.launcher_output);
  }
  if (!lines.pending().empty()) {
    logging::warn("worker {} left a truncated line: {:.80}", worker.pid(), lines.pending());
  }
  if (lines.dropped_lines() > 0) {
    logging::warn("worker {} wrote {} line(s) longer than {} bytes: ignored", worker.pid(),
                  lines.dropped_lines(), limits::kMaxLineBytes);
  }
  return outcome;
}

void pass_on_output(const AttemptOutcome& outcome) {
  const std::string& text = outcome.launcher_output;
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), stderr);
}

std::string launch_start_failure(const AttemptOutcome& outcome, Launcher launcher,
                                 double timeout_s) {
  if (!outcome.start_error.empty()) return outcome.start_error;
  if (outcome.interrupted) return "";
  if (outcome.said_hello) {
    return outcome.launch_fatal ? fmt::format("{}: the ranks cannot be placed: {}",
                                              to_string(launcher), outcome.fatal)
                                : "";
  }
  if (outcome.timed_out) {
    const std::string line = launch_failure_line(
        launcher, fmt::format("no rank within {:.0f} s", timeout_s), outcome.launcher_output);
    // Silent and stuck: most often a host it cannot reach (mpirun waits on SSH).
    return outcome.launcher_output.empty()
               ? line + "; check that every host is reachable from here (mpirun: passwordless "
                        "SSH; srun: the nodes of the allocation)"
               : line;
  }
  return launch_failure_line(launcher, outcome.exit.describe(), outcome.launcher_output);
}

}  // namespace mgbench
