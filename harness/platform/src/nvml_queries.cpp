// NVML queries: each answers "unknown" (nullopt, empty, zero) when the driver lacks the
// symbol or the call fails.
#include <cstring>
#include <utility>

#include "mgbench/platform/nvml.hpp"
#include "nvml_api.hpp"

namespace mgbench {

using namespace nvml_api;

namespace {

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

// fn(handle, &current, &pending) of a mode: {current == on, pending == on}.
template <typename T, typename Fn>
std::optional<std::pair<bool, bool>> query_modes(Fn fn, NvmlHandle handle, T on) {
  T current = 0, pending = 0;
  if (!fn || fn(handle, &current, &pending) != kNvmlSuccess) return std::nullopt;
  return std::make_pair(current == on, pending == on);
}

}  // namespace

std::string Nvml::driver_version() const { return read_string(api_->driver_version, 96); }

std::string Nvml::nvml_version() const { return read_string(api_->nvml_version, 96); }

std::optional<int> Nvml::cuda_driver_version() const {
  return query<int>(api_->cuda_driver_version);
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
  const auto mode = query<int>(api_->get_persistence, as_handle(device));
  if (!mode) return std::nullopt;
  return *mode == kNvmlFeatureEnabled;
}

std::optional<std::pair<bool, bool>> Nvml::ecc_mode(NvmlDevice device) const {
  return query_modes(api_->get_ecc_mode, as_handle(device), kNvmlFeatureEnabled);
}

std::optional<std::pair<bool, bool>> Nvml::mig_mode(NvmlDevice device) const {
  return query_modes(api_->get_mig_mode, as_handle(device), kNvmlMigEnable);
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
  return query<unsigned>(api_->get_clock, as_handle(device), static_cast<int>(clock));
}

std::optional<unsigned> Nvml::max_clock_mhz(NvmlDevice device, NvmlClock clock) const {
  return query<unsigned>(api_->get_max_clock, as_handle(device), static_cast<int>(clock));
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
  return query<int>(api_->get_topology_common_ancestor, as_handle(a), as_handle(b));
}

std::optional<bool> Nvml::nvlink_p2p(NvmlDevice a, NvmlDevice b) const {
  const auto status =
      query<int>(api_->get_p2p_status, as_handle(a), as_handle(b), kNvmlP2PCapsIndexNvlink);
  if (!status) return std::nullopt;
  return *status == kNvmlP2PStatusOk;
}

std::optional<unsigned> Nvml::temperature_c(NvmlDevice device) const {
  return query<unsigned>(api_->get_temperature, as_handle(device), kNvmlTemperatureGpu);
}

std::optional<double> Nvml::memory_temperature_c(NvmlDevice device) const {
  const auto values = field_values(device, {nvml_field::kMemoryTemp});
  if (!values[0] || values[0]->as_double <= 0) return std::nullopt;  // 0: not measured
  return values[0]->as_double;
}

std::optional<double> Nvml::power_w(NvmlDevice device) const {
  const auto values = field_values(device, {nvml_field::kPowerInstant});
  if (values[0]) return values[0]->as_double / 1000.0;
  const auto mw = query<unsigned>(api_->get_power_usage, as_handle(device));
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}

std::optional<unsigned> Nvml::utilization_pct(NvmlDevice device) const {
  const auto u = query<NvmlUtilization>(api_->get_utilization, as_handle(device));
  if (!u) return std::nullopt;
  return u->gpu;
}

std::optional<NvmlMemoryInfo> Nvml::memory_info(NvmlDevice device) const {
  const auto m = query<NvmlMemory>(api_->get_memory_info, as_handle(device));
  if (!m) return std::nullopt;
  return NvmlMemoryInfo{m->total, m->free, m->used};
}

std::optional<std::uint64_t> Nvml::clock_event_reasons(NvmlDevice device) const {
  const auto reasons = query<unsigned long long>(api_->get_clock_event_reasons, as_handle(device));
  if (!reasons) return std::nullopt;
  return static_cast<std::uint64_t>(*reasons);
}

std::optional<double> Nvml::energy_j(NvmlDevice device) const {
  const auto mj = query<unsigned long long>(api_->get_total_energy, as_handle(device));
  if (!mj) return std::nullopt;
  return static_cast<double>(*mj) / 1000.0;
}

std::optional<double> Nvml::violation_time_s(NvmlDevice device, PerfPolicy policy) const {
  const auto t = query<NvmlViolationTime>(api_->get_violation_status, as_handle(device),
                                          static_cast<int>(policy));
  if (!t) return std::nullopt;
  return static_cast<double>(t->violation_time) * 1e-9;
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
  const auto count = query<unsigned long long>(api_->get_total_ecc_errors, as_handle(device),
                                               kNvmlMemoryErrorUncorrected,
                                               aggregate ? kNvmlAggregateEcc : kNvmlVolatileEcc);
  if (!count) return std::nullopt;
  return static_cast<std::uint64_t>(*count);
}

std::optional<std::uint64_t> Nvml::ecc_corrected(NvmlDevice device, bool aggregate) const {
  const auto count = query<unsigned long long>(api_->get_total_ecc_errors, as_handle(device),
                                               kNvmlMemoryErrorCorrected,
                                               aggregate ? kNvmlAggregateEcc : kNvmlVolatileEcc);
  if (!count) return std::nullopt;
  return static_cast<std::uint64_t>(*count);
}

std::optional<unsigned> Nvml::slowdown_temperature_c(NvmlDevice device) const {
  return query<unsigned>(api_->get_temperature_threshold, as_handle(device),
                         kNvmlTemperatureThresholdSlowdown);
}

NvmlEventSetHandle Nvml::watch_xid_events(const std::vector<NvmlDevice>& devices) const {
  if (!api_->event_set_create || !api_->register_events || !api_->event_set_wait ||
      !api_->event_set_free) {
    return {};
  }
  NvmlEventSet set = nullptr;
  if (api_->event_set_create(&set) != kNvmlSuccess || !set) return {};
  int registered = 0;
  for (const auto& device : devices) {
    if (api_->register_events(as_handle(device), kNvmlEventXidCritical, set) == kNvmlSuccess) {
      ++registered;
    }
  }
  if (registered == 0) {
    api_->event_set_free(set);
    return {};
  }
  return NvmlEventSetHandle{set};
}

std::optional<NvmlXidEvent> Nvml::wait_xid_event(NvmlEventSetHandle set,
                                                 unsigned timeout_ms) const {
  if (!set || !api_->event_set_wait) return std::nullopt;
  NvmlEventData data{};
  if (api_->event_set_wait(static_cast<NvmlEventSet>(set.handle), &data, timeout_ms) !=
      kNvmlSuccess) {
    return std::nullopt;  // NVML_ERROR_TIMEOUT included
  }
  if ((data.event_type & kNvmlEventXidCritical) == 0) return std::nullopt;
  return NvmlXidEvent{NvmlDevice{data.device}, static_cast<std::uint64_t>(data.event_data)};
}

void Nvml::free_event_set(NvmlEventSetHandle set) const {
  if (set && api_->event_set_free) api_->event_set_free(static_cast<NvmlEventSet>(set.handle));
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

}  // namespace mgbench
