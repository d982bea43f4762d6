// `mgbench doctor`: the pure rules that turn collected facts (doctor_facts.cpp) into checks.
#include "mgbench/platform/doctor.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/platform/fingerprint.hpp"

namespace mgbench {

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::pass: return "pass";
    case CheckStatus::warn: return "warn";
    case CheckStatus::fail: return "fail";
    case CheckStatus::skip: return "skip";
  }
  return "skip";
}

namespace {

// "GPU 3" or "GPUs 0,1,5".
std::string gpu_list(const std::vector<int>& ids) {
  std::string text = ids.size() == 1 ? "GPU " : "GPUs ";
  for (std::size_t i = 0; i < ids.size(); ++i) text += (i ? "," : "") + std::to_string(ids[i]);
  return text;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? sep : "") + items[i];
  return text;
}

std::string gib(std::uint64_t bytes) {
  return fmt::format("{:.0f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

std::string reasons_text(std::uint64_t mask) {
  const auto names = decode_clock_event_reasons(mask & ~clock_event::kGpuIdle);
  return names.empty() ? "none" : join(names, ", ");
}

DoctorCheck make(const char* name, CheckStatus status, std::string finding,
                 std::string next = "") {
  return DoctorCheck{name, status, std::move(finding), std::move(next)};
}


// The GPUs whose `flag` reads `value`; nullopt when no GPU knows the flag.
std::optional<std::vector<int>> gpus_with(const DoctorFacts& f, std::optional<bool> GpuFacts::*flag,
                                          bool value) {
  std::vector<int> ids;
  bool known = false;
  for (const auto& g : f.gpus) {
    if (!(g.*flag)) continue;
    known = true;
    if (*(g.*flag) == value) ids.push_back(g.index);
  }
  if (!known) return std::nullopt;
  return ids;
}

// ---- rules ----------------------------------------------------------------------------------

DoctorCheck check_nvml(const DoctorFacts& f) {
  if (f.nvml_available) {
    return make("nvml", CheckStatus::pass,
                fmt::format("NVML loaded (driver {})",
                            f.driver_version.empty() ? "unknown" : f.driver_version));
  }
  return make("nvml", CheckStatus::warn,
              fmt::format("NVML unavailable ({}): no telemetry; most checks skipped",
                          f.nvml_error.empty() ? "unknown reason" : f.nvml_error),
              "install the driver's libnvidia-ml.so.1 or point MGBENCH_NVML_LIBRARY at it");
}

DoctorCheck check_gpu_models(const DoctorFacts& f) {
  if (f.gpus.empty()) return make("gpu_models", CheckStatus::skip, "no GPU");
  std::map<std::string, std::vector<int>> by_name, by_memory, by_vbios;
  for (const auto& g : f.gpus) {
    by_name[g.name].push_back(g.index);
    by_memory[gib(g.memory_bytes)].push_back(g.index);
    if (g.nvml && !g.vbios.empty()) by_vbios[g.vbios].push_back(g.index);
  }
  auto describe = [](const std::map<std::string, std::vector<int>>& groups) {
    std::vector<std::string> parts;
    for (const auto& [key, ids] : groups) {
      parts.push_back(fmt::format("{} ({})", key, gpu_list(ids)));
    }
    return join(parts, "; ");
  };
  if (by_name.size() > 1) {
    return make("gpu_models", CheckStatus::fail, "mixed GPU models: " + describe(by_name),
                "select identical GPUs with --devices: scaling across mixed models is not "
                "comparable");
  }
  if (by_memory.size() > 1) {
    return make("gpu_models", CheckStatus::warn, "memory sizes differ: " + describe(by_memory),
                "check for MIG/ECC differences or mixed board variants (nvidia-smi -q)");
  }
  if (by_vbios.size() > 1) {
    return make("gpu_models", CheckStatus::warn, "VBIOS versions differ: " + describe(by_vbios),
                "update the VBIOS so every GPU runs the same firmware");
  }
  std::string finding = fmt::format("{} x {}, {}", f.gpus.size(), f.gpus.front().name,
                                    gib(f.gpus.front().memory_bytes));
  if (!by_vbios.empty()) finding += ", VBIOS " + by_vbios.begin()->first;
  return make("gpu_models", CheckStatus::pass, finding);
}

DoctorCheck check_driver_cuda(const DoctorFacts& f) {
  if (f.cuda_driver <= 0 || f.cuda_runtime <= 0) {
    return make("driver_cuda", CheckStatus::skip, "CUDA driver or runtime version unknown");
  }
  const std::string drv = format_cuda_version(f.cuda_driver);
  const std::string rt = format_cuda_version(f.cuda_runtime);
  if (f.cuda_driver >= f.cuda_runtime) {
    return make("driver_cuda", CheckStatus::pass,
                fmt::format("driver supports CUDA {}, runtime is CUDA {}", drv, rt));
  }
  if (f.cuda_driver / 1000 < f.cuda_runtime / 1000) {
    return make("driver_cuda", CheckStatus::fail,
                fmt::format("driver supports CUDA {} only, mgbench uses CUDA {}", drv, rt),
                fmt::format("install an NVIDIA driver that supports CUDA {}", rt));
  }
  return make("driver_cuda", CheckStatus::warn,
              fmt::format("driver supports CUDA {}, runtime is CUDA {}: minor-version "
                          "compatibility only",
                          drv, rt),
              fmt::format("upgrade the driver to one that supports CUDA {}", rt));
}

DoctorCheck check_nccl(const DoctorFacts& f) {
  if (f.nccl_loaded <= 0 || f.nccl_built <= 0) {
    return make("nccl_version", CheckStatus::skip, "NCCL version unknown");
  }
  const std::string built = format_nccl_version(f.nccl_built);
  const std::string loaded = format_nccl_version(f.nccl_loaded);
  if (f.nccl_built == f.nccl_loaded) {
    return make("nccl_version", CheckStatus::pass, "NCCL " + loaded + " (loaded = built)");
  }
  return make("nccl_version", CheckStatus::warn,
              fmt::format("NCCL {} loaded, mgbench was built with {}", loaded, built),
              "check LD_LIBRARY_PATH / the installed libnccl, or rebuild mgbench against it");
}

std::string link_text(std::optional<unsigned> gen, std::optional<unsigned> width) {
  return fmt::format("Gen{} x{}", gen ? std::to_string(*gen) : "?",
                     width ? std::to_string(*width) : "?");
}

DoctorCheck check_pcie(const DoctorFacts& f) {
  std::vector<std::string> degraded, platform_limited;
  bool any = false, all_max_idle = true;
  for (const auto& g : f.gpus) {
    if (!g.nvml || !g.pcie_gen_max || !g.pcie_width_max) continue;
    any = true;
    if (g.pcie_gen_gpu_max && *g.pcie_gen_gpu_max > *g.pcie_gen_max) {
      platform_limited.push_back(fmt::format("GPU {} supports Gen{}, slot/platform max Gen{}",
                                             g.index, *g.pcie_gen_gpu_max, *g.pcie_gen_max));
    }
    const bool idle_at_max = g.pcie_gen_idle && g.pcie_width_idle &&
                             *g.pcie_gen_idle >= *g.pcie_gen_max &&
                             *g.pcie_width_idle >= *g.pcie_width_max;
    if (!idle_at_max) all_max_idle = false;
    if (!f.load_ran) continue;
    const auto gen = g.pcie_gen_load, width = g.pcie_width_load;
    if (!gen || !width || *gen < *g.pcie_gen_max || *width < *g.pcie_width_max) {
      degraded.push_back(fmt::format("GPU {} at {} under load, max {}", g.index,
                                     link_text(gen, width),
                                     link_text(g.pcie_gen_max, g.pcie_width_max)));
    }
  }
  if (!any) return make("pcie_link", CheckStatus::skip, "PCIe link state not available (NVML)");
  if (!f.load_ran && !all_max_idle) {
    return make("pcie_link", CheckStatus::skip,
                "not measured under load (links downshift at idle)" +
                    (f.load_error.empty() ? std::string() : ": " + f.load_error),
                "run `mgbench doctor` without --no-load");
  }
  if (!degraded.empty()) {
    return make("pcie_link", CheckStatus::warn, join(degraded, "; "),
                "reseat the GPU / riser, check the slot wiring and BIOS PCIe speed settings");
  }
  if (!platform_limited.empty()) {
    return make("pcie_link", CheckStatus::warn, join(platform_limited, "; "),
                "the slot or platform caps the link: host<->GPU copies run below the GPU's "
                "capability");
  }
  const auto& g0 = f.gpus.front();
  return make("pcie_link", CheckStatus::pass,
              fmt::format("all GPUs at their maximum PCIe link ({}){}",
                          link_text(g0.pcie_gen_max, g0.pcie_width_max),
                          f.load_ran ? " under load" : " even at idle"));
}

DoctorCheck check_peer_access(const DoctorFacts& f) {
  if (f.gpus.size() < 2) return make("peer_access", CheckStatus::skip, "single GPU");
  std::vector<std::string> missing;
  for (const auto& p : f.pairs) {
    if (!p.peer_access) missing.push_back(fmt::format("{}-{} ({})", p.a, p.b, p.topology));
  }
  if (missing.empty()) {
    return make("peer_access", CheckStatus::pass,
                f.pairs.size() == 1
                    ? fmt::format("peer access between GPU {} and GPU {}", f.pairs[0].a,
                                  f.pairs[0].b)
                    : fmt::format("peer access between all {} GPU pairs", f.pairs.size()));
  }
  return make("peer_access", CheckStatus::warn,
              "no peer access between GPUs " + join(missing, ", "),
              "NCCL will stage through host memory; check the IOMMU/ACS settings (see p2p_path) "
              "and the platform's P2P support");
}

DoctorCheck check_nvlink(const DoctorFacts& f) {
  if (!f.nvml_available) return make("nvlink", CheckStatus::skip, "NVML unavailable");
  std::vector<std::string> down;
  int with_links = 0;
  for (const auto& g : f.gpus) {
    if (!g.nvml || g.nvlink_total == 0) continue;
    ++with_links;
    if (g.nvlink_up < g.nvlink_total) {
      down.push_back(fmt::format("GPU {}: {} of {} links up", g.index, g.nvlink_up,
                                 g.nvlink_total));
    }
  }
  if (!down.empty()) {
    return make("nvlink", CheckStatus::warn, join(down, "; "),
                "check `nvidia-smi nvlink -s` and, on NVSwitch systems, nvidia-fabricmanager");
  }
  std::set<std::string> labels;
  for (const auto& p : f.pairs) {
    if (p.topology.rfind("NV", 0) == 0) labels.insert(p.topology);
  }
  if (with_links == 0) {
    return make("nvlink", CheckStatus::pass, "no NVLink: GPU-to-GPU traffic uses PCIe");
  }
  if (labels.empty() && f.gpus.size() > 1) {
    return make("nvlink", CheckStatus::warn,
                "NVLinks are up but no GPU pair reaches another over NVLink",
                "on NVSwitch systems start nvidia-fabricmanager; check `nvidia-smi topo -m`");
  }
  return make("nvlink", CheckStatus::pass,
              fmt::format("all NVLinks up on {} GPU(s){}", with_links,
                          labels.empty()
                              ? ""
                              : " (" + join(std::vector<std::string>(labels.begin(), labels.end()),
                                            ", ") +
                                    ")"));
}

DoctorCheck check_p2p_path(const DoctorFacts& f) {
  if (f.gpus.size() < 2) return make("p2p_path", CheckStatus::skip, "single GPU");
  std::vector<std::string> via_cpu;
  bool known = false;
  for (const auto& p : f.pairs) {
    if (p.topology.empty() || p.topology == "?") continue;
    known = true;
    if (p.peer_access &&
        (p.topology == "PHB" || p.topology == "NODE" || p.topology == "SYS")) {
      via_cpu.push_back(fmt::format("{}-{} ({})", p.a, p.b, p.topology));
    }
  }
  if (!known) return make("p2p_path", CheckStatus::skip, "topology unknown (NVML)");
  if (via_cpu.empty()) {
    return make("p2p_path", CheckStatus::pass,
                "P2P between GPUs stays on NVLink or PCIe switches (never through the CPU)");
  }
  return make("p2p_path", CheckStatus::warn,
              "P2P routed through the CPU for GPU pairs " + join(via_cpu, ", "),
              "expect lower P2P bandwidth; if P2P is slow or hangs, PCIe ACS may redirect peer "
              "traffic to the root complex and the IOMMU may translate it: disable ACS on the "
              "switches and use iommu=pt (or NCCL_P2P_DISABLE=1 as a workaround)");
}

DoctorCheck check_persistence(const DoctorFacts& f) {
  const auto off = gpus_with(f, &GpuFacts::persistence_mode, false);
  if (!off) return make("persistence_mode", CheckStatus::skip, "persistence mode unknown");
  if (off->empty()) return make("persistence_mode", CheckStatus::pass, "persistence mode on");
  return make("persistence_mode", CheckStatus::warn,
              "persistence mode off on " + gpu_list(*off) +
                  ": the driver re-initialises the GPU for each process",
              "sudo nvidia-smi -pm 1 (or enable nvidia-persistenced)");
}

DoctorCheck check_power_limit(const DoctorFacts& f) {
  std::vector<std::string> capped, next;
  bool known = false;
  std::optional<double> common;
  for (const auto& g : f.gpus) {
    if (!g.power_limit_w || !g.default_power_limit_w) continue;
    known = true;
    common = *g.default_power_limit_w;
    if (*g.power_limit_w < 0.99 * *g.default_power_limit_w) {
      capped.push_back(fmt::format("GPU {} cap {:.0f} W of {:.0f} W default", g.index,
                                   *g.power_limit_w, *g.default_power_limit_w));
      // nvidia-smi numbers GPUs its own way (PCI order, not CUDA's fastest-first): name
      // the GPU by its PCI bus id, which both agree on.
      const std::string id = g.pci_bus_id.empty() ? std::to_string(g.index) : g.pci_bus_id;
      next.push_back(fmt::format("sudo nvidia-smi -i {} -pl {:.0f}", id,
                                 *g.default_power_limit_w));
    }
  }
  if (!known) return make("power_limit", CheckStatus::skip, "power limits unknown");
  if (capped.empty()) {
    return make("power_limit", CheckStatus::pass,
                fmt::format("power limit at default ({:.0f} W)", common.value_or(0)));
  }
  return make("power_limit", CheckStatus::warn,
              join(capped, "; ") + ": expect lower GEMM throughput", join(next, "; "));
}

DoctorCheck check_clock_events(const DoctorFacts& f, bool load) {
  const char* name = load ? "clock_events_load" : "clock_events_idle";
  if (load && !f.load_ran) {
    if (!f.load_error.empty()) {
      return make(name, CheckStatus::warn, "the 5 s load could not run: " + f.load_error,
                  "check the CUDA error above; run `mgbench doctor` again");
    }
    return make(name, CheckStatus::skip, "no load run (--no-load)",
                "run `mgbench doctor` without --no-load");
  }
  std::vector<std::string> severe, capped;
  bool known = false;
  std::optional<double> max_temp;
  for (const auto& g : f.gpus) {
    const auto& reasons = load ? g.reasons_load : g.reasons_idle;
    if (!reasons) continue;
    known = true;
    if (g.max_temp_load_c) max_temp = std::max(max_temp.value_or(0), *g.max_temp_load_c);
    if (clock_event_severe(*reasons)) {
      severe.push_back(fmt::format("GPU {}: {}{}", g.index,
                                   reasons_text(*reasons & clock_event::kSevereMask),
                                   load && g.max_temp_load_c
                                       ? fmt::format(" (max {:.0f} C)", *g.max_temp_load_c)
                                       : ""));
    } else if (load && (*reasons & clock_event::kSwPowerCap)) {
      capped.push_back(std::to_string(g.index));
    }
  }
  const char* when = load ? "under load" : "at idle";
  if (!known) return make(name, CheckStatus::skip, "clock-event reasons unknown (NVML)");
  if (!severe.empty()) {
    return make(name, CheckStatus::fail,
                fmt::format("thermal / power-brake slowdown {}: {}", when, join(severe, "; ")),
                "check cooling (airflow, fans, inlet temperature) and power delivery; see "
                "`nvidia-smi -q -d PERFORMANCE`");
  }
  std::string finding = fmt::format("no thermal or power-brake slowdown {}", when);
  if (max_temp) finding += fmt::format(" (max {:.0f} C)", *max_temp);
  if (!capped.empty()) {
    finding += fmt::format("; power cap reached on GPU {} (normal for dense GEMM at the "
                           "power limit)",
                           join(capped, ","));
  }
  return make(name, CheckStatus::pass, finding);
}

DoctorCheck check_ecc(const DoctorFacts& f) {
  std::vector<std::string> errors, history;
  std::vector<int> off;
  bool known = false;
  for (const auto& g : f.gpus) {
    if (g.ecc_enabled) {
      known = true;
      if (!*g.ecc_enabled) off.push_back(g.index);
    }
    if (g.ecc_uncorrected_volatile) {
      known = true;
      if (*g.ecc_uncorrected_volatile > 0) {
        errors.push_back(fmt::format("GPU {}: {} uncorrected since driver load", g.index,
                                     *g.ecc_uncorrected_volatile));
      }
    }
    if (g.ecc_uncorrected_aggregate && *g.ecc_uncorrected_aggregate > 0) {
      history.push_back(fmt::format("GPU {}: {} uncorrected in its lifetime", g.index,
                                    *g.ecc_uncorrected_aggregate));
    }
  }
  if (!known) return make("ecc_errors", CheckStatus::skip, "ECC state unknown");
  if (!errors.empty()) {
    return make("ecc_errors", CheckStatus::fail, "uncorrected ECC errors: " + join(errors, "; "),
                "drain the GPU, reset it (nvidia-smi -r) and check `nvidia-smi -q -d ECC`; "
                "replace it if errors return");
  }
  if (!off.empty()) {
    return make("ecc_errors", CheckStatus::warn,
                "ECC off on " + gpu_list(off) + ": not comparable with ECC-on runs",
                "sudo nvidia-smi -e 1, then reset the GPU or reboot");
  }
  if (!history.empty()) {
    return make("ecc_errors", CheckStatus::warn, join(history, "; "),
                "watch `nvidia-smi -q -d ECC,ROW_REMAPPER`; contact the provider if it grows");
  }
  return make("ecc_errors", CheckStatus::pass, "no uncorrected ECC errors");
}

DoctorCheck check_row_remapping(const DoctorFacts& f) {
  std::vector<std::string> bad, repaired;
  bool known = false, failure = false;
  for (const auto& g : f.gpus) {
    if (g.remapped_rows) {
      known = true;
      const auto& r = *g.remapped_rows;
      if (r.failure) {
        bad.push_back(fmt::format("GPU {}: row remapping failed", g.index));
        failure = true;
      } else if (r.pending) {
        bad.push_back(fmt::format("GPU {}: row remap pending", g.index));
      } else if (r.uncorrected > 0) {
        repaired.push_back(fmt::format("GPU {}: {} rows remapped for uncorrectable errors",
                                       g.index, r.uncorrected));
      }
    }
    const auto& p = g.retired_pages;
    if (p.pending || p.double_bit) known = true;
    if (p.pending.value_or(false)) {
      bad.push_back(fmt::format("GPU {}: page retirement pending", g.index));
    } else if (p.double_bit.value_or(0) > 0) {
      repaired.push_back(fmt::format("GPU {}: {} pages retired (double-bit)", g.index,
                                     *p.double_bit));
    }
  }
  if (!known) return make("row_remapping", CheckStatus::skip, "row remapping state unknown");
  if (!bad.empty()) {
    return make("row_remapping", CheckStatus::fail, join(bad, "; "),
                failure ? "the GPU ran out of spare rows: have it replaced (RMA)"
                        : "reset the GPU (nvidia-smi -r) or reboot to apply the pending remap");
  }
  if (!repaired.empty()) {
    return make("row_remapping", CheckStatus::warn, join(repaired, "; "),
                "repaired memory is usable; watch the counts for growth");
  }
  return make("row_remapping", CheckStatus::pass, "no pending or failed row remaps");
}

DoctorCheck check_mig(const DoctorFacts& f) {
  const auto on = gpus_with(f, &GpuFacts::mig_enabled, true);
  if (!on) return make("mig", CheckStatus::skip, "MIG mode unknown or not supported");
  if (on->empty()) return make("mig", CheckStatus::pass, "MIG disabled");
  return make("mig", CheckStatus::warn,
              "MIG enabled on " + gpu_list(*on) + ": CUDA sees GPU slices, not whole GPUs",
              "sudo nvidia-smi -i <gpu> -mig 0 (then reset the GPU) to benchmark whole GPUs");
}

DoctorCheck check_processes(const DoctorFacts& f) {
  std::vector<std::string> busy;
  bool known = false;
  for (const auto& g : f.gpus) {
    if (!g.other_processes) continue;
    known = true;
    for (const auto& p : *g.other_processes) {
      busy.push_back(fmt::format("GPU {}: pid {} ({}{})", g.index, p.pid,
                                 p.name.empty() ? "?" : p.name,
                                 p.used_memory ? ", " + gib(p.used_memory) : ""));
    }
  }
  if (!known) return make("other_processes", CheckStatus::skip, "process list unavailable");
  if (busy.empty()) return make("other_processes", CheckStatus::pass, "no other compute process");
  return make("other_processes", CheckStatus::warn, "other processes: " + join(busy, "; "),
              "stop them: they share SMs, memory bandwidth, power and the PCIe link");
}

DoctorCheck check_visible_devices(const DoctorFacts& f) {
  const bool order_by_bus = f.cuda_device_order && *f.cuda_device_order == "PCI_BUS_ID";
  const std::string order_note =
      order_by_bus ? "CUDA_DEVICE_ORDER=PCI_BUS_ID"
                   : "CUDA ordinals may differ from nvidia-smi's (CUDA_DEVICE_ORDER is not "
                     "PCI_BUS_ID); mgbench matches GPUs by PCI bus id";
  if (f.cuda_visible_devices) {
    std::string count = f.nvml_device_count >= 0
                            ? fmt::format("CUDA sees {} of {} GPUs", f.gpus.size(),
                                          f.nvml_device_count)
                            : fmt::format("CUDA sees {} GPUs", f.gpus.size());
    return make("visible_devices", CheckStatus::warn,
                fmt::format("CUDA_VISIBLE_DEVICES={} ({}); {}", *f.cuda_visible_devices, count,
                            order_note),
                "unset CUDA_VISIBLE_DEVICES to benchmark every GPU (or keep it on purpose)");
  }
  return make("visible_devices", CheckStatus::pass,
              fmt::format("CUDA_VISIBLE_DEVICES unset ({} GPUs visible); {}", f.gpus.size(),
                          order_note));
}

DoctorCheck check_numa(const DoctorFacts& f) {
  if (f.gpus.empty()) return make("numa_affinity", CheckStatus::skip, "no GPU");
  std::map<int, std::vector<int>> by_node;
  std::vector<int> unknown;
  for (const auto& g : f.gpus) {
    if (g.numa_node < 0) {
      unknown.push_back(g.index);
    } else {
      by_node[g.numa_node].push_back(g.index);
    }
  }
  if (f.host_numa_nodes <= 1) {
    return make("numa_affinity", CheckStatus::pass,
                "one NUMA node: every GPU is equally close to every CPU");
  }
  std::vector<std::string> parts;
  for (const auto& [node, ids] : by_node) {
    std::string cpus;
    for (const auto& g : f.gpus) {
      if (g.numa_node == node && !g.cpu_affinity.empty()) cpus = g.cpu_affinity;
    }
    parts.push_back(fmt::format("{} on node {}{}", gpu_list(ids), node,
                                cpus.empty() ? "" : " (CPUs " + cpus + ")"));
  }
  if (!unknown.empty()) {
    return make("numa_affinity", CheckStatus::warn,
                fmt::format("{} NUMA nodes; NUMA node of {} unknown{}", f.host_numa_nodes,
                            gpu_list(unknown), parts.empty() ? "" : "; " + join(parts, "; ")),
                "check the BIOS (ACPI SRAT/_PXM) or the VM's NUMA topology; pin host threads "
                "with numactl --cpunodebind");
  }
  return make("numa_affinity", CheckStatus::pass,
              fmt::format("{} NUMA nodes: {}", f.host_numa_nodes, join(parts, "; ")),
              "keep each GPU's host thread and pinned buffers on its NUMA node "
              "(numactl --cpunodebind / --membind)");
}

DoctorCheck check_host_memory(const DoctorFacts& f) {
  if (f.host_memory_bytes == 0 || f.gpus.empty()) {
    return make("host_memory", CheckStatus::skip, "host memory unknown");
  }
  std::uint64_t gpu_total = 0;
  for (const auto& g : f.gpus) gpu_total += g.memory_bytes;
  const double ratio = static_cast<double>(f.host_memory_bytes) / static_cast<double>(gpu_total);
  const std::string finding = fmt::format("host {} for {} of GPU memory ({:.1f}x)",
                                          gib(f.host_memory_bytes), gib(gpu_total), ratio);
  if (ratio < 1.0) {
    return make("host_memory", CheckStatus::warn,
                finding + ": little headroom for pinned staging buffers",
                "keep pinned buffers small, or add host memory (2x GPU memory is a common rule)");
  }
  return make("host_memory", CheckStatus::pass, finding);
}

DoctorCheck check_virtualization(const DoctorFacts& f) {
  std::string container = f.container ? " inside a container" : "";
  if (f.virtualization.empty()) {
    return make("virtualization", CheckStatus::pass, "bare metal (no hypervisor)" + container);
  }
  return make("virtualization", CheckStatus::pass,
              fmt::format("virtual machine ({}){}: PCIe topology, P2P and clocks may be "
                          "virtualised; some NVML counters report NOT_SUPPORTED",
                          f.virtualization, container),
              "compare only with runs on the same instance type");
}

}  // namespace

std::vector<DoctorCheck> evaluate_doctor(const DoctorFacts& facts) {
  return {check_nvml(facts),
          check_gpu_models(facts),
          check_driver_cuda(facts),
          check_nccl(facts),
          check_pcie(facts),
          check_peer_access(facts),
          check_nvlink(facts),
          check_p2p_path(facts),
          check_persistence(facts),
          check_power_limit(facts),
          check_clock_events(facts, false),
          check_clock_events(facts, true),
          check_ecc(facts),
          check_row_remapping(facts),
          check_mig(facts),
          check_processes(facts),
          check_visible_devices(facts),
          check_numa(facts),
          check_host_memory(facts),
          check_virtualization(facts)};
}

bool doctor_failed(const std::vector<DoctorCheck>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const DoctorCheck& c) { return c.status == CheckStatus::fail; });
}

Json doctor_to_json(const std::vector<DoctorCheck>& checks) {
  Json list = Json::array();
  std::map<std::string, int> counts{{"pass", 0}, {"warn", 0}, {"fail", 0}, {"skip", 0}};
  for (const auto& c : checks) {
    list.push_back(Json{{"name", c.name},
                        {"status", to_string(c.status)},
                        {"finding", c.finding},
                        {"next_step", c.next_step}});
    ++counts[to_string(c.status)];
  }
  return Json{{"checks", std::move(list)}, {"summary", counts}, {"ok", !doctor_failed(checks)}};
}

}  // namespace mgbench
