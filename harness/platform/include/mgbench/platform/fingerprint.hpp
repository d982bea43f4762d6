#pragma once
// The environment fingerprint recorded once per run and printed by `mgbench info`: versions,
// per-GPU facts (CUDA + NVML, matched by PCI bus id), GPU-pair topology and peer access, host
// facts from /proc and /sys, selected environment variables, and a short hash of the fields that
// must match for two runs to be comparable (GPU model, count, driver, CUDA, NCCL).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/platform/devices.hpp"
#include "mgbench/core/params.hpp"

namespace mgbench {

// {"versions": {...}, "nvml": {"available", "error", "library"}, "gpu_count", "gpus": [...],
//  "topology": {"devices", "matrix", "legend"}, "peer_access": [[...]], "host": {...},
//  "env": {...}, "fingerprint_hash": "..."}. Never throws for missing NVML or /sys files.
Json collect_environment(const DeviceInventory& inventory);

// FNV-1a 64 (16 hex digits) of "gpu=<sorted unique GPU names>;count=<n>;driver=<driver>;
// cuda=<runtime>;nccl=<loaded>", read from an environment object as collect_environment writes
// it. Other fields (host name, clocks, env vars) do not change it.
std::string fingerprint_hash(const Json& environment);
std::uint64_t fnv1a64(const std::string& text);

// ---- host facts -----------------------------------------------------------------------------

struct NumaNode {
  int id = 0;
  std::string cpulist;  // "0-55,112-167"
  std::uint64_t memory_bytes = 0;
};

struct HostFacts {
  std::string hostname, os, kernel, arch, cpu_model;
  int logical_cpus = 0, physical_cores = 0, sockets = 0;
  std::uint64_t memory_bytes = 0;
  std::vector<NumaNode> numa_nodes;
  bool hypervisor = false;   // cpuinfo "hypervisor" flag
  std::string dmi_vendor, dmi_product;
  std::string virtualization;  // "" on bare metal, else e.g. "KVM", "Amazon EC2", "Microsoft"
  bool container = false;      // /.dockerenv or /run/.containerenv
};
HostFacts collect_host_facts();
Json host_facts_to_json(const HostFacts& host);

// Pure parsers (tested on fixed text).
struct CpuInfo {
  std::string model;
  int logical = 0, physical_cores = 0, sockets = 0;
  bool hypervisor = false;
};
CpuInfo parse_cpuinfo(const std::string& text);
std::string parse_os_release(const std::string& text);   // PRETTY_NAME, else NAME VERSION
std::uint64_t parse_meminfo_total(const std::string& text);  // "MemTotal: N kB" -> bytes
int count_cpulist(const std::string& cpulist);            // "0-3,8" -> 5; -1 if malformed
// "" when nothing says virtual; otherwise the best name from DMI vendor/product.
std::string virtualization_hint(bool hypervisor_flag, const std::string& dmi_vendor,
                                const std::string& dmi_product);

// The contents of a small /proc or /sys file without surrounding white space; "" when it cannot
// be read.
std::string read_trimmed_file(const std::string& path);

// Per GPU, from /sys/bus/pci/devices/<bus id>/: NUMA node (-1 unknown) and local CPU list.
int gpu_numa_node(const std::string& pci_bus_id);
std::string gpu_local_cpulist(const std::string& pci_bus_id);

// GPU-pair labels as `nvidia-smi topo -m` shows them ("X", "NV18", "PIX", "PXB", "PHB", "NODE",
// "SYS"; "?" when NVML cannot tell), indexed like inventory.devices.
std::vector<std::vector<std::string>> gpu_topology_labels(const DeviceInventory& inventory);

// CUDA_*, NCCL_*, OMPI_*, SLURM_* variables of this process (sorted by name).
std::map<std::string, std::string> selected_environment();

// Whether NCCL may use NVLink SHARP (NVLS), as NCCL_NVLS_ENABLE (`value`; null when unset) tells
// it: "auto (NCCL's default)" when unset or 2, "off (NCCL_NVLS_ENABLE=0)", "on
// (NCCL_NVLS_ENABLE=1)", else "NCCL_NVLS_ENABLE=<value>". Recorded in every environment as
// "nccl_nvls" (the value of this process, which its workers inherit).
std::string nccl_nvls_setting(const char* value);
std::string nccl_nvls_setting();  // of this process's environment

// cublasLtGetVersion() code (e.g. 130001) -> "13.0.1".
std::string format_cublas_version(int code);

}  // namespace mgbench
