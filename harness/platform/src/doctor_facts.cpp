// `mgbench doctor`: fact collection (CUDA inventory, NVML, /proc, /sys, and the PCIe link and
// clock-event reasons under a short load passed in by the caller). The rules are in
// doctor_rules.cpp.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "mgbench/platform/doctor.hpp"
#include "mgbench/platform/fingerprint.hpp"

namespace mgbench {

namespace {

// The NVML facts of one GPU; processes of this one (`self`) are left out.
void read_nvml_facts(const Nvml& nvml, NvmlDevice h, unsigned self, GpuFacts& g) {
  g.nvml = true;
  g.vbios = nvml.vbios_version(h);
  g.persistence_mode = nvml.persistence_mode(h);
  const auto limits = nvml.power_limits(h);
  g.power_limit_w = limits.enforced_w ? limits.enforced_w : limits.management_w;
  g.default_power_limit_w = limits.default_w;
  const auto link = nvml.pcie_link(h);
  g.pcie_gen_idle = link.gen_current;
  g.pcie_width_idle = link.width_current;
  g.pcie_gen_max = link.gen_max;
  g.pcie_gen_gpu_max = link.gen_gpu_max;
  g.pcie_width_max = link.width_max;
  g.reasons_idle = nvml.clock_event_reasons(h);
  if (const auto ecc = nvml.ecc_mode(h)) g.ecc_enabled = ecc->first;
  g.ecc_uncorrected_volatile = nvml.ecc_uncorrected(h, false);
  g.ecc_uncorrected_aggregate = nvml.ecc_uncorrected(h, true);
  g.remapped_rows = nvml.remapped_rows(h);
  g.retired_pages = nvml.retired_pages(h);
  if (const auto mig = nvml.mig_mode(h)) g.mig_enabled = mig->first;
  if (const auto processes = nvml.compute_processes(h)) {
    std::vector<GpuProcessFact> others;
    for (const auto& p : *processes) {
      if (p.pid != self) others.push_back(GpuProcessFact{p.pid, p.name, p.used_memory});
    }
    g.other_processes = std::move(others);
  }
  const auto links = nvml.nvlinks(h);
  g.nvlink_total = links.links_total;
  g.nvlink_up = links.links_up;
}

// Per GPU: the CUDA facts, then the NVML facts matched by PCI bus id. Returns the NVML handles
// (empty where NVML has none), one per GPU.
std::vector<NvmlDevice> collect_gpu_facts(const DeviceInventory& inventory, const Nvml* nvml,
                                          DoctorFacts& f) {
  const unsigned self = static_cast<unsigned>(::getpid());
  std::vector<NvmlDevice> handles;
  for (const auto& d : inventory.devices) {
    GpuFacts g;
    g.index = d.index;
    g.name = d.name;
    g.pci_bus_id = normalize_pci_bus_id(d.pci_bus_id);
    g.memory_bytes = d.total_memory;
    g.numa_node = gpu_numa_node(g.pci_bus_id);
    g.cpu_affinity = gpu_local_cpulist(g.pci_bus_id);
    const NvmlDevice h = nvml ? nvml->device_by_pci_bus_id(g.pci_bus_id) : NvmlDevice{};
    handles.push_back(h);
    if (h) read_nvml_facts(*nvml, h, self, g);
    f.gpus.push_back(std::move(g));
  }
  return handles;
}

std::vector<GpuPairFacts> collect_pair_facts(const DeviceInventory& inventory) {
  std::vector<GpuPairFacts> pairs;
  const auto labels = gpu_topology_labels(inventory);
  for (std::size_t i = 0; i < inventory.devices.size(); ++i) {
    for (std::size_t j = i + 1; j < inventory.devices.size(); ++j) {
      GpuPairFacts p;
      p.a = inventory.devices[i].index;
      p.b = inventory.devices[j].index;
      const auto& peer = inventory.peer_access;
      p.peer_access = i < peer.size() && j < peer.size() && j < peer[i].size() &&
                      i < peer[j].size() && peer[i][j] && peer[j][i];
      p.topology = labels[i][j];
      pairs.push_back(p);
    }
  }
  return pairs;
}

// What the GPU shows under load: the union of the clock-event reasons, the hottest
// temperature and the best current PCIe link seen so far.
void observe_under_load(const Nvml& nvml, NvmlDevice h, GpuFacts& g) {
  if (const auto r = nvml.clock_event_reasons(h)) {
    g.reasons_load = g.reasons_load.value_or(0) | *r;
  }
  if (const auto t = nvml.temperature_c(h)) {
    g.max_temp_load_c = std::max(g.max_temp_load_c.value_or(0), static_cast<double>(*t));
  }
  const auto link = nvml.pcie_link(h);
  if (link.gen_current) {
    g.pcie_gen_load = std::max(g.pcie_gen_load.value_or(0), *link.gen_current);
  }
  if (link.width_current) {
    g.pcie_width_load = std::max(g.pcie_width_load.value_or(0), *link.width_current);
  }
}

void run_load(const DeviceInventory& inventory, const Nvml* nvml,
              const std::vector<NvmlDevice>& handles, const DeviceLoadFn& load,
              double load_seconds, DoctorFacts& f) {
  std::vector<int> devices;
  for (const auto& d : inventory.devices) devices.push_back(d.index);
  auto observe = [&](double) {
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
      if (handles[i]) observe_under_load(*nvml, handles[i], f.gpus[i]);
    }
  };
  const auto start = std::chrono::steady_clock::now();
  try {
    load(devices, load_seconds, observe, 0.25);
    f.load_ran = true;
  } catch (const std::exception& e) {
    f.load_error = e.what();
  }
  f.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void collect_host_and_env(DoctorFacts& f) {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) f.cuda_visible_devices = v;
  if (const char* v = std::getenv("CUDA_DEVICE_ORDER")) f.cuda_device_order = v;
  const HostFacts host = collect_host_facts();
  f.host_memory_bytes = host.memory_bytes;
  f.host_numa_nodes = static_cast<int>(host.numa_nodes.size());
  f.virtualization = host.virtualization;
  f.container = host.container;
}

}  // namespace

DoctorFacts collect_doctor_facts(const DeviceInventory& inventory, const DeviceLoadFn& load,
                                 double load_seconds) {
  DoctorFacts f;
  const auto nvml = nvml_instance();
  f.nvml_available = nvml != nullptr;
  f.nvml_error = nvml ? "" : nvml_load_error();
  f.cuda_driver = inventory.versions.driver;
  f.cuda_runtime = inventory.versions.runtime;
  f.nccl_built = inventory.versions.nccl_built;
  f.nccl_loaded = inventory.versions.nccl_loaded;
  if (nvml) {
    f.driver_version = nvml->driver_version();
    f.nvml_device_count = static_cast<int>(nvml->device_count());
  }
  const std::vector<NvmlDevice> handles = collect_gpu_facts(inventory, nvml.get(), f);
  f.pairs = collect_pair_facts(inventory);
  if (load && !inventory.devices.empty()) {
    run_load(inventory, nvml.get(), handles, load, load_seconds, f);
  }
  collect_host_and_env(f);
  return f;
}

}  // namespace mgbench
