// The hidden `mgbench worker` subcommand: runs one group (or a device probe) and streams
// JSON lines to the orchestrator on fd 3 (see worker_protocol.hpp); started by mpirun or
// srun (--mpi), one rank of a group, rank 0 streaming the same lines on its stdout.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <iostream>
#include <iterator>
#include <string>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/file_io.hpp"
#include "mgbench/model/non_finite.hpp"
#include "mgbench/run/launched_rank.hpp"
#include "mgbench/run/mpi_group.hpp"
#include "mgbench/run/plan.hpp"
#include "mgbench/run/worker.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

// Lines to the orchestrator go through write_fully; a failed write means the orchestrator went
// away, and there is nothing more to do, so its result is not looked at.
namespace {

class PipeSink : public PointSink {
 public:
  explicit PipeSink(int fd) : fd_(fd) {}
  void point_started(std::size_t index) override {
    (void)write_fully(fd_, make_worker_line(Json{{"type", "started"}, {"index", index}}));
  }
  void point_finished(const PointResult& result) override {
    PointResult checked = result;
    reject_non_finite(checked);  // at the source: JSON cannot carry NaN or infinity
    (void)write_fully(fd_, make_worker_line(Json{{"type", "point"}, {"result", checked}}));
  }

 private:
  int fd_;
};

// The results of the ranks other than rank 0 of a process group: rank 0 reports the point.
class DropSink : public PointSink {
 public:
  void point_started(std::size_t) override {}
  void point_finished(const PointResult&) override {}
};

// A rank killed by a signal says so first, on the protocol stream, with its rank and host.
// The lines are built before the handlers are installed: a handler only writes.
struct FatalSignalLines {
  int fd = -1;
  std::map<int, std::string> lines;
};
FatalSignalLines& fatal_signal_lines() {
  static FatalSignalLines lines;
  return lines;
}

void on_fatal_signal(int sig) {
  const FatalSignalLines& f = fatal_signal_lines();
  if (const auto it = f.lines.find(sig); it != f.lines.end()) {
    (void)!::write(f.fd, it->second.data(), it->second.size());
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string rank_place(const ProcessGroup& group) {
  return fmt::format("rank {} on {}", group.rank(), group.host());
}

void arm_fatal_signal_lines(int fd, const ProcessGroup& group) {
  FatalSignalLines& f = fatal_signal_lines();
  f.fd = fd;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    const char* name = ::strsignal(sig);
    f.lines[sig] = make_worker_line(
        Json{{"type", "fatal"},
             {"message", fmt::format("{}: killed by signal {} ({})", rank_place(group), sig,
                                     name != nullptr ? name : "?")}});
  }
  for (const auto& [sig, line] : f.lines) ::signal(sig, on_fatal_signal);
}

// Rank 0 of a group: the point results go on the stream; the other ranks' are dropped.
void run_group_rank(LaunchedGroup& group, const Json& request, const RankStart& start, int fd) {
  const GroupSpec spec = request.at("group").get<GroupSpec>();
  group.watch_arrivals(arrival_deadline_s(spec.settings.group_timeout_s));
  RankPlace place;
  try {
    place = place_rank(group, spec, start);
  } catch (const EnvironmentError& e) {
    group.abort_launch(e.what());  // no group can run on this launch: the sweep stops
  }
  if (!place.notes.empty()) {
    Json notes = Json::array();
    for (const auto& n : place.notes) notes.push_back(Json{{"kind", n.kind}, {"text", n.text}});
    (void)write_fully(fd, make_worker_line(Json{{"type", "notes"}, {"notes", std::move(notes)}}));
  }
  PipeSink pipe(fd);
  DropSink drop;
  execute_group(spec, group.rank() == 0 ? static_cast<PointSink&>(pipe) : drop, &group,
                place.node_bus_ids);
}

// One rank of a group started by mpirun or srun. Every rank's stdout is the launcher's
// forwarded stream: rank 0 writes the protocol there, any rank writes its own `fatal` line
// before it ends the launch, and everything else printed to stdout goes to stderr instead.
// `planned`: its node's devices, so that it selects its GPU before MPI initialises CUDA.
int run_process_rank(const std::vector<int>& planned) {
  const int fd = ::dup(1);
  ::dup2(2, 1);
  const RankStart start = start_rank(planned);
  const std::unique_ptr<LaunchedGroup> group = start_mpi_group(fd);
  arm_fatal_signal_lines(fd, *group);
  std::string input;
  if (group->rank() == 0) {
    input.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  input = group->broadcast(input, "the group's request");
  if (group->rank() == 0) {  // its host: the orchestrator names it when rank 0 itself hangs
    const Json hello{{"type", "hello"}, {"pid", ::getpid()}, {"rank", 0}, {"host", group->host()}};
    (void)write_fully(fd, make_worker_line(hello));
  }
  try {
    const Json request = Json::parse(input);
    if (request.value("mode", "") == "probe") {
      const Json answer = probe_rank(*group, request.value("doctor", false));
      if (group->rank() == 0) (void)write_fully(fd, make_worker_line(answer));
    } else {
      run_group_rank(*group, request, start, fd);
    }
  } catch (const std::exception& e) {
    group->abort(e.what());  // says so on the stream; the other ranks may wait for this one
  }
  if (group->rank() == 0) (void)write_fully(fd, make_worker_line(Json{{"type", "done"}}));
  return 0;
}

}  // namespace

int cmd_worker(int argc, char** argv) {
  cxxopts::Options options("mgbench worker", "internal: runs one group for the orchestrator");
  options.add_options()("result-fd", "file descriptor for results",
                        cxxopts::value<int>()->default_value("3"));
  options.add_options()("mpi", "one rank of a group started by mpirun or srun (results on "
                               "stdout)");
  options.add_options()("devices", "with --mpi: the node's devices of the group, by local rank",
                        cxxopts::value<std::string>()->default_value(""));
  options.add_options()("h,help", "this help");
  const auto args = parse_command_line(options, argc, argv);
  const int fd = args["result-fd"].as<int>();
  if (parse_only()) return 0;
  if (args.count("mpi")) {
    const std::string devices = args["devices"].as<std::string>();
    return run_process_rank(devices.empty() ? std::vector<int>{}
                                            : parse_device_list(devices, -1));
  }

  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  Json request;
  try {
    request = Json::parse(input);
  } catch (const std::exception& e) {
    throw UsageError(std::string("worker: malformed request: ") + e.what());
  }
  (void)write_fully(fd, make_worker_line(Json{{"type", "hello"}, {"pid", ::getpid()}}));
  try {
    if (request.value("mode", "") == "probe") {
      Json probe = execute_probe(request.value("doctor", false));
      probe["type"] = "probe";
      (void)write_fully(fd, make_worker_line(probe));
    } else {
      const GroupSpec spec = request.at("group").get<GroupSpec>();
      PipeSink sink(fd);
      execute_group(spec, sink);
    }
  } catch (const Error& e) {
    // The orchestrator reports it (one line): the worker itself prints nothing.
    (void)write_fully(fd, make_worker_line(Json{{"type", "fatal"}, {"message", e.what()}}));
    return static_cast<int>(e.code() == ExitCode::ok ? ExitCode::environment : e.code());
  } catch (const std::exception& e) {
    (void)write_fully(fd, make_worker_line(Json{{"type", "fatal"}, {"message", e.what()}}));
    return static_cast<int>(ExitCode::environment);
  }
  (void)write_fully(fd, make_worker_line(Json{{"type", "done"}}));
  return 0;
}

}  // namespace mgbench
