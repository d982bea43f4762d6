#pragma once
// CUDA device inventory and library versions, read in-process through the CUDA runtime.
// The sweep orchestrator never calls this itself (it must not create a CUDA context): it asks
// a `mgbench worker --probe` child process, which prints this as JSON.
#include <cstdint>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;  // "0000:19:00.0" as cudaDeviceGetPCIBusId gives it
  std::uint64_t total_memory = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_clock_khz = 0, mem_clock_khz = 0, mem_bus_width = 0;
};

struct Versions {
  int driver = 0;        // cudaDriverGetVersion, e.g. 13000
  int runtime = 0;       // cudaRuntimeGetVersion
  int cublas = 0;        // cublasLtGetVersion
  int nccl_built = 0;    // NCCL_VERSION_CODE
  int nccl_loaded = 0;   // ncclGetVersion
};

struct DeviceInventory {
  std::vector<DeviceInfo> devices;
  std::vector<std::vector<int>> peer_access;  // [i][j] = cudaDeviceCanAccessPeer
  Versions versions;
};

// Throws EnvironmentError ("no CUDA driver", "no CUDA device") with one clear line.
DeviceInventory probe_devices();
// Versions only; never throws (fields stay 0 when unknown).
Versions probe_versions();
// The PCI bus ids of the GPUs this process sees, in CUDA ordinal order; empty without a driver
// or a device. Creates no context.
std::vector<std::string> visible_gpu_bus_ids();
// Makes `device` current for the calling thread (CUDA creates its context now); false when CUDA
// refuses.
bool select_device(int device);
std::string format_cuda_version(int code);   // 13000 -> "13.0"
std::string format_nccl_version(int code);   // 22803 -> "2.28.3"

void to_json(Json& j, const DeviceInfo& d);
void from_json(const Json& j, DeviceInfo& d);
void to_json(Json& j, const Versions& v);
void from_json(const Json& j, Versions& v);
void to_json(Json& j, const DeviceInventory& inv);
void from_json(const Json& j, DeviceInventory& inv);

}  // namespace mgbench
