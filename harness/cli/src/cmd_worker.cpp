// The hidden `mgbench worker` subcommand: runs one group (or a device probe) and streams
// JSON lines to the orchestrator on fd 3 (see worker_protocol.hpp).
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <iterator>
#include <string>

#include <cxxopts.hpp>

#include "mgbench/cli/commands.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/non_finite.hpp"
#include "mgbench/run/worker.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

namespace {

void write_all(int fd, const std::string& line) {
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the orchestrator went away; nothing more to do
    }
    done += static_cast<std::size_t>(n);
  }
}

class PipeSink : public PointSink {
 public:
  explicit PipeSink(int fd) : fd_(fd) {}
  void point_started(std::size_t index) override {
    write_all(fd_, make_worker_line(Json{{"type", "started"}, {"index", index}}));
  }
  void point_finished(const PointResult& result) override {
    PointResult checked = result;
    reject_non_finite(checked);  // at the source: JSON cannot carry NaN or infinity
    write_all(fd_, make_worker_line(Json{{"type", "point"}, {"result", checked}}));
  }

 private:
  int fd_;
};

}  // namespace

int cmd_worker(int argc, char** argv) {
  cxxopts::Options options("mgbench worker", "internal: runs one group for the orchestrator");
  options.add_options()("result-fd", "file descriptor for results",
                        cxxopts::value<int>()->default_value("3"));
  options.add_options()("h,help", "this help");
  const auto args = parse_command_line(options, argc, argv);
  const int fd = args["result-fd"].as<int>();
  if (parse_only()) return 0;

  const std::string input((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
  Json request;
  try {
    request = Json::parse(input);
  } catch (const std::exception& e) {
    throw UsageError(std::string("worker: malformed request: ") + e.what());
  }
  write_all(fd, make_worker_line(Json{{"type", "hello"}, {"pid", ::getpid()}}));
  try {
    if (request.value("mode", "") == "probe") {
      Json probe = execute_probe(request.value("doctor", false));
      probe["type"] = "probe";
      write_all(fd, make_worker_line(probe));
    } else {
      const GroupSpec spec = request.at("group").get<GroupSpec>();
      PipeSink sink(fd);
      execute_group(spec, sink);
    }
  } catch (const Error& e) {
    // The orchestrator reports it (one line): the worker itself prints nothing.
    write_all(fd, make_worker_line(Json{{"type", "fatal"}, {"message", e.what()}}));
    return static_cast<int>(e.code() == ExitCode::ok ? ExitCode::environment : e.code());
  } catch (const std::exception& e) {
    write_all(fd, make_worker_line(Json{{"type", "fatal"}, {"message", e.what()}}));
    return static_cast<int>(ExitCode::environment);
  }
  write_all(fd, make_worker_line(Json{{"type", "done"}}));
  return 0;
}

}  // namespace mgbench
