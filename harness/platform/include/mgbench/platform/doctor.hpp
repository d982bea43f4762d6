#pragma once
// `mgbench doctor`: the pre-flight checklist as code. Facts are collected once (CUDA inventory,
// NVML, /proc and /sys, optionally a short GEMM load), then pure rules turn them into checks
// with a status, a one-line finding and a next step. The rules are unit-tested on synthetic
// facts without a GPU.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "mgbench/platform/devices.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench {

enum class CheckStatus { pass, warn, fail, skip };
const char* to_string(CheckStatus status);

struct DoctorCheck {
  std::string name;  // stable snake_case id, e.g. "power_limit"
  CheckStatus status = CheckStatus::pass;
  std::string finding;    // one line
  std::string next_step;  // one line; empty when there is nothing to do
};

struct GpuProcessFact {
  unsigned pid = 0;
  std::string name;
  std::uint64_t used_memory = 0;
};

struct GpuFacts {
  int index = 0;  // CUDA ordinal
  std::string name, pci_bus_id;
  std::uint64_t memory_bytes = 0;
  bool nvml = false;  // the NVML facts below could be read for this GPU
  std::string vbios;
  std::optional<bool> persistence_mode;
  std::optional<double> power_limit_w;          // enforced
  std::optional<double> default_power_limit_w;
  std::optional<unsigned> pcie_gen_idle, pcie_width_idle;  // current link when collected
  std::optional<unsigned> pcie_gen_load, pcie_width_load;  // best current link under load
  std::optional<unsigned> pcie_gen_max, pcie_gen_gpu_max, pcie_width_max;
  std::optional<std::uint64_t> reasons_idle;  // clock-event reason bits when collected
  std::optional<std::uint64_t> reasons_load;  // union of the bits seen under load
  std::optional<double> max_temp_load_c;
  std::optional<bool> ecc_enabled;
  std::optional<std::uint64_t> ecc_uncorrected_volatile, ecc_uncorrected_aggregate;
  std::optional<NvmlRemappedRows> remapped_rows;
  NvmlRetiredPages retired_pages;
  std::optional<bool> mig_enabled;
  std::optional<std::vector<GpuProcessFact>> other_processes;  // nullopt: unknown
  int nvlink_total = 0, nvlink_up = 0;
  int numa_node = -1;
  std::string cpu_affinity;  // cpulist
};

struct GpuPairFacts {
  int a = 0, b = 0;  // CUDA ordinals, a < b
  bool peer_access = false;  // both directions
  std::string topology;      // "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "?"
};

struct DoctorFacts {
  bool nvml_available = false;
  std::string nvml_error;
  int nvml_device_count = -1;  // all GPUs of the machine (NVML ignores CUDA_VISIBLE_DEVICES)
  std::string driver_version;
  int cuda_driver = 0, cuda_runtime = 0, nccl_built = 0, nccl_loaded = 0;
  std::vector<GpuFacts> gpus;
  std::vector<GpuPairFacts> pairs;
  bool load_ran = false;
  std::string load_error;  // why the load could not run
  double load_seconds = 0;
  std::optional<std::string> cuda_visible_devices, cuda_device_order;
  std::uint64_t host_memory_bytes = 0;
  int host_numa_nodes = 0;
  std::string virtualization;  // "" on bare metal
  bool container = false;
};

// A busy load on `devices` for `seconds`, calling `tick(elapsed_s)` about every `tick_s` while
// it runs. The composition root passes the GEMM workload's load in; the platform layer has no
// GEMM of its own.
using LoadTick = std::function<void(double elapsed_s)>;
using DeviceLoadFn = std::function<void(const std::vector<int>& devices, double seconds,
                                        const LoadTick& tick, double tick_s)>;

// Reads everything the rules need. With a `load`, runs it for `load_seconds` on all GPUs to read
// the PCIe link under load (links downshift at idle) and the clock-event reasons under load.
// Never throws for missing NVML; a failed load is recorded in load_error.
DoctorFacts collect_doctor_facts(const DeviceInventory& inventory, const DeviceLoadFn& load = {},
                                 double load_seconds = 5.0);

// Pure: one check per rule, in a fixed order (nvml, gpu_models, driver_cuda, nccl_version,
// pcie_link, peer_access, nvlink, p2p_path, persistence_mode, power_limit, clock_events_idle,
// clock_events_load, ecc_errors, row_remapping, mig, other_processes, visible_devices,
// numa_affinity, host_memory, virtualization).
std::vector<DoctorCheck> evaluate_doctor(const DoctorFacts& facts);

// {"checks": [{"name","status","finding","next_step"}], "summary": {"pass","warn","fail","skip"},
//  "ok": no check failed}.
Json doctor_to_json(const std::vector<DoctorCheck>& checks);
bool doctor_failed(const std::vector<DoctorCheck>& checks);

}  // namespace mgbench
