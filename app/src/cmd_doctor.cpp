// `mgbench doctor [--json] [--no-load]`: the pre-flight checklist and this host's network
// adapters. Exit 0 when no check fails, 4 when one does (and 4, with one line on stderr, when
// there is no GPU or driver). With --hosts, --hostfile or --launcher: every host's fingerprint
// through mpirun or srun, compared (doctor_hosts.cpp).
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <iostream>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/json_text.hpp"
#include "gemm/gemm_load.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/core/logging.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/doctor_render.hpp"
#include "mgbench/reports/nics_render.hpp"
#include "mgbench/run/launcher.hpp"
#include "doctor_hosts.hpp"

namespace mgbench {

namespace {

// The multi-host request of the command line, if any; bad values are usage errors. Host lists
// and hostfiles are read as the sweep reads them (slot counts are not needed here).
std::optional<LaunchOptions> hosts_request(const cxxopts::ParseResult& args) {
  const bool has_hosts = args.count("hosts") > 0, has_file = args.count("hostfile") > 0;
  if (!has_hosts && !has_file && args.count("launcher") == 0) return std::nullopt;
  if (has_hosts && has_file) throw UsageError("give --hosts or --hostfile, not both");
  LaunchOptions request;
  request.launcher = args.count("launcher") > 0
                         ? launcher_from_string(args["launcher"].as<std::string>())
                         : default_launcher();
  if (!group_launcher(request.launcher).processes_per_gpu()) {
    if (args.count("launcher") > 0) throw UsageError("--launcher for doctor: mpirun or srun");
    request.launcher = Launcher::mpirun;  // outside Slurm
  }
  if (has_hosts) request.hosts = parse_host_list(args["hosts"].as<std::string>());
  if (has_file) request.hosts = parse_hostfile(args["hostfile"].as<std::string>());
  read_launcher_words(args, request);
  group_launcher(request.launcher).check_options(request);
  const double timeout = args["host-timeout"].as<double>();
  if (!(timeout > 0 && timeout <= 3600)) throw UsageError("--host-timeout must be in (0, 3600]");
  return request;
}

}  // namespace

int cmd_doctor(int argc, char** argv) {
  cxxopts::Options options("mgbench doctor",
                           "Pre-flight checks: GPUs, driver/CUDA/NCCL versions, PCIe and NVLink, "
                           "P2P paths, power limits, clock-event reasons, ECC, MIG, NUMA, VM.");
  options.add_options()
      ("json", "print the checks as JSON")
      ("no-load", "skip the 5 s GEMM load (PCIe link and clock events under load)")
      ("load-seconds", "length of the load", cxxopts::value<double>()->default_value("5"))
      ("hosts", "compare these hosts (h1,h2 or h1:8,h2:8)", cxxopts::value<std::string>())
      ("hostfile", "compare the hosts of this file (one per line)", cxxopts::value<std::string>())
      ("launcher", "how to reach the hosts: mpirun or srun (default: srun inside a Slurm "
                   "allocation, else mpirun)", cxxopts::value<std::string>())
      ("host-timeout", "seconds the launcher may take", cxxopts::value<double>()->default_value("300"))
      ("launcher-arg", "give mpirun or srun this word as it is (repeatable; e.g. "
                       "--launcher-arg=--allow-run-as-root)", cxxopts::value<std::string>())
      ("forward-env", "mpirun: pass these variables to every host too (NAME or PREFIX*)",
       cxxopts::value<std::string>())
      ("fingerprint", "print this host's fingerprint line (what --hosts launches)")
      ("h,help", "this help");
  const cxxopts::ParseResult args = parse_command_line(options, argc, argv);
  const bool json = args.count("json") > 0;
  const bool with_load = args.count("no-load") == 0;
  const double load_seconds = args["load-seconds"].as<double>();
  if (!(load_seconds > 0 && load_seconds <= 600)) {
    throw UsageError("--load-seconds must be in (0, 600]");
  }
  const auto across = hosts_request(args);
  if (parse_only()) return 0;
  if (args.count("fingerprint") > 0) return print_host_fingerprint();
  if (across) {
    return doctor_across_hosts(*across, args["host-timeout"].as<double>(), json);
  }

  const DeviceInventory inventory = probe_devices();  // no GPU / driver: EnvironmentError
  if (with_load) {
    logging::info("doctor: {:.0f} s GEMM load on {} GPU(s) to read PCIe links and clock events",
                  load_seconds, inventory.devices.size());
  }
  const DeviceLoadFn load = with_load ? DeviceLoadFn(bench::run_gemm_load) : DeviceLoadFn();
  const DoctorFacts facts = collect_doctor_facts(inventory, load, load_seconds);
  const auto checks = evaluate_doctor(facts);
  Json result = doctor_to_json(checks);
  result["nics"] = local_nics(inventory);
  if (json) {
    std::cout << dump_json(result, 2) << "\n";
  } else {
    const bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    reports::render_doctor_text(result, std::cout, colour);
    std::cout << "\n";
    reports::render_nics_text(result["nics"], std::cout, colour);
  }
  std::cout.flush();
  return doctor_failed(checks) ? static_cast<int>(ExitCode::environment)
                               : static_cast<int>(ExitCode::ok);
}

}  // namespace mgbench
