#pragma once
// NVML, loaded at run time with dlopen("libnvidia-ml.so.1"), so that mgbench runs where NVML is
// missing (telemetry is then null, with one warning). Only the few NVML types and functions
// mgbench uses are declared (in nvml_api.hpp), with the versioned symbol names (nvmlInit_v2,
// nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetPciInfo_v3...). Every query returns an empty
// optional (or an empty string) when NVML cannot answer: NOT_SUPPORTED is common on cloud VMs and
// under MIG, and never an error here.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mgbench {

// Clock-event ("throttle") reason bits of nvmlDeviceGetCurrentClocksEventReasons, as NVIDIA's
// nvml.h defines them (nvmlClocksEventReason* / nvmlClocksThrottleReason*). Several bits are
// often set at once: always test with `&`, never with `==`.
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;              // nvmlClocksEventReasonGpuIdle
inline constexpr std::uint64_t kApplicationsClocks = 0x2;   // ...ApplicationsClocksSetting
inline constexpr std::uint64_t kSwPowerCap = 0x4;           // ...SwPowerCap
inline constexpr std::uint64_t kHwSlowdown = 0x8;           // ...HwSlowdown
inline constexpr std::uint64_t kSyncBoost = 0x10;           // ...SyncBoost
inline constexpr std::uint64_t kSwThermal = 0x20;           // ...SwThermalSlowdown
inline constexpr std::uint64_t kHwThermal = 0x40;           // ...HwThermalSlowdown
inline constexpr std::uint64_t kHwPowerBrake = 0x80;        // ...HwPowerBrakeSlowdown
inline constexpr std::uint64_t kDisplayClock = 0x100;       // ...DisplayClockSetting
// Reasons that hold a busy GPU below its clocks (a sample with one of them is throttled).
inline constexpr std::uint64_t kThrottleMask =
    kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;
// Reasons that point at a cooling or power-delivery problem (doctor: fail).
inline constexpr std::uint64_t kSevereMask = kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;
}  // namespace clock_event

// Names of the set bits, in bit order: "gpu_idle", "applications_clocks", "sw_power_cap",
// "hw_slowdown", "sync_boost", "sw_thermal", "hw_thermal", "hw_power_brake", "display_clock";
// an unknown bit b gives "bit_0x<hex>".
std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask);
inline bool clock_event_throttled(std::uint64_t mask) {
  return (mask & clock_event::kThrottleMask) != 0;
}
inline bool clock_event_severe(std::uint64_t mask) {
  return (mask & clock_event::kSevereMask) != 0;
}

// "00000000:19:00.0" (NVML), "0000:19:00.0" (CUDA), "19:00.0", "0000:19:00" ->
// "0000:19:00.0" (lower case). Empty when the text is not a PCI address.
std::string normalize_pci_bus_id(const std::string& bus_id);
// For each CUDA bus id, the index of the NVML device with the same normalized bus id, or -1.
// (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER reorder CUDA ordinals; the bus id does not move.)
std::vector<int> match_devices_by_bus_id(const std::vector<std::string>& cuda_bus_ids,
                                         const std::vector<std::string>& nvml_bus_ids);

// nvmlGpuTopologyLevel_t value (0, 10, 20, 30, 40, 50) -> the label `nvidia-smi topo -m` uses:
// PIX (same board or one PCIe switch), PXB (several switches), PHB (host bridge), NODE (host
// bridges of one NUMA node), SYS (across NUMA nodes); "?" for other values.
std::string topology_label(int nvml_level);

// Field ids of nvmlDeviceGetFieldValues (nvml.h NVML_FI_*; ids never change once assigned).
namespace nvml_field {
inline constexpr unsigned kPerfPolicyPower = 74;     // NVML_FI_DEV_PERF_POLICY_POWER (ns)
inline constexpr unsigned kPerfPolicyThermal = 75;   // NVML_FI_DEV_PERF_POLICY_THERMAL (ns)
inline constexpr unsigned kMemoryTemp = 82;          // NVML_FI_DEV_MEMORY_TEMP (C)
inline constexpr unsigned kTotalEnergy = 83;         // NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ)
inline constexpr unsigned kNvlinkDataTx = 138;       // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (KiB)
inline constexpr unsigned kNvlinkDataRx = 139;       // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX (KiB)
inline constexpr unsigned kPowerInstant = 186;       // NVML_FI_DEV_POWER_INSTANT (mW)
inline constexpr unsigned kPcieTxBytes = 197;        // NVML_FI_DEV_PCIE_COUNT_TX_BYTES (r550+)
inline constexpr unsigned kPcieRxBytes = 198;        // NVML_FI_DEV_PCIE_COUNT_RX_BYTES (r550+)
inline constexpr unsigned kAllLinks = 0xFFFFFFFFu;   // scopeId: sum over all NVLinks
}  // namespace nvml_field

// nvmlPerfPolicyType_t values for Nvml::violation_time_s.
enum class PerfPolicy : int { power = 0, thermal = 1, sync_boost = 2, board_limit = 3 };
// nvmlClockType_t values.
enum class NvmlClock : int { graphics = 0, sm = 1, memory = 2 };

// An NVML device handle (nvmlDevice_t); empty when not found.
struct NvmlDevice {
  void* handle = nullptr;
  explicit operator bool() const { return handle != nullptr; }
};

// One value of nvmlDeviceGetFieldValues, in both representations.
struct NvmlValue {
  double as_double = 0;
  std::uint64_t as_u64 = 0;
};

struct NvmlMemoryInfo {
  std::uint64_t total = 0, free = 0, used = 0;
};

struct NvmlPowerLimits {
  std::optional<double> enforced_w, management_w, default_w, min_w, max_w;
};

struct NvmlPcieLink {
  std::optional<unsigned> gen_current, gen_max, gen_gpu_max, width_current, width_max;
};

struct NvmlNvLinks {
  int links_total = 0;  // links that answer nvmlDeviceGetNvLinkState
  int links_up = 0;
  std::vector<std::string> remote_bus_ids;  // normalized, one per active link (may repeat)
};

struct NvmlRemappedRows {
  unsigned corrected = 0, uncorrected = 0;
  bool pending = false, failure = false;
};

struct NvmlRetiredPages {
  std::optional<unsigned> single_bit, double_bit;
  std::optional<bool> pending;
};

struct NvmlProcess {
  unsigned pid = 0;
  std::uint64_t used_memory = 0;
  std::string name;
};

// One event of nvmlEventSetWait_v2 (an XID critical error): the device and the XID number.
struct NvmlXidEvent {
  NvmlDevice device;
  std::uint64_t xid = 0;
};

// An NVML event set (nvmlEventSet_t); empty when NVML cannot create one.
struct NvmlEventSetHandle {
  void* handle = nullptr;
  explicit operator bool() const { return handle != nullptr; }
};

class Nvml {
 public:
  // Opens the first path of `candidates` that dlopen accepts, resolves the symbols and calls
  // nvmlInit_v2. Returns nullptr and a one-line reason in `*error` on any failure (library
  // missing, a required symbol missing, nvmlInit failing: no driver, no permission).
  static std::shared_ptr<Nvml> load(const std::vector<std::string>& candidates,
                                    std::string* error);
  // $MGBENCH_NVML_LIBRARY alone when it is set (tests point it at a missing file), otherwise
  // libnvidia-ml.so.1, libnvidia-ml.so and the usual driver directories.
  static std::vector<std::string> default_candidates();

  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& library_path() const { return path_; }

  // System.
  std::string driver_version() const;       // "570.86.15"
  std::string nvml_version() const;         // "12.570.86.15"
  std::optional<int> cuda_driver_version() const;  // 12080
  unsigned device_count() const;
  NvmlDevice device_by_index(unsigned index) const;
  // Matches normalized bus ids over all NVML devices (any accepted bus id spelling).
  NvmlDevice device_by_pci_bus_id(const std::string& bus_id) const;

  // Static facts.
  std::string pci_bus_id(NvmlDevice device) const;  // normalized
  std::string name(NvmlDevice device) const;
  std::string uuid(NvmlDevice device) const;
  std::string serial(NvmlDevice device) const;
  std::string vbios_version(NvmlDevice device) const;
  std::optional<bool> persistence_mode(NvmlDevice device) const;
  // {current, pending}.
  std::optional<std::pair<bool, bool>> ecc_mode(NvmlDevice device) const;
  std::optional<std::pair<bool, bool>> mig_mode(NvmlDevice device) const;
  NvmlPowerLimits power_limits(NvmlDevice device) const;
  std::optional<unsigned> clock_mhz(NvmlDevice device, NvmlClock clock) const;
  std::optional<unsigned> max_clock_mhz(NvmlDevice device, NvmlClock clock) const;
  NvmlPcieLink pcie_link(NvmlDevice device) const;
  NvmlNvLinks nvlinks(NvmlDevice device) const;
  // nvmlGpuTopologyLevel_t of the pair's closest common ancestor.
  std::optional<int> topology_level(NvmlDevice a, NvmlDevice b) const;
  // nvmlDeviceGetP2PStatus(NVML_P2P_CAPS_INDEX_NVLINK) == NVML_P2P_STATUS_OK.
  std::optional<bool> nvlink_p2p(NvmlDevice a, NvmlDevice b) const;

  // Gauges.
  std::optional<unsigned> temperature_c(NvmlDevice device) const;
  std::optional<double> memory_temperature_c(NvmlDevice device) const;
  // NVML_FI_DEV_POWER_INSTANT where supported, else nvmlDeviceGetPowerUsage.
  std::optional<double> power_w(NvmlDevice device) const;
  std::optional<unsigned> utilization_pct(NvmlDevice device) const;
  std::optional<NvmlMemoryInfo> memory_info(NvmlDevice device) const;
  std::optional<std::uint64_t> clock_event_reasons(NvmlDevice device) const;

  // Counters.
  std::optional<double> energy_j(NvmlDevice device) const;  // since driver load
  std::optional<double> violation_time_s(NvmlDevice device, PerfPolicy policy) const;
  std::vector<std::optional<NvmlValue>> field_values(NvmlDevice device,
                                                     const std::vector<unsigned>& field_ids,
                                                     unsigned scope = 0) const;
  std::optional<std::uint64_t> ecc_uncorrected(NvmlDevice device, bool aggregate) const;
  std::optional<std::uint64_t> ecc_corrected(NvmlDevice device, bool aggregate) const;
  std::optional<NvmlRemappedRows> remapped_rows(NvmlDevice device) const;
  // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: the GPU temperature at which the hardware slows down.
  std::optional<unsigned> slowdown_temperature_c(NvmlDevice device) const;

  // XID critical-error events (nvmlEventSetCreate, nvmlDeviceRegisterEvents with
  // nvmlEventTypeXidCriticalError): an event set watching `devices`; empty when the driver
  // cannot (then no XID is ever seen). Every set made must go to free_event_set.
  NvmlEventSetHandle watch_xid_events(const std::vector<NvmlDevice>& devices) const;
  // Waits up to timeout_ms (nvmlEventSetWait_v2); nullopt on timeout or error.
  std::optional<NvmlXidEvent> wait_xid_event(NvmlEventSetHandle set, unsigned timeout_ms) const;
  void free_event_set(NvmlEventSetHandle set) const;
  NvmlRetiredPages retired_pages(NvmlDevice device) const;
  // Compute processes on the device; nullopt when NVML cannot list them.
  std::optional<std::vector<NvmlProcess>> compute_processes(NvmlDevice device) const;

  struct Api;  // resolved function pointers (nvml_api.hpp)

 private:
  Nvml() = default;
  void* library_ = nullptr;
  std::string path_;
  std::unique_ptr<Api> api_;
};

// The process-wide NVML, loaded on first use from Nvml::default_candidates(); nullptr when NVML
// is unavailable (the reason is in nvml_load_error()). Thread-safe.
std::shared_ptr<Nvml> nvml_instance();
std::string nvml_load_error();
// Logs "NVML unavailable (<reason>): <consequence>" once per process.
void warn_nvml_unavailable_once(const std::string& consequence);

}  // namespace mgbench
