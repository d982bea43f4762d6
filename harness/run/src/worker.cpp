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
#include "mgbench/platform/nvml.hpp"
#include "mgbench/platform/telemetry.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/model/workload.hpp"
#include "mgbench/run/rank_placement.hpp"
#include "mgbench/run/worker_protocol.hpp"

namespace mgbench {

void execute_group(const GroupSpec& spec, PointSink& sink, ProcessGroup* processes,
                   const std::vector<std::string>& node_bus_ids) {
  const Workload* workload = find_workload(spec.workload);
  if (!workload || !workload->run()) {
    throw UsageError("worker: unknown workload '" + spec.workload + "'");
  }
  std::unique_ptr<PointObserver> observer;
  // With a process per GPU, each node's leader samples the GPUs of its node (the executor
  // gathers the nodes' telemetry to rank 0 at the end of each point), found by bus id: with
  // per-task GPU binding the leader's CUDA does not see its node's other GPUs.
  if (spec.settings.telemetry && (processes == nullptr || processes->local_rank() == 0)) {
    observer = make_node_observer(spec.settings, spec.devices,
                                  node_bus_ids.empty()
                                      ? BusIdResolver()
                                      : bus_ids_by_place(spec.devices, node_bus_ids));
  }
  GroupContext ctx{spec, sink, observer.get(), processes};
  workload->run()(ctx);
}

namespace {
std::optional<int> fake_device_count() {
  const auto fake =
      test_hooks::read_number(test_hooks::kFakeDevices, 0, test_hooks::kMaxFakeDevices);
  return fake ? std::optional<int>(static_cast<int>(*fake)) : std::nullopt;
}

// Test hook (see benchmarks/workloads/selftest.cpp): N fake devices, no CUDA involved; under the
// per-task hook, only the one of this process's local rank (a process no launcher started sees
// all).
std::optional<DeviceInventory> fake_inventory() {
  const auto count = fake_device_count();
  if (!count) return std::nullopt;
  std::vector<int> seen;
  const auto local = launcher_local_rank();
  if (test_hooks::read(test_hooks::kFakeGpuPerTask) == std::string("1") && local) {
    if (*local < *count) seen.push_back(*local);
  } else {
    for (int i = 0; i < *count; ++i) seen.push_back(i);
  }
  DeviceInventory inv;
  for (int fake : seen) {
    DeviceInfo d;
    d.index = static_cast<int>(inv.devices.size());
    d.name = "Fake GPU";
    d.pci_bus_id = "0000:00:0" + std::to_string(fake) + ".0";
    inv.devices.push_back(d);
  }
  const std::size_t n = inv.devices.size();
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

BusIdResolver bus_ids_by_place(const std::vector<int>& devices,
                               const std::vector<std::string>& bus_ids) {
  return [devices, bus_ids](int device) -> std::string {
    for (std::size_t r = 0; r < devices.size() && r < bus_ids.size(); ++r) {
      if (devices[r] == device) return bus_ids[r];
    }
    return "";
  };
}

std::vector<std::string> visible_gpus() {
  if (!fake_device_count()) return visible_gpu_bus_ids();
  std::vector<std::string> ids;
  try {
    const auto fake = fake_inventory();
    for (const auto& d : fake->devices) ids.push_back(d.pci_bus_id);
  } catch (const EnvironmentError&) {
    // none visible
  }
  return ids;
}

int node_gpu_count() {
  if (const auto fake = fake_device_count()) return *fake;
  const auto nvml = nvml_instance();
  return nvml ? static_cast<int>(nvml->device_count()) : 0;
}

Json node_environment(const Json& environment) {
  Json out = Json::object();
  for (const char* key : {"versions", "gpu_count", "fake_devices"}) {
    if (environment.contains(key)) out[key] = environment[key];
  }
  Json gpus = Json::array();
  for (const auto& g : environment.value("gpus", Json::array())) {
    if (!g.is_object()) continue;
    Json kept = Json::object();
    for (const char* key : {"name", "uuid", "pci_bus_id", "power_limit_w", "clocks_mhz"}) {
      if (g.contains(key)) kept[key] = g[key];
    }
    gpus.push_back(std::move(kept));
  }
  out["gpus"] = std::move(gpus);
  return out;
}

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
