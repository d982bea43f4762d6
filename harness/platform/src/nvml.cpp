// NVML loaded at run time: the pure helpers (clock-event reasons, PCI bus ids, topology
// labels), loading the library and resolving its symbols, and the process-wide instance. The
// queries are in nvml_queries.cpp; the C declarations in nvml_api.hpp.
#include "mgbench/platform/nvml.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "mgbench/core/logging.hpp"
#include "nvml_api.hpp"

namespace mgbench {

using namespace nvml_api;

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

// The first candidate dlopen accepts; nullptr when none.
void* open_library(const std::vector<std::string>& candidates, std::string& path) {
  for (const auto& candidate : candidates) {
    if (void* library = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = candidate;
      return library;
    }
  }
  return nullptr;
}

// The symbols NVML cannot work without (missing_required names the first one absent).
void resolve_required(void* library, Nvml::Api& a) {
  resolve(library, a.init, {"nvmlInit_v2"});
  resolve(library, a.shutdown, {"nvmlShutdown"});
  resolve(library, a.get_count, {"nvmlDeviceGetCount_v2"});
  resolve(library, a.get_handle_by_index, {"nvmlDeviceGetHandleByIndex_v2"});
  resolve(library, a.get_pci_info, {"nvmlDeviceGetPciInfo_v3"});
}

const char* missing_required(const Nvml::Api& a) {
  return !a.init                  ? "nvmlInit_v2"
         : !a.shutdown            ? "nvmlShutdown"
         : !a.get_count           ? "nvmlDeviceGetCount_v2"
         : !a.get_handle_by_index ? "nvmlDeviceGetHandleByIndex_v2"
         : !a.get_pci_info        ? "nvmlDeviceGetPciInfo_v3"
                                  : nullptr;
}

// Everything else: a query whose symbol is missing answers "unknown".
void resolve_optional(void* library, Nvml::Api& a) {
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
  resolve(library, a.get_temperature_threshold, {"nvmlDeviceGetTemperatureThreshold"});
  resolve(library, a.event_set_create, {"nvmlEventSetCreate"});
  resolve(library, a.register_events, {"nvmlDeviceRegisterEvents"});
  resolve(library, a.event_set_wait, {"nvmlEventSetWait_v2"});
  resolve(library, a.event_set_free, {"nvmlEventSetFree"});
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
  // The override names one file: an absolute path, never one the loader would search for
  // (a relative name could pick up a library from the current directory).
  if (const char* path = std::getenv("MGBENCH_NVML_LIBRARY"); path && *path) {
    if (path[0] == '/') return {path};
    std::string shown(path);
    for (char& c : shown) c = std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    logging::warn("MGBENCH_NVML_LIBRARY='{}' ignored: it must be an absolute path", shown);
  }
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
  std::string path;
  void* library = open_library(candidates, path);
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
  resolve_required(library, a);
  resolve_optional(library, a);
  if (const char* missing = missing_required(a)) {
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
    logging::warn("NVML unavailable ({}): {}", nvml_load_error(), consequence);
  });
}

}  // namespace mgbench
