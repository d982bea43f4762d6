#include "mgbench/platform/devices.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>  // NCCL_VERSION_CODE only: this layer does not link NCCL

#include <fmt/format.h>

#include "mgbench/core/check.hpp"
#include "mgbench/core/error.hpp"

namespace mgbench {

std::string format_cuda_version(int code) {
  if (code <= 0) return "unknown";
  return fmt::format("{}.{}", code / 1000, (code % 1000) / 10);
}

std::string format_nccl_version(int code) {
  if (code <= 0) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

namespace {

// The versions of the libraries the running binary has loaded (the workloads link cuBLASLt and
// NCCL; the platform layer does not), looked up among the process's symbols: 0 when absent.
int loaded_cublaslt_version() {
  using Fn = std::size_t (*)();
  const auto fn = reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, "cublasLtGetVersion"));
  return fn ? static_cast<int>(fn()) : 0;
}

int loaded_nccl_version() {
  using Fn = int (*)(int*);
  const auto fn = reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  int version = 0;
  return fn && fn(&version) == 0 ? version : 0;
}

}  // namespace

Versions probe_versions() {
  Versions v;
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) v.runtime = 0;
  v.cublas = loaded_cublaslt_version();
  v.nccl_built = NCCL_VERSION_CODE;
  v.nccl_loaded = loaded_nccl_version();
  return v;
}

std::vector<std::string> visible_gpu_bus_ids() {
  std::vector<std::string> ids;
  int driver = 0, count = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0 ||
      cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return ids;
  }
  for (int i = 0; i < count; ++i) {
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), i) != cudaSuccess) {
      (void)cudaGetLastError();
      bus[0] = '\0';
    }
    ids.emplace_back(bus);
  }
  return ids;
}

bool select_device(int device) {
  if (cudaSetDevice(device) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

DeviceInventory probe_devices() {
  DeviceInventory inv;
  inv.versions = probe_versions();
  if (inv.versions.driver == 0) {
    throw EnvironmentError("no CUDA driver found (is the NVIDIA driver installed and loaded?)");
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0)) {
    throw EnvironmentError("no CUDA device visible (check CUDA_VISIBLE_DEVICES and nvidia-smi)");
  }
  if (err != cudaSuccess) {
    throw EnvironmentError(fmt::format("CUDA cannot list devices: {} ({})", cudaGetErrorName(err),
                                       cudaGetErrorString(err)));
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    MGBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, i));
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    char bus[32] = {};
    MGBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), i));
    d.pci_bus_id = bus;
    std::string uuid = "GPU-";
    for (int b = 0; b < 16; ++b) {
      uuid += fmt::format("{:02x}", static_cast<unsigned char>(prop.uuid.bytes[b]));
      if (b == 3 || b == 5 || b == 7 || b == 9) uuid += '-';
    }
    d.uuid = uuid;
    d.total_memory = prop.totalGlobalMem;
    d.sm_count = prop.multiProcessorCount;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    int value = 0;
    if (cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, i) == cudaSuccess) {
      d.sm_clock_khz = value;
    }
    if (cudaDeviceGetAttribute(&value, cudaDevAttrMemoryClockRate, i) == cudaSuccess) {
      d.mem_clock_khz = value;
    }
    if (cudaDeviceGetAttribute(&value, cudaDevAttrGlobalMemoryBusWidth, i) == cudaSuccess) {
      d.mem_bus_width = value;
    }
    inv.devices.push_back(d);
  }
  inv.peer_access.assign(count, std::vector<int>(count, 0));
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < count; ++j) {
      int can = (i == j) ? 1 : 0;
      if (i != j) MGBENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
      inv.peer_access[i][j] = can;
    }
  }
  return inv;
}

void to_json(Json& j, const DeviceInfo& d) {
  j = Json{{"index", d.index},
           {"name", d.name},
           {"uuid", d.uuid},
           {"pci_bus_id", d.pci_bus_id},
           {"total_memory", d.total_memory},
           {"sm_count", d.sm_count},
           {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
           {"cc_major", d.cc_major},
           {"cc_minor", d.cc_minor},
           {"sm_clock_khz", d.sm_clock_khz},
           {"mem_clock_khz", d.mem_clock_khz},
           {"mem_bus_width", d.mem_bus_width}};
}

void from_json(const Json& j, DeviceInfo& d) {
  d.index = j.at("index").get<int>();
  d.name = j.at("name").get<std::string>();
  d.uuid = j.value("uuid", "");
  d.pci_bus_id = j.value("pci_bus_id", "");
  d.total_memory = j.value("total_memory", std::uint64_t{0});
  d.sm_count = j.value("sm_count", 0);
  d.cc_major = j.value("cc_major", 0);
  d.cc_minor = j.value("cc_minor", 0);
  d.sm_clock_khz = j.value("sm_clock_khz", 0);
  d.mem_clock_khz = j.value("mem_clock_khz", 0);
  d.mem_bus_width = j.value("mem_bus_width", 0);
}

void to_json(Json& j, const Versions& v) {
  j = Json{{"driver", v.driver},
           {"runtime", v.runtime},
           {"cublas", v.cublas},
           {"nccl_built", v.nccl_built},
           {"nccl_loaded", v.nccl_loaded},
           {"cuda_driver_version", format_cuda_version(v.driver)},
           {"cuda_runtime_version", format_cuda_version(v.runtime)},
           {"nccl_version_built", format_nccl_version(v.nccl_built)},
           {"nccl_version_loaded", format_nccl_version(v.nccl_loaded)}};
}

void from_json(const Json& j, Versions& v) {
  v.driver = j.value("driver", 0);
  v.runtime = j.value("runtime", 0);
  v.cublas = j.value("cublas", 0);
  v.nccl_built = j.value("nccl_built", 0);
  v.nccl_loaded = j.value("nccl_loaded", 0);
}

void to_json(Json& j, const DeviceInventory& inv) {
  j = Json{{"devices", inv.devices}, {"peer_access", inv.peer_access}, {"versions", inv.versions}};
}

void from_json(const Json& j, DeviceInventory& inv) {
  inv.devices = j.at("devices").get<std::vector<DeviceInfo>>();
  inv.peer_access = j.value("peer_access", std::vector<std::vector<int>>{});
  inv.versions = j.value("versions", Versions{});
}

}  // namespace mgbench
