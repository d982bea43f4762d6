#include "doctor_hosts.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "mgbench/core/error.hpp"
#include "mgbench/core/json_text.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/platform/command_capture.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/platform/host_compare.hpp"
#include "mgbench/platform/nics.hpp"
#include "mgbench/platform/subprocess.hpp"
#include "mgbench/reports/nics_render.hpp"
#include "mgbench/run/worker.hpp"

namespace mgbench {

Json local_nics(const DeviceInventory& inventory) {
  std::vector<std::pair<int, std::string>> gpus;
  for (const auto& d : inventory.devices) gpus.emplace_back(d.index, d.pci_bus_id);
  const NicInventory nics = read_nics();
  return nics_to_json(nics, gpu_nic_affinity(gpus, nics));
}

int print_host_fingerprint() {
  Json answer{{"host", collect_host_facts().hostname}, {"error", ""}};
  try {
    const Json probe = execute_probe(false);  // honours the fake-device test hook
    const auto inventory = probe.at("inventory").get<DeviceInventory>();
    answer["environment"] = probe.value("environment", Json::object());
    answer["nics"] = local_nics(inventory);
  } catch (const std::exception& e) {
    answer["error"] = e.what();
    answer["nics"] = local_nics(DeviceInventory{});
  }
  std::cout << kFingerprintMarker << dump_json(answer, -1) << "\n";
  std::cout.flush();
  return static_cast<int>(ExitCode::ok);
}

namespace {

std::vector<HostFingerprint> gather(const LaunchOptions& launch, double timeout_s) {
  const char* name = to_string(launch.launcher);
  if (find_program(name).empty()) {  // doctor needs no MPI: only the launcher
    throw EnvironmentError(fmt::format("{} not found on PATH: install {}", name,
                                       group_launcher(launch.launcher).install_hint()));
  }
  const Placement placement = probe_placement(launch);
  const PreparedLaunch prepared(launch, placement);
  std::vector<std::string> argv = prepared.prefix();
  argv.insert(argv.end(), {self_executable(), "doctor", "--fingerprint"});
  logging::info("doctor: {}", fmt::join(argv, " "));
  const CapturedOutput run = run_and_capture(argv, timeout_s, std::size_t{64} << 20);
  if (run.timed_out) {
    throw EnvironmentError(fmt::format("{} did not finish within {:.0f} s", name, timeout_s));
  }
  auto answers = parse_fingerprint_lines(run.out, static_cast<std::size_t>(placement.nodes));
  if (run.out.find(kFingerprintMarker) == std::string::npos) {
    // No host answered: one line on why, from what the launcher printed.
    throw EnvironmentError(launch_failure_line(launch.launcher, run.exit.describe(), run.err));
  }
  std::fwrite(run.err.data(), 1, run.err.size(), stderr);  // the hosts' own warnings
  return answers;
}

}  // namespace

int doctor_across_hosts(const LaunchOptions& launch, double timeout_s, bool json) {
  const auto answers = gather(launch, timeout_s);
  const auto checks = compare_host_fingerprints(answers);
  Json list = Json::array();
  for (const auto& a : answers) {
    list.push_back(Json{{"host", a.host}, {"error", a.error}, {"environment", a.environment}});
  }
  const Json result{{"hosts", std::move(list)}, {"checks", doctor_to_json(checks)}};
  if (json) {
    std::cout << dump_json(result, 2) << "\n";
  } else {
    const bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    reports::render_hosts_text(result, std::cout, colour);
  }
  std::cout.flush();
  return doctor_failed(checks) ? static_cast<int>(ExitCode::environment)
                               : static_cast<int>(ExitCode::ok);
}

}  // namespace mgbench
