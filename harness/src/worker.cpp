// The hidden `mgbench worker` subcommand: runs one group (or a device probe) and streams
// JSON lines to the orchestrator on fd 3 (see worker_protocol.hpp).
#include "mgbench/worker.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <iterator>
#include <memory>
#include <sstream>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "mgbench/command.hpp"
#include "mgbench/devices.hpp"
#include "mgbench/doctor.hpp"
#include "mgbench/fingerprint.hpp"
#include "mgbench/telemetry.hpp"
#include "mgbench/error.hpp"
#include "mgbench/workload.hpp"
#include "mgbench/worker_protocol.hpp"

namespace mgbench {

void execute_group(const GroupSpec& spec, PointSink& sink) {
  const Workload* workload = find_workload(spec.workload);
  if (!workload || !workload->run()) {
    throw UsageError("worker: unknown workload '" + spec.workload + "'");
  }
  std::unique_ptr<PointObserver> observer;
  if (spec.settings.telemetry) observer = make_point_observer(spec.settings, spec.devices);
  GroupContext ctx{spec, sink, observer.get()};
  workload->run()(ctx);
}

namespace {
// Test hook (see selftest_workload.cpp): N fake devices, no CUDA involved.
std::optional<DeviceInventory> fake_inventory() {
  const char* enabled = std::getenv("MGBENCH_ENABLE_TEST_WORKLOADS");
  const char* fake = std::getenv("MGBENCH_TEST_FAKE_DEVICES");
  if (!enabled || std::string(enabled) != "1" || !fake) return std::nullopt;
  DeviceInventory inv;
  const int n = std::atoi(fake);
  for (int i = 0; i < n; ++i) {
    DeviceInfo d;
    d.index = i;
    d.name = "Fake GPU";
    d.pci_bus_id = "0000:00:0" + std::to_string(i) + ".0";
    inv.devices.push_back(d);
  }
  inv.peer_access.assign(n, std::vector<int>(n, 1));
  if (n == 0) throw EnvironmentError("no CUDA device visible (fake)");
  return inv;
}
}  // namespace

Json execute_probe(bool doctor) {
  const auto fake = fake_inventory();
  const DeviceInventory inventory = fake ? *fake : probe_devices();
  Json result{{"inventory", inventory}};
  if (fake) return result;
  try {
    result["environment"] = collect_environment(inventory);
  } catch (const std::exception& e) {
    spdlog::warn("environment fingerprint incomplete: {}", e.what());
  }
  if (doctor) {
    try {
      result["doctor"] = doctor_to_json(evaluate_doctor(collect_doctor_facts(inventory, false)));
    } catch (const std::exception& e) {
      spdlog::warn("doctor checks failed to run: {}", e.what());
    }
  }
  return result;
}

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
    write_all(fd_, make_worker_line(Json{{"type", "point"}, {"result", result}}));
  }

 private:
  int fd_;
};

int worker_main(int argc, char** argv) {
  cxxopts::Options options("mgbench worker", "internal: runs one group for the orchestrator");
  options.add_options()("result-fd", "file descriptor for results",
                        cxxopts::value<int>()->default_value("3"));
  const auto args = options.parse(argc, argv);
  const int fd = args["result-fd"].as<int>();

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

}  // namespace

MGBENCH_REGISTER_COMMAND("worker", "internal: run one group for the orchestrator", worker_main,
                         true);

}  // namespace mgbench
