// `mgbench doctor [--json] [--no-load]`: the pre-flight checklist. Exit 0 when no check fails,
// 4 when one does (and 4, with one line on stderr, when there is no GPU or driver).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <cxxopts.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mgbench/core/json_text.hpp"
#include "mgbench/bench/gemm_load.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/reports/doctor_render.hpp"

namespace mgbench {

int cmd_doctor(int argc, char** argv) {
  cxxopts::Options options("mgbench doctor",
                           "Pre-flight checks: GPUs, driver/CUDA/NCCL versions, PCIe and NVLink, "
                           "P2P paths, power limits, clock-event reasons, ECC, MIG, NUMA, VM.");
  options.add_options()
      ("json", "print the checks as JSON")
      ("no-load", "skip the 5 s GEMM load (PCIe link and clock events under load)")
      ("load-seconds", "length of the load", cxxopts::value<double>()->default_value("5"))
      ("h,help", "this help");
  const cxxopts::ParseResult args = parse_command_line(options, argc, argv);
  const bool json = args.count("json") > 0;
  const bool with_load = args.count("no-load") == 0;
  const double load_seconds = args["load-seconds"].as<double>();
  if (!(load_seconds > 0 && load_seconds <= 600)) {
    throw UsageError("--load-seconds must be in (0, 600]");
  }
  if (parse_only()) return 0;

  const DeviceInventory inventory = probe_devices();  // no GPU / driver: EnvironmentError
  if (with_load) {
    spdlog::info("doctor: {:.0f} s GEMM load on {} GPU(s) to read PCIe links and clock events",
                 load_seconds, inventory.devices.size());
  }
  const DeviceLoadFn load = with_load ? DeviceLoadFn(bench::run_gemm_load) : DeviceLoadFn();
  const DoctorFacts facts = collect_doctor_facts(inventory, load, load_seconds);
  const auto checks = evaluate_doctor(facts);
  const Json result = doctor_to_json(checks);
  if (json) {
    std::cout << dump_json(result, 2) << "\n";
  } else {
    const bool colour = ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
    reports::render_doctor_text(result, std::cout, colour);
  }
  std::cout.flush();
  return doctor_failed(checks) ? static_cast<int>(ExitCode::environment)
                               : static_cast<int>(ExitCode::ok);
}

}  // namespace mgbench
