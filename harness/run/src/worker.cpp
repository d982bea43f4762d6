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

#include "mgbench/core/logging.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

void execute_group(const GroupSpec& spec, PointSink& sink, ProcessGroup* processes) {
  const Workload* workload = find_workload(spec.workload);
  if (!workload || !workload->run()) {
    throw UsageError("worker: unknown workload '" + spec.workload + "'");
  }
  std::unique_ptr<PointObserver> observer;
  // With a process per GPU, each node's leader samples the GPUs of its node (the executor
  // gathers the nodes' telemetry to rank 0 at the end of each point).
  if (spec.settings.telemetry && (processes == nullptr || processes->local_rank() == 0)) {
    observer = make_point_observer(spec.settings, spec.devices);
  }
  GroupContext ctx{spec, sink, observer.get(), processes};
  workload->run()(ctx);
}

namespace {
// Test hook (see benchmarks/selftest.cpp): N fake devices, no CUDA involved.
std::optional<DeviceInventory> fake_inventory() {
  const auto fake =
      test_hooks::read_number(test_hooks::kFakeDevices, 0, test_hooks::kMaxFakeDevices);
  if (!fake) return std::nullopt;
  DeviceInventory inv;
  const int n = static_cast<int>(*fake);
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
Json fake_environment(const DeviceInventory& inventory) {
  Json gpus = Json::array();
  for (const auto& d : inventory.devices) gpus.push_back(Json{{"name", d.name}});
  Json env{{"fake_devices", true},
           {"gpu_count", inventory.devices.size()},
           {"gpus", gpus},
           {"host", host_facts_to_json(collect_host_facts())},
           {"nccl_nvls", nccl_nvls_setting()}};
  env["fingerprint_hash"] = fingerprint_hash(env);
  return env;
}
}  // namespace

Json execute_probe(bool doctor) {
  const auto fake = fake_inventory();
  const DeviceInventory inventory = fake ? *fake : probe_devices();
  Json result{{"inventory", inventory}};
  if (fake) {
    // No GPU to describe, but an environment all the same: compare sees the fake devices (and
    // the test hooks the sweep adds) instead of an empty environment that matches anything.
    result["environment"] = fake_environment(inventory);
    return result;
  }
  try {
    result["environment"] = collect_environment(inventory);
  } catch (const std::exception& e) {
    logging::warn("environment fingerprint incomplete: {}", e.what());
  }
  if (doctor) {
    try {
      result["doctor"] = doctor_to_json(evaluate_doctor(collect_doctor_facts(inventory)));
    } catch (const std::exception& e) {
      logging::warn("doctor checks failed to run: {}", e.what());
    }
  }
  return result;
}

}  // namespace mgbench
