#pragma once
// NVML's C interface as mgbench uses it, for the files that load NVML (nvml.cpp) and call it
// (nvml_queries.cpp). The types, enum values and prototypes are copied by hand from NVIDIA's
// nvml.h (NVML API version 12, e.g. the header published in XuehaiPan/nvml-dev and the CUDA
// toolkit's nvml.h); only what mgbench calls is declared. Field ids are in nvml.hpp. Private
// to the platform library.
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/platform/nvml.hpp"

namespace mgbench {
namespace nvml_api {

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
constexpr unsigned kMaxNvlinks = 36;
constexpr NvmlReturn kNvmlErrorTimeout = 10;             // NVML_ERROR_TIMEOUT
constexpr int kNvmlMemoryErrorCorrected = 0;             // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr int kNvmlTemperatureThresholdSlowdown = 1;     // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
constexpr unsigned long long kNvmlEventXidCritical = 0x8;  // nvmlEventTypeXidCriticalError        // >= NVML_NVLINK_MAX_LINKS of any header so far

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

using NvmlEventSet = struct NvmlEventSetSt*;  // nvmlEventSet_t (opaque)

struct NvmlEventData {  // nvmlEventData_t (as filled by nvmlEventSetWait_v2)
  NvmlHandle device;
  unsigned long long event_type;
  unsigned long long event_data;  // the XID for nvmlEventTypeXidCriticalError
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};

inline std::string c_string(const char* buffer, std::size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

}  // namespace nvml_api

struct Nvml::Api {
  using NvmlReturn = nvml_api::NvmlReturn;
  using NvmlHandle = nvml_api::NvmlHandle;
  using NvmlPciInfo = nvml_api::NvmlPciInfo;
  using NvmlUtilization = nvml_api::NvmlUtilization;
  using NvmlMemory = nvml_api::NvmlMemory;
  using NvmlViolationTime = nvml_api::NvmlViolationTime;
  using NvmlFieldValue = nvml_api::NvmlFieldValue;
  using NvmlProcessInfo = nvml_api::NvmlProcessInfo;

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
  NvmlReturn (*get_temperature_threshold)(NvmlHandle, int, unsigned*) = nullptr;
  using NvmlEventSet = nvml_api::NvmlEventSet;
  using NvmlEventData = nvml_api::NvmlEventData;
  NvmlReturn (*event_set_create)(NvmlEventSet*) = nullptr;                            // nvmlEventSetCreate
  NvmlReturn (*register_events)(NvmlHandle, unsigned long long, NvmlEventSet) = nullptr;  // nvmlDeviceRegisterEvents
  NvmlReturn (*event_set_wait)(NvmlEventSet, NvmlEventData*, unsigned) = nullptr;     // nvmlEventSetWait_v2
  NvmlReturn (*event_set_free)(NvmlEventSet) = nullptr;                               // nvmlEventSetFree
};

namespace nvml_api {

inline NvmlHandle as_handle(NvmlDevice device) { return static_cast<NvmlHandle>(device.handle); }

// The string an NVML call writes into a buffer of `size`; "" when the symbol is missing or
// the call fails.
template <typename Fn, typename... Args>
std::string read_string(Fn fn, unsigned size, Args... args) {
  if (!fn) return "";
  std::vector<char> buffer(size, '\0');
  if (fn(args..., buffer.data(), size) != kNvmlSuccess) return "";
  return c_string(buffer.data(), buffer.size());
}

// fn(args..., &value): the value on NVML_SUCCESS; nullopt when the symbol is missing or the
// call fails.
template <typename T, typename Fn, typename... Args>
std::optional<T> query(Fn fn, Args... args) {
  T value{};
  if (!fn || fn(args..., &value) != kNvmlSuccess) return std::nullopt;
  return value;
}

}  // namespace nvml_api
}  // namespace mgbench
