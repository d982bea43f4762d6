// NVML telemetry on a real GPU: plausible sampler values, the energy counter under load, the
// CUDA <-> NVML mapping by PCI bus id, and the doctor's load. (The binary exits 77, shown as
// skipped, without a GPU.)
#include <cuda_runtime_api.h>

#include "catch_compat.hpp"
#include "gemm/gemm_load.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/doctor.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/platform/telemetry.hpp"

using namespace mgbench;

TEST_CASE("gpu telemetry: NVML loads where there is a GPU") {
  INFO(nvml_load_error());
  REQUIRE(nvml_instance() != nullptr);
  REQUIRE(nvml_instance()->device_count() > 0);
  REQUIRE_FALSE(nvml_instance()->driver_version().empty());
}

TEST_CASE("gpu telemetry: every CUDA device maps to the NVML device with its bus id and UUID") {
  const auto nvml = nvml_instance();
  REQUIRE(nvml);
  const DeviceInventory inventory = probe_devices();
  for (const auto& d : inventory.devices) {
    INFO("CUDA device " << d.index << " at " << d.pci_bus_id);
    const NvmlDevice h = nvml->device_by_pci_bus_id(d.pci_bus_id);
    REQUIRE(h);
    REQUIRE(nvml->pci_bus_id(h) == normalize_pci_bus_id(d.pci_bus_id));
    REQUIRE(nvml->uuid(h) == d.uuid);
  }
}

TEST_CASE("gpu telemetry: the sampler records plausible values under load") {
  RunSettings settings;
  settings.telemetry = true;
  settings.telemetry_interval_s = 0.05;
  auto observer = make_point_observer(settings, {0});
  REQUIRE(observer != nullptr);
  observer->begin_point({0});
  mgbench::bench::run_gemm_load({0}, 2.0, nullptr);
  const Json summary = observer->end_point();
  INFO(summary.dump(2));
  REQUIRE(summary["gpus"].size() == 1);
  const Json& g = summary["gpus"][0];
  REQUIRE(g["device"] == 0);
  REQUIRE(g["samples"].get<int>() >= 10);
  REQUIRE(g["power_w"]["max"].get<double>() > 0);
  REQUIRE(g["temp_c"]["min"].get<double>() >= 10);
  REQUIRE(g["temp_c"]["max"].get<double>() <= 110);
  REQUIRE(g["sm_clock_mhz"]["median"].get<double>() > 0);
  REQUIRE(g["mem_clock_mhz"]["max"].get<double>() > 0);
  REQUIRE(g["util_pct"]["max"].get<double>() > 0);
  REQUIRE(g["energy_j"].get<double>() > 0);
  REQUIRE(g["avg_power_w"].get<double>() > 0);
  REQUIRE(g.contains("throttle_fraction"));
  REQUIRE(summary["series"]["t_s"].size() >= 10);
  REQUIRE(summary["series"]["per_gpu"][0]["power_w"].size() == summary["series"]["t_s"].size());
}

TEST_CASE("gpu telemetry: the energy counter increases under load") {
  const auto nvml = nvml_instance();
  REQUIRE(nvml);
  char bus[64] = {};
  REQUIRE(cudaDeviceGetPCIBusId(bus, sizeof(bus), 0) == cudaSuccess);
  const NvmlDevice h = nvml->device_by_pci_bus_id(bus);
  REQUIRE(h);
  const auto before = nvml->energy_j(h);
  REQUIRE(before.has_value());
  mgbench::bench::run_gemm_load({0}, 2.0, nullptr);
  const auto after = nvml->energy_j(h);
  REQUIRE(after.has_value());
  // Two seconds of GEMM on a data-centre GPU: well over 50 W on average.
  REQUIRE(*after - *before > 100.0);
}

TEST_CASE("gpu telemetry: the doctor's load reads the PCIe link and clock events") {
  const DeviceInventory inventory = probe_devices();
  const DoctorFacts facts = collect_doctor_facts(inventory, mgbench::bench::run_gemm_load, 2.0);
  INFO(facts.load_error);
  REQUIRE(facts.load_ran);
  REQUIRE(facts.gpus[0].nvml);
  REQUIRE(facts.gpus[0].reasons_load.has_value());
  REQUIRE(facts.gpus[0].pcie_gen_load.value_or(0) >= 1);
  REQUIRE(facts.gpus[0].max_temp_load_c.value_or(0) > 10);
}
