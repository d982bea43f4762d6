// What a worker process runs: one group, or a device probe.
#include "mgbench/run/worker.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <iterator>
#include <memory>
#include <sstream>

#include <cxxopts.hpp>
#include <spdlog/spdlog.h>

#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/worker_protocol.hpp"

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
// Test hook (see benchmarks/selftest.cpp): N fake devices, no CUDA involved.
std::optional<DeviceInventory> fake_inventory() {
  const auto fake = test_hooks::read(test_hooks::kFakeDevices);
  if (!fake) return std::nullopt;
  DeviceInventory inv;
  const int n = std::atoi(fake->c_str());
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
      result["doctor"] = doctor_to_json(evaluate_doctor(collect_doctor_facts(inventory)));
    } catch (const std::exception& e) {
      spdlog::warn("doctor checks failed to run: {}", e.what());
    }
  }
  return result;
}

}  // namespace mgbench
