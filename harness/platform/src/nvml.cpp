// NVML loaded at run time. The types, enum values and prototypes below are copied by hand from
// NVIDIA's nvml.h (NVML API version 12, e.g. the header published in XuehaiPan/nvml-dev and the
// CUDA toolkit's nvml.h); only what mgbench calls is declared. Field ids are in nvml.hpp.
#include "mgbench/platform/nvml.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace mgbench {

namespace {

// ---- nvml.h declarations -------------------------------------------------------------------
using NvmlReturn = int;                 // nvmlReturn_t
using NvmlHandle = struct NvmlDeviceSt*;  // nvmlDevice_t (opaque)
constexpr NvmlReturn kNvmlSuccess = 0;                // NVML_SUCCESS
constexpr NvmlReturn kNvmlErrorInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int kNvmlFeatureEnabled = 1;                // NVML_FEATURE_ENABLED
constexpr int kNvmlTemperatureGpu = 0;                // NVML_TEMPERATURE_GPU
constexpr int kNvmlMemoryErrorUncorrected = 1;        // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kNvmlVolatileEcc = 0;                   // NVML_VOLATILE_ECC
constexpr int kNvmlAggregateEcc = 1;                  // NVML_AGGREGATE_ECC
// NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int kNvmlPageRetirementSbe = 0;
constexpr int kNvmlPageRetirementDbe = 1;  // NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
constexpr int kNvmlP2PCapsIndexNvlink = 2;  // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kNvmlP2PStatusOk = 0;         // NVML_P2P_STATUS_OK
constexpr unsigned kNvmlMigEnable = 1;      // NVML_DEVICE_MIG_ENABLE
constexpr unsigned kMaxNvlinks = 36;        // >= NVML_NVLINK_MAX_LINKS of any header so far

// nvmlPciInfo_t (as filled by nvmlDeviceGetPciInfo_v3).
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pci_device_id;
  unsigned pci_sub_system_id;
  char bus_id[32];
};

struct NvmlUtilization {  // nvmlUtilization_t
  unsigned gpu;
  unsigned memory;
};

struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct NvmlViolationTime {  // nvmlViolationTime_t
  unsigned long long reference_time;  // us
  unsigned long long violation_time;  // ns
};

union NvmlValueUnion {  // nvmlValue_t
  double d_val;
  int si_val;
  unsigned ui_val;
  unsigned long ul_val;
  unsigned long long ull_val;
  signed long long sll_val;
};

struct NvmlFieldValue {  // nvmlFieldValue_t
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;  // nvmlValueType_t: 0 double, 1 uint, 2 ulong, 3 ulonglong, 4 slonglong, 5 sint
  NvmlReturn nvml_return;
  NvmlValueUnion value;
};
static_assert(sizeof(NvmlFieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

struct NvmlProcessInfo {  // nvmlProcessInfo_t (v2 layout, used by the _v2 and _v3 functions)
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
static_assert(sizeof(NvmlProcessInfo) == 24, "nvmlProcessInfo_t is 24 bytes");

std::string c_string(const char* buffer, std::size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

}  // namespace

struct Nvml::Api {
  // Required.
  NvmlReturn (*init)() = nullptr;                                 // nvmlInit_v2
  NvmlReturn (*shutdown)() = nullptr;                             // nvmlShutdown
  NvmlReturn (*get_count)(unsigned*) = nullptr;                   // nvmlDeviceGetCount_v2
  NvmlReturn (*get_handle_by_index)(unsigned, NvmlHandle*) = nullptr;  // ..._v2
  NvmlReturn (*get_pci_info)(NvmlHandle, NvmlPciInfo*) = nullptr;      // nvmlDeviceGetPciInfo_v3
  // Optional.
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;  // nvmlSystemGetDriverVersion
  NvmlReturn (*nvml_version)(char*, unsigned) = nullptr;    // nvmlSystemGetNVMLVersion
  NvmlReturn (*cuda_driver_version)(int*) = nullptr;        // nvmlSystemGetCudaDriverVersion_v2
  NvmlReturn (*process_name)(unsigned, char*, unsigned) = nullptr;  // nvmlSystemGetProcessName
  NvmlReturn (*get_name)(NvmlHandle, char*, unsigned) = nullptr;
  NvmlReturn (*get_uuid)(NvmlHandle, char*, unsigned) = nullptr;
  NvmlReturn (*get_serial)(NvmlHandle, char*, unsigned) = nullptr;
  NvmlReturn (*get_vbios)(NvmlHandle, char*, unsigned) = nullptr;
  NvmlReturn (*get_persistence)(NvmlHandle, int*) = nullptr;
  NvmlReturn (*get_ecc_mode)(NvmlHandle, int*, int*) = nullptr;
  NvmlReturn (*get_mig_mode)(NvmlHandle, unsigned*, unsigned*) = nullptr;
  NvmlReturn (*get_enforced_limit)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_management_limit)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_default_limit)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_limit_constraints)(NvmlHandle, unsigned*, unsigned*) = nullptr;
  NvmlReturn (*get_clock)(NvmlHandle, int, unsigned*) = nullptr;      // nvmlDeviceGetClockInfo
  NvmlReturn (*get_max_clock)(NvmlHandle, int, unsigned*) = nullptr;  // nvmlDeviceGetMaxClockInfo
  NvmlReturn (*get_curr_pcie_gen)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_curr_pcie_width)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_max_pcie_gen)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_gpu_max_pcie_gen)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_max_pcie_width)(NvmlHandle, unsigned*) = nullptr;
  NvmlReturn (*get_nvlink_state)(NvmlHandle, unsigned, int*) = nullptr;
  NvmlReturn (*get_nvlink_remote_pci)(NvmlHandle, unsigned, NvmlPciInfo*) = nullptr;  // _v2
  NvmlReturn (*get_topology_common_ancestor)(NvmlHandle, NvmlHandle, int*) = nullptr;
  NvmlReturn (*get_p2p_status)(NvmlHandle, NvmlHandle, int, int*) = nullptr;
  NvmlReturn (*get_temperature)(NvmlHandle, int, unsigned*) = nullptr;
  NvmlReturn (*get_power_usage)(NvmlHandle, unsigned*) = nullptr;  // mW
  NvmlReturn (*get_utilization)(NvmlHandle, NvmlUtilization*) = nullptr;
  NvmlReturn (*get_memory_info)(NvmlHandle, NvmlMemory*) = nullptr;
  NvmlReturn (*get_clock_event_reasons)(NvmlHandle, unsigned long long*) = nullptr;
  NvmlReturn (*get_total_energy)(NvmlHandle, unsigned long long*) = nullptr;  // mJ
  NvmlReturn (*get_violation_status)(NvmlHandle, int, NvmlViolationTime*) = nullptr;
  NvmlReturn (*get_field_values)(NvmlHandle, int, NvmlFieldValue*) = nullptr;
  NvmlReturn (*get_total_ecc_errors)(NvmlHandle, int, int, unsigned long long*) = nullptr;
  NvmlReturn (*get_remapped_rows)(NvmlHandle, unsigned*, unsigned*, unsigned*,
                                  unsigned*) = nullptr;
  NvmlReturn (*get_retired_pages)(NvmlHandle, int, unsigned*, unsigned long long*) = nullptr;
  NvmlReturn (*get_retired_pending)(NvmlHandle, int*) = nullptr;
  NvmlReturn (*get_compute_processes)(NvmlHandle, unsigned*, NvmlProcessInfo*) = nullptr;
};

namespace {

template <typename Fn>
void resolve(void* library, Fn& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(library, name)) {
      fn = reinterpret_cast<Fn>(symbol);
      return;
    }
  }
}

NvmlHandle as_handle(NvmlDevice device) { return static_cast<NvmlHandle>(device.handle); }

std::optional<NvmlValue> convert_field(const NvmlFieldValue& field) {
  if (field.nvml_return != kNvmlSuccess) return std::nullopt;
  NvmlValue v;
  switch (field.value_type) {
    case 0:
      v.as_double = field.value.d_val;
      v.as_u64 = field.value.d_val > 0 ? static_cast<std::uint64_t>(field.value.d_val) : 0;
      break;
    case 1:
      v.as_u64 = field.value.ui_val;
      v.as_double = static_cast<double>(v.as_u64);
      break;
    case 2:
      v.as_u64 = field.value.ul_val;
      v.as_double = static_cast<double>(v.as_u64);
      break;
    case 3:
      v.as_u64 = field.value.ull_val;
      v.as_double = static_cast<double>(v.as_u64);
      break;
    case 4:
      v.as_double = static_cast<double>(field.value.sll_val);
      v.as_u64 = field.value.sll_val > 0 ? static_cast<std::uint64_t>(field.value.sll_val) : 0;
      break;
    case 5:
      v.as_double = static_cast<double>(field.value.si_val);
      v.as_u64 = field.value.si_val > 0 ? static_cast<std::uint64_t>(field.value.si_val) : 0;
      break;
    default:
      return std::nullopt;
  }
  return v;
}

unsigned parse_hex(const std::string& text, bool* ok) {
  if (text.empty() || text.size() > 8) {
    *ok = false;
    return 0;
  }
  unsigned value = 0;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      *ok = false;
      return 0;
    }
    value = value * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c))
                                                   ? c - '0'
                                                   : std::tolower(c) - 'a' + 10);
  }
  return value;
}

}  // namespace

// ---- pure helpers ---------------------------------------------------------------------------

std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {clock_event::kGpuIdle, "gpu_idle"},
      {clock_event::kApplicationsClocks, "applications_clocks"},
      {clock_event::kSwPowerCap, "sw_power_cap"},
      {clock_event::kHwSlowdown, "hw_slowdown"},
      {clock_event::kSyncBoost, "sync_boost"},
      {clock_event::kSwThermal, "sw_thermal"},
      {clock_event::kHwThermal, "hw_thermal"},
      {clock_event::kHwPowerBrake, "hw_power_brake"},
      {clock_event::kDisplayClock, "display_clock"},
  };
  std::vector<std::string> names;
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((mask & bit) == 0) continue;
    const char* name = nullptr;
    for (const auto& [value, label] : kNames) {
      if (value == bit) name = label;
    }
    names.push_back(name ? std::string(name) : fmt::format("bit_0x{:x}", bit));
  }
  return names;
}

std::string normalize_pci_bus_id(const std::string& bus_id) {
  // domain:bus:device.function, bus:device.function or domain:bus:device.
  std::string text;
  for (char c : bus_id) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  std::string function = "0";
  std::string& last = parts.back();
  const auto dot = last.find('.');
  const bool has_function = dot != std::string::npos;
  if (has_function) {
    function = last.substr(dot + 1);
    last = last.substr(0, dot);
  }
  std::string domain = "0", bus, device;
  if (parts.size() == 3) {
    domain = parts[0];
    bus = parts[1];
    device = parts[2];
  } else if (parts.size() == 2 && has_function) {
    bus = parts[0];
    device = parts[1];
  } else {
    return "";
  }
  bool ok = true;
  const unsigned d = parse_hex(domain, &ok), b = parse_hex(bus, &ok), v = parse_hex(device, &ok),
                 f = parse_hex(function, &ok);
  if (!ok || b > 0xff || v > 0x1f || f > 0x7) return "";
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", d, b, v, f);
}

std::vector<int> match_devices_by_bus_id(const std::vector<std::string>& cuda_bus_ids,
                                         const std::vector<std::string>& nvml_bus_ids) {
  std::vector<std::string> nvml_norm;
  for (const auto& id : nvml_bus_ids) nvml_norm.push_back(normalize_pci_bus_id(id));
  std::vector<int> result;
  for (const auto& id : cuda_bus_ids) {
    const std::string norm = normalize_pci_bus_id(id);
    int found = -1;
    for (std::size_t i = 0; i < nvml_norm.size() && !norm.empty(); ++i) {
      if (nvml_norm[i] == norm) {
        found = static_cast<int>(i);
        break;
      }
    }
    result.push_back(found);
  }
  return result;
}

std::string topology_label(int nvml_level) {
  switch (nvml_level) {
    case 0:   // NVML_TOPOLOGY_INTERNAL (same board)
    case 10:  // NVML_TOPOLOGY_SINGLE
      return "PIX";
    case 20:  // NVML_TOPOLOGY_MULTIPLE
      return "PXB";
    case 30:  // NVML_TOPOLOGY_HOSTBRIDGE
      return "PHB";
    case 40:  // NVML_TOPOLOGY_NODE
      return "NODE";
    case 50:  // NVML_TOPOLOGY_SYSTEM
      return "SYS";
    default:
      return "?";
  }
}

// ---- loading --------------------------------------------------------------------------------

std::vector<std::string> Nvml::default_candidates() {
  if (const char* path = std::getenv("MGBENCH_NVML_LIBRARY"); path && *path) return {path};
  return {"libnvidia-ml.so.1",
          "libnvidia-ml.so",
          "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
          "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
          "/usr/lib64/libnvidia-ml.so.1",
          "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
          "/usr/local/nvidia/lib/libnvidia-ml.so.1",
          "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"};
}

std::shared_ptr<Nvml> Nvml::load(const std::vector<std::string>& candidates, std::string* error) {
  void* library = nullptr;
  std::string path;
  for (const auto& candidate : candidates) {
    library = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library) {
      path = candidate;
      break;
    }
  }
  if (!library) {
    if (error) {
      *error = candidates.size() == 1 ? fmt::format("cannot load {}", candidates.front())
                                      : "libnvidia-ml.so.1 not found";
    }
    return nullptr;
  }
  std::shared_ptr<Nvml> nvml(new Nvml());
  nvml->library_ = library;
  nvml->path_ = path;
  nvml->api_ = std::make_unique<Api>();
  Api& a = *nvml->api_;
  resolve(library, a.init, {"nvmlInit_v2"});
  resolve(library, a.shutdown, {"nvmlShutdown"});
  resolve(library, a.get_count, {"nvmlDeviceGetCount_v2"});
  resolve(library, a.get_handle_by_index, {"nvmlDeviceGetHandleByIndex_v2"});
  resolve(library, a.get_pci_info, {"nvmlDeviceGetPciInfo_v3"});
  resolve(library, a.error_string, {"nvmlErrorString"});
  resolve(library, a.driver_version, {"nvmlSystemGetDriverVersion"});
  resolve(library, a.nvml_version, {"nvmlSystemGetNVMLVersion"});
  resolve(library, a.cuda_driver_version,
          {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  resolve(library, a.process_name, {"nvmlSystemGetProcessName"});
  resolve(library, a.get_name, {"nvmlDeviceGetName"});
  resolve(library, a.get_uuid, {"nvmlDeviceGetUUID"});
  resolve(library, a.get_serial, {"nvmlDeviceGetSerial"});
  resolve(library, a.get_vbios, {"nvmlDeviceGetVbiosVersion"});
  resolve(library, a.get_persistence, {"nvmlDeviceGetPersistenceMode"});
  resolve(library, a.get_ecc_mode, {"nvmlDeviceGetEccMode"});
  resolve(library, a.get_mig_mode, {"nvmlDeviceGetMigMode"});
  resolve(library, a.get_enforced_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  resolve(library, a.get_management_limit, {"nvmlDeviceGetPowerManagementLimit"});
  resolve(library, a.get_default_limit, {"nvmlDeviceGetPowerManagementDefaultLimit"});
  resolve(library, a.get_limit_constraints, {"nvmlDeviceGetPowerManagementLimitConstraints"});
  resolve(library, a.get_clock, {"nvmlDeviceGetClockInfo"});
  resolve(library, a.get_max_clock, {"nvmlDeviceGetMaxClockInfo"});
  resolve(library, a.get_curr_pcie_gen, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  resolve(library, a.get_curr_pcie_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  resolve(library, a.get_max_pcie_gen, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  resolve(library, a.get_gpu_max_pcie_gen, {"nvmlDeviceGetGpuMaxPcieLinkGeneration"});
  resolve(library, a.get_max_pcie_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
  resolve(library, a.get_nvlink_state, {"nvmlDeviceGetNvLinkState"});
  resolve(library, a.get_nvlink_remote_pci, {"nvmlDeviceGetNvLinkRemotePciInfo_v2"});
  resolve(library, a.get_topology_common_ancestor, {"nvmlDeviceGetTopologyCommonAncestor"});
  resolve(library, a.get_p2p_status, {"nvmlDeviceGetP2PStatus"});
  resolve(library, a.get_temperature, {"nvmlDeviceGetTemperature"});
  resolve(library, a.get_power_usage, {"nvmlDeviceGetPowerUsage"});
  resolve(library, a.get_utilization, {"nvmlDeviceGetUtilizationRates"});
  resolve(library, a.get_memory_info, {"nvmlDeviceGetMemoryInfo"});
  resolve(library, a.get_clock_event_reasons,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  resolve(library, a.get_total_energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  resolve(library, a.get_violation_status, {"nvmlDeviceGetViolationStatus"});
  resolve(library, a.get_field_values, {"nvmlDeviceGetFieldValues"});
  resolve(library, a.get_total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  resolve(library, a.get_remapped_rows, {"nvmlDeviceGetRemappedRows"});
  resolve(library, a.get_retired_pages, {"nvmlDeviceGetRetiredPages"});
  resolve(library, a.get_retired_pending, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  resolve(library, a.get_compute_processes,
          {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});

  const char* missing = !a.init                  ? "nvmlInit_v2"
                        : !a.shutdown            ? "nvmlShutdown"
                        : !a.get_count           ? "nvmlDeviceGetCount_v2"
                        : !a.get_handle_by_index ? "nvmlDeviceGetHandleByIndex_v2"
                        : !a.get_pci_info        ? "nvmlDeviceGetPciInfo_v3"
                                                 : nullptr;
  if (missing) {
    if (error) *error = fmt::format("{} has no symbol {} (driver too old?)", path, missing);
    a.shutdown = nullptr;  // never initialised: the destructor only closes the library
    return nullptr;
  }
  const NvmlReturn rc = a.init();
  if (rc != kNvmlSuccess) {
    if (error) {
      *error = fmt::format("nvmlInit failed: {}",
                           a.error_string ? a.error_string(rc) : fmt::format("error {}", rc));
    }
    a.shutdown = nullptr;  // not initialised: nothing to shut down
    return nullptr;
  }
  return nvml;
}

Nvml::~Nvml() {
  if (api_ && api_->shutdown) api_->shutdown();
  if (library_) ::dlclose(library_);
}

// ---- queries --------------------------------------------------------------------------------

namespace {

template <typename Fn, typename... Args>
std::string read_string(Fn fn, unsigned size, Args... args) {
  if (!fn) return "";
  std::vector<char> buffer(size, '\0');
  if (fn(args..., buffer.data(), size) != kNvmlSuccess) return "";
  return c_string(buffer.data(), buffer.size());
}

}  // namespace

std::string Nvml::driver_version() const { return read_string(api_->driver_version, 96); }

std::string Nvml::nvml_version() const { return read_string(api_->nvml_version, 96); }

std::optional<int> Nvml::cuda_driver_version() const {
  int v = 0;
  if (!api_->cuda_driver_version || api_->cuda_driver_version(&v) != kNvmlSuccess) {
    return std::nullopt;
  }
  return v;
}

unsigned Nvml::device_count() const {
  unsigned count = 0;
  if (api_->get_count(&count) != kNvmlSuccess) return 0;
  return count;
}

NvmlDevice Nvml::device_by_index(unsigned index) const {
  NvmlHandle handle = nullptr;
  if (api_->get_handle_by_index(index, &handle) != kNvmlSuccess) return {};
  return NvmlDevice{handle};
}

NvmlDevice Nvml::device_by_pci_bus_id(const std::string& bus_id) const {
  const std::string wanted = normalize_pci_bus_id(bus_id);
  if (wanted.empty()) return {};
  const unsigned count = device_count();
  for (unsigned i = 0; i < count; ++i) {
    const NvmlDevice device = device_by_index(i);
    if (device && pci_bus_id(device) == wanted) return device;
  }
  return {};
}

std::string Nvml::pci_bus_id(NvmlDevice device) const {
  NvmlPciInfo info{};
  if (api_->get_pci_info(as_handle(device), &info) != kNvmlSuccess) return "";
  return normalize_pci_bus_id(c_string(info.bus_id, sizeof(info.bus_id)));
}

std::string Nvml::name(NvmlDevice device) const {
  return read_string(api_->get_name, 96, as_handle(device));
}

std::string Nvml::uuid(NvmlDevice device) const {
  return read_string(api_->get_uuid, 96, as_handle(device));
}

std::string Nvml::serial(NvmlDevice device) const {
  return read_string(api_->get_serial, 64, as_handle(device));
}

std::string Nvml::vbios_version(NvmlDevice device) const {
  return read_string(api_->get_vbios, 64, as_handle(device));
}

std::optional<bool> Nvml::persistence_mode(NvmlDevice device) const {
  int mode = 0;
  if (!api_->get_persistence || api_->get_persistence(as_handle(device), &mode) != kNvmlSuccess) {
    return std::nullopt;
  }
  return mode == kNvmlFeatureEnabled;
}

std::optional<std::pair<bool, bool>> Nvml::ecc_mode(NvmlDevice device) const {
  int current = 0, pending = 0;
  if (!api_->get_ecc_mode ||
      api_->get_ecc_mode(as_handle(device), &current, &pending) != kNvmlSuccess) {
    return std::nullopt;
  }
  return std::make_pair(current == kNvmlFeatureEnabled, pending == kNvmlFeatureEnabled);
}

std::optional<std::pair<bool, bool>> Nvml::mig_mode(NvmlDevice device) const {
  unsigned current = 0, pending = 0;
  if (!api_->get_mig_mode ||
      api_->get_mig_mode(as_handle(device), &current, &pending) != kNvmlSuccess) {
    return std::nullopt;
  }
  return std::make_pair(current == kNvmlMigEnable, pending == kNvmlMigEnable);
}

NvmlPowerLimits Nvml::power_limits(NvmlDevice device) const {
  NvmlPowerLimits limits;
  const NvmlHandle h = as_handle(device);
  unsigned mw = 0, max_mw = 0;
  if (api_->get_enforced_limit && api_->get_enforced_limit(h, &mw) == kNvmlSuccess) {
    limits.enforced_w = mw / 1000.0;
  }
  if (api_->get_management_limit && api_->get_management_limit(h, &mw) == kNvmlSuccess) {
    limits.management_w = mw / 1000.0;
  }
  if (api_->get_default_limit && api_->get_default_limit(h, &mw) == kNvmlSuccess) {
    limits.default_w = mw / 1000.0;
  }
  if (api_->get_limit_constraints &&
      api_->get_limit_constraints(h, &mw, &max_mw) == kNvmlSuccess) {
    limits.min_w = mw / 1000.0;
    limits.max_w = max_mw / 1000.0;
  }
  return limits;
}

std::optional<unsigned> Nvml::clock_mhz(NvmlDevice device, NvmlClock clock) const {
  unsigned mhz = 0;
  if (!api_->get_clock ||
      api_->get_clock(as_handle(device), static_cast<int>(clock), &mhz) != kNvmlSuccess) {
    return std::nullopt;
  }
  return mhz;
}

std::optional<unsigned> Nvml::max_clock_mhz(NvmlDevice device, NvmlClock clock) const {
  unsigned mhz = 0;
  if (!api_->get_max_clock ||
      api_->get_max_clock(as_handle(device), static_cast<int>(clock), &mhz) != kNvmlSuccess) {
    return std::nullopt;
  }
  return mhz;
}

NvmlPcieLink Nvml::pcie_link(NvmlDevice device) const {
  NvmlPcieLink link;
  const NvmlHandle h = as_handle(device);
  auto get = [&](NvmlReturn (*fn)(NvmlHandle, unsigned*), std::optional<unsigned>& out) {
    unsigned v = 0;
    if (fn && fn(h, &v) == kNvmlSuccess) out = v;
  };
  get(api_->get_curr_pcie_gen, link.gen_current);
  get(api_->get_curr_pcie_width, link.width_current);
  get(api_->get_max_pcie_gen, link.gen_max);
  get(api_->get_gpu_max_pcie_gen, link.gen_gpu_max);
  get(api_->get_max_pcie_width, link.width_max);
  return link;
}

NvmlNvLinks Nvml::nvlinks(NvmlDevice device) const {
  NvmlNvLinks links;
  if (!api_->get_nvlink_state) return links;
  const NvmlHandle h = as_handle(device);
  for (unsigned link = 0; link < kMaxNvlinks; ++link) {
    int active = 0;
    if (api_->get_nvlink_state(h, link, &active) != kNvmlSuccess) continue;
    ++links.links_total;
    if (active != kNvmlFeatureEnabled) continue;
    ++links.links_up;
    NvmlPciInfo remote{};
    if (api_->get_nvlink_remote_pci &&
        api_->get_nvlink_remote_pci(h, link, &remote) == kNvmlSuccess) {
      links.remote_bus_ids.push_back(
          normalize_pci_bus_id(c_string(remote.bus_id, sizeof(remote.bus_id))));
    }
  }
  return links;
}

std::optional<int> Nvml::topology_level(NvmlDevice a, NvmlDevice b) const {
  int level = 0;
  if (!api_->get_topology_common_ancestor ||
      api_->get_topology_common_ancestor(as_handle(a), as_handle(b), &level) != kNvmlSuccess) {
    return std::nullopt;
  }
  return level;
}

std::optional<bool> Nvml::nvlink_p2p(NvmlDevice a, NvmlDevice b) const {
  int status = 0;
  if (!api_->get_p2p_status ||
      api_->get_p2p_status(as_handle(a), as_handle(b), kNvmlP2PCapsIndexNvlink, &status) !=
          kNvmlSuccess) {
    return std::nullopt;
  }
  return status == kNvmlP2PStatusOk;
}

std::optional<unsigned> Nvml::temperature_c(NvmlDevice device) const {
  unsigned t = 0;
  if (!api_->get_temperature ||
      api_->get_temperature(as_handle(device), kNvmlTemperatureGpu, &t) != kNvmlSuccess) {
    return std::nullopt;
  }
  return t;
}

std::optional<double> Nvml::memory_temperature_c(NvmlDevice device) const {
  const auto values = field_values(device, {nvml_field::kMemoryTemp});
  if (!values[0] || values[0]->as_double <= 0) return std::nullopt;  // 0: not measured
  return values[0]->as_double;
}

std::optional<double> Nvml::power_w(NvmlDevice device) const {
  const auto values = field_values(device, {nvml_field::kPowerInstant});
  if (values[0]) return values[0]->as_double / 1000.0;
  unsigned mw = 0;
  if (!api_->get_power_usage || api_->get_power_usage(as_handle(device), &mw) != kNvmlSuccess) {
    return std::nullopt;
  }
  return mw / 1000.0;
}

std::optional<unsigned> Nvml::utilization_pct(NvmlDevice device) const {
  NvmlUtilization u{};
  if (!api_->get_utilization || api_->get_utilization(as_handle(device), &u) != kNvmlSuccess) {
    return std::nullopt;
  }
  return u.gpu;
}

std::optional<NvmlMemoryInfo> Nvml::memory_info(NvmlDevice device) const {
  NvmlMemory m{};
  if (!api_->get_memory_info || api_->get_memory_info(as_handle(device), &m) != kNvmlSuccess) {
    return std::nullopt;
  }
  return NvmlMemoryInfo{m.total, m.free, m.used};
}

std::optional<std::uint64_t> Nvml::clock_event_reasons(NvmlDevice device) const {
  unsigned long long reasons = 0;
  if (!api_->get_clock_event_reasons ||
      api_->get_clock_event_reasons(as_handle(device), &reasons) != kNvmlSuccess) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(reasons);
}

std::optional<double> Nvml::energy_j(NvmlDevice device) const {
  unsigned long long mj = 0;
  if (!api_->get_total_energy || api_->get_total_energy(as_handle(device), &mj) != kNvmlSuccess) {
    return std::nullopt;
  }
  return static_cast<double>(mj) / 1000.0;
}

std::optional<double> Nvml::violation_time_s(NvmlDevice device, PerfPolicy policy) const {
  NvmlViolationTime t{};
  if (!api_->get_violation_status ||
      api_->get_violation_status(as_handle(device), static_cast<int>(policy), &t) !=
          kNvmlSuccess) {
    return std::nullopt;
  }
  return static_cast<double>(t.violation_time) * 1e-9;
}

std::vector<std::optional<NvmlValue>> Nvml::field_values(NvmlDevice device,
                                                         const std::vector<unsigned>& field_ids,
                                                         unsigned scope) const {
  std::vector<std::optional<NvmlValue>> result(field_ids.size());
  if (!api_->get_field_values || field_ids.empty()) return result;
  std::vector<NvmlFieldValue> fields(field_ids.size());
  for (std::size_t i = 0; i < field_ids.size(); ++i) {
    std::memset(&fields[i], 0, sizeof(NvmlFieldValue));
    fields[i].field_id = field_ids[i];
    fields[i].scope_id = scope;
  }
  if (api_->get_field_values(as_handle(device), static_cast<int>(fields.size()),
                             fields.data()) != kNvmlSuccess) {
    return result;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) result[i] = convert_field(fields[i]);
  return result;
}

std::optional<std::uint64_t> Nvml::ecc_uncorrected(NvmlDevice device, bool aggregate) const {
  unsigned long long count = 0;
  if (!api_->get_total_ecc_errors ||
      api_->get_total_ecc_errors(as_handle(device), kNvmlMemoryErrorUncorrected,
                                 aggregate ? kNvmlAggregateEcc : kNvmlVolatileEcc,
                                 &count) != kNvmlSuccess) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(count);
}

std::optional<NvmlRemappedRows> Nvml::remapped_rows(NvmlDevice device) const {
  unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
  if (!api_->get_remapped_rows ||
      api_->get_remapped_rows(as_handle(device), &corrected, &uncorrected, &pending, &failure) !=
          kNvmlSuccess) {
    return std::nullopt;
  }
  return NvmlRemappedRows{corrected, uncorrected, pending != 0, failure != 0};
}

NvmlRetiredPages Nvml::retired_pages(NvmlDevice device) const {
  NvmlRetiredPages pages;
  const NvmlHandle h = as_handle(device);
  if (api_->get_retired_pages) {
    unsigned count = 0;
    if (api_->get_retired_pages(h, kNvmlPageRetirementSbe, &count, nullptr) == kNvmlSuccess) {
      pages.single_bit = count;
    }
    count = 0;
    if (api_->get_retired_pages(h, kNvmlPageRetirementDbe, &count, nullptr) == kNvmlSuccess) {
      pages.double_bit = count;
    }
  }
  int pending = 0;
  if (api_->get_retired_pending && api_->get_retired_pending(h, &pending) == kNvmlSuccess) {
    pages.pending = pending == kNvmlFeatureEnabled;
  }
  return pages;
}

std::optional<std::vector<NvmlProcess>> Nvml::compute_processes(NvmlDevice device) const {
  if (!api_->get_compute_processes) return std::nullopt;
  const NvmlHandle h = as_handle(device);
  unsigned count = 0;
  NvmlReturn rc = api_->get_compute_processes(h, &count, nullptr);
  std::vector<NvmlProcessInfo> infos;
  if (rc == kNvmlErrorInsufficientSize) {
    count += 8;  // processes may start between the two calls
    infos.resize(count);
    rc = api_->get_compute_processes(h, &count, infos.data());
  }
  if (rc != kNvmlSuccess) return std::nullopt;
  std::vector<NvmlProcess> processes;
  for (unsigned i = 0; i < count && i < infos.size(); ++i) {
    NvmlProcess p;
    p.pid = infos[i].pid;
    // NVML_VALUE_NOT_AVAILABLE (-1 as unsigned long long) when the driver cannot tell.
    p.used_memory = infos[i].used_gpu_memory == ~0ULL ? 0 : infos[i].used_gpu_memory;
    p.name = read_string(api_->process_name, 256, p.pid);
    processes.push_back(std::move(p));
  }
  return processes;
}

// ---- process-wide instance ------------------------------------------------------------------

namespace {

struct GlobalNvml {
  std::once_flag once;
  std::shared_ptr<Nvml> nvml;
  std::string error;
};

GlobalNvml& global_nvml() {
  static GlobalNvml* global = new GlobalNvml();  // never destroyed: no nvmlShutdown at exit races
  std::call_once(global->once, [] {
    global->nvml = Nvml::load(Nvml::default_candidates(), &global->error);
  });
  return *global;
}

}  // namespace

std::shared_ptr<Nvml> nvml_instance() { return global_nvml().nvml; }

std::string nvml_load_error() { return global_nvml().error; }

void warn_nvml_unavailable_once(const std::string& consequence) {
  static std::once_flag once;
  std::call_once(once, [&] {
    spdlog::warn("NVML unavailable ({}): {}", nvml_load_error(), consequence);
  });
}

}  // namespace mgbench
