// Environment fingerprint: versions, GPUs (CUDA + NVML), topology, host, env vars, hash.
#include "mgbench/platform/fingerprint.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "mgbench/platform/nvml.hpp"

extern char** environ;

namespace mgbench {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  const auto end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::string unquote(std::string value) {
  value = trim(value);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front()) {
    value = value.substr(1, value.size() - 2);
  }
  return value;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

template <typename T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json();
}

}  // namespace

// ---- pure parsers ---------------------------------------------------------------------------

CpuInfo parse_cpuinfo(const std::string& text) {
  CpuInfo info;
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> sockets;
  std::string physical_id;
  for (const auto& line : lines_of(text)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "processor") {
      ++info.logical;
      physical_id.clear();
    } else if (key == "model name" && info.model.empty()) {
      info.model = value;
    } else if (key == "physical id") {
      physical_id = value;
      sockets.insert(value);
    } else if (key == "core id") {
      cores.emplace(physical_id, value);
    } else if (key == "flags" || key == "Features") {
      std::istringstream words(value);
      std::string word;
      while (words >> word) {
        if (word == "hypervisor") info.hypervisor = true;
      }
    }
  }
  info.physical_cores = static_cast<int>(cores.size());
  info.sockets = static_cast<int>(sockets.size());
  return info;
}

std::string parse_os_release(const std::string& text) {
  std::string pretty, name, version;
  for (const auto& line : lines_of(text)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(line.substr(0, eq));
    const std::string value = unquote(line.substr(eq + 1));
    if (key == "PRETTY_NAME") pretty = value;
    if (key == "NAME") name = value;
    if (key == "VERSION") version = value;
  }
  if (!pretty.empty()) return pretty;
  return trim(name + " " + version);
}

std::uint64_t parse_meminfo_total(const std::string& text) {
  for (const auto& line : lines_of(text)) {
    // "MemTotal:       528272276 kB" (also "Node 0 MemTotal: ..." in node meminfo)
    const auto pos = line.find("MemTotal:");
    if (pos == std::string::npos) continue;
    std::istringstream in(line.substr(pos + 9));
    std::uint64_t value = 0;
    std::string unit;
    if (!(in >> value)) return 0;
    in >> unit;
    return unit == "kB" ? value * 1024 : value;
  }
  return 0;
}

int count_cpulist(const std::string& cpulist) {
  const std::string text = trim(cpulist);
  if (text.empty()) return 0;
  int count = 0;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = trim(item);
    const auto dash = item.find('-');
    try {
      std::size_t used = 0;
      if (dash == std::string::npos) {
        std::stoi(item, &used);
        if (used != item.size()) return -1;
        count += 1;
      } else {
        const std::string lo_text = item.substr(0, dash), hi_text = item.substr(dash + 1);
        const int lo = std::stoi(lo_text, &used);
        if (used != lo_text.size()) return -1;
        const int hi = std::stoi(hi_text, &used);
        if (used != hi_text.size() || hi < lo) return -1;
        count += hi - lo + 1;
      }
    } catch (const std::exception&) {
      return -1;
    }
  }
  return count;
}

std::string virtualization_hint(bool hypervisor_flag, const std::string& dmi_vendor,
                                const std::string& dmi_product) {
  static const char* kVmProducts[] = {"KVM", "Virtual Machine", "VMware", "HVM domU",
                                      "VirtualBox", "Standard PC (Q35", "Standard PC (i440FX",
                                      "Google Compute Engine", "OpenStack"};
  bool vm_product = false;
  for (const char* p : kVmProducts) {
    if (contains(dmi_product, p)) vm_product = true;
  }
  if (!hypervisor_flag && !vm_product) return "";
  static const std::pair<const char*, const char*> kVendors[] = {
      {"Amazon EC2", "Amazon EC2"},  {"Google", "Google Compute Engine"},
      {"Microsoft", "Microsoft Hyper-V / Azure"}, {"VMware", "VMware"},
      {"QEMU", "QEMU/KVM"},          {"Xen", "Xen"},
      {"innotek", "VirtualBox"},     {"Red Hat", "Red Hat KVM"},
      {"OpenStack", "OpenStack"},    {"Oracle", "Oracle Cloud"},
      {"Alibaba", "Alibaba Cloud"},  {"Nutanix", "Nutanix AHV"}};
  for (const auto& [needle, label] : kVendors) {
    if (contains(dmi_vendor, needle) || contains(dmi_product, needle)) return label;
  }
  if (contains(dmi_product, "KVM")) return "KVM";
  if (!dmi_vendor.empty()) return dmi_vendor;
  return "unknown hypervisor";
}

// ---- host -----------------------------------------------------------------------------------

std::string read_trimmed_file(const std::string& path) { return trim(read_file(path)); }

int gpu_numa_node(const std::string& pci_bus_id) {
  const std::string id = normalize_pci_bus_id(pci_bus_id);
  if (id.empty()) return -1;
  const std::string text = trim(read_file("/sys/bus/pci/devices/" + id + "/numa_node"));
  if (text.empty()) return -1;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

std::string gpu_local_cpulist(const std::string& pci_bus_id) {
  const std::string id = normalize_pci_bus_id(pci_bus_id);
  if (id.empty()) return "";
  return trim(read_file("/sys/bus/pci/devices/" + id + "/local_cpulist"));
}

HostFacts collect_host_facts() {
  HostFacts h;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) == 0) h.hostname = name;
  h.os = parse_os_release(read_file("/etc/os-release"));
  struct utsname uts {};
  if (::uname(&uts) == 0) {
    h.kernel = uts.release;
    h.arch = uts.machine;
  }
  const CpuInfo cpu = parse_cpuinfo(read_file("/proc/cpuinfo"));
  h.cpu_model = cpu.model;
  h.logical_cpus = cpu.logical;
  if (h.logical_cpus == 0) h.logical_cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  h.physical_cores = cpu.physical_cores;
  h.sockets = cpu.sockets;
  h.hypervisor = cpu.hypervisor;
  h.memory_bytes = parse_meminfo_total(read_file("/proc/meminfo"));
  std::error_code ec;
  const std::filesystem::path nodes("/sys/devices/system/node");
  if (std::filesystem::is_directory(nodes, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(nodes, ec)) {
      const std::string dir = entry.path().filename().string();
      if (dir.rfind("node", 0) != 0 || dir.size() <= 4) continue;
      const std::string digits = dir.substr(4);
      if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) continue;
      NumaNode node;
      node.id = std::stoi(digits);
      node.cpulist = trim(read_file(entry.path().string() + "/cpulist"));
      node.memory_bytes = parse_meminfo_total(read_file(entry.path().string() + "/meminfo"));
      h.numa_nodes.push_back(node);
    }
    std::sort(h.numa_nodes.begin(), h.numa_nodes.end(),
              [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  }
  h.dmi_vendor = trim(read_file("/sys/class/dmi/id/sys_vendor"));
  h.dmi_product = trim(read_file("/sys/class/dmi/id/product_name"));
  h.virtualization = virtualization_hint(h.hypervisor, h.dmi_vendor, h.dmi_product);
  h.container = std::filesystem::exists("/.dockerenv", ec) ||
                std::filesystem::exists("/run/.containerenv", ec);
  return h;
}

Json host_facts_to_json(const HostFacts& h) {
  Json nodes = Json::array();
  for (const auto& n : h.numa_nodes) {
    nodes.push_back(Json{{"id", n.id}, {"cpulist", n.cpulist}, {"memory_bytes", n.memory_bytes}});
  }
  return Json{{"hostname", h.hostname},
              {"os", h.os},
              {"kernel", h.kernel},
              {"arch", h.arch},
              {"cpu_model", h.cpu_model},
              {"logical_cpus", h.logical_cpus},
              {"physical_cores", h.physical_cores},
              {"sockets", h.sockets},
              {"memory_bytes", h.memory_bytes},
              {"numa_nodes", std::move(nodes)},
              {"hypervisor_flag", h.hypervisor},
              {"dmi_vendor", h.dmi_vendor},
              {"dmi_product", h.dmi_product},
              {"virtualization", h.virtualization.empty() ? Json() : Json(h.virtualization)},
              {"container", h.container}};
}

std::map<std::string, std::string> selected_environment() {
  static const char* kPrefixes[] = {"CUDA_", "NCCL_", "OMPI_", "SLURM_"};
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq);
    for (const char* prefix : kPrefixes) {
      if (key.rfind(prefix, 0) == 0) vars[key] = entry.substr(eq + 1);
    }
  }
  return vars;
}

std::string nccl_nvls_setting(const char* value) {
  if (value == nullptr || std::string(value) == "2") return "auto (NCCL's default)";
  const std::string v = value;
  if (v == "0") return "off (NCCL_NVLS_ENABLE=0)";
  if (v == "1") return "on (NCCL_NVLS_ENABLE=1)";
  return "NCCL_NVLS_ENABLE=" + v;
}

std::string nccl_nvls_setting() { return nccl_nvls_setting(std::getenv("NCCL_NVLS_ENABLE")); }

std::string format_cublas_version(int code) {
  if (code <= 0) return "unknown";
  return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
}

// ---- hash -----------------------------------------------------------------------------------

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string fingerprint_hash(const Json& environment) {
  std::set<std::string> names;
  std::size_t count = 0;
  if (environment.contains("gpus") && environment["gpus"].is_array()) {
    for (const auto& g : environment["gpus"]) {
      names.insert(g.value("name", std::string()));
      ++count;
    }
  }
  if (environment.contains("gpu_count") && environment["gpu_count"].is_number_integer()) {
    count = environment["gpu_count"].get<std::size_t>();
  }
  std::string gpu;
  for (const auto& n : names) gpu += (gpu.empty() ? "" : "+") + n;
  const Json versions = environment.value("versions", Json::object());
  auto version = [&](const char* key) {
    return versions.contains(key) && versions[key].is_string() ? versions[key].get<std::string>()
                                                                : std::string();
  };
  // Without NVML the driver's version string is unknown: its CUDA version stands in.
  const std::string driver = version("driver").empty() ? "cuda-" + version("cuda_driver")
                                                       : version("driver");
  std::string canonical =
      fmt::format("gpu={};count={};driver={};cuda={};nccl={}", gpu, count, driver,
                  version("cuda_runtime"), version("nccl_loaded"));
  // Test hooks change what is measured: a run with them never shares a real run's fingerprint.
  const Json hooks = environment.value("test_hooks", Json::object());
  if (hooks.is_object() && !hooks.empty()) canonical += ";test_hooks=" + hooks.dump();
  return fmt::format("{:016x}", fnv1a64(canonical));
}

// ---- the environment ------------------------------------------------------------------------

std::vector<std::vector<std::string>> gpu_topology_labels(const DeviceInventory& inventory) {
  const auto nvml = nvml_instance();
  const std::size_t n = inventory.devices.size();
  std::vector<NvmlDevice> handles(n);
  std::vector<std::string> bus_ids(n);
  std::vector<NvmlNvLinks> links(n);
  for (std::size_t i = 0; i < n; ++i) {
    bus_ids[i] = normalize_pci_bus_id(inventory.devices[i].pci_bus_id);
    if (nvml) handles[i] = nvml->device_by_pci_bus_id(bus_ids[i]);
    if (handles[i]) links[i] = nvml->nvlinks(handles[i]);
  }
  std::vector<std::vector<std::string>> labels(n, std::vector<std::string>(n, "?"));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        labels[i][j] = "X";
        continue;
      }
      if (!handles[i] || !handles[j]) continue;
      const long direct =
          std::count(links[i].remote_bus_ids.begin(), links[i].remote_bus_ids.end(), bus_ids[j]);
      if (direct > 0) {
        labels[i][j] = fmt::format("NV{}", direct);
      } else if (nvml->nvlink_p2p(handles[i], handles[j]).value_or(false) &&
                 links[i].links_up > 0) {
        labels[i][j] = fmt::format("NV{}", links[i].links_up);  // through NVSwitch
      } else if (const auto level = nvml->topology_level(handles[i], handles[j])) {
        labels[i][j] = topology_label(*level);
      }
    }
  }
  return labels;
}

namespace {

Json versions_json(const Versions& v, const Nvml* nvml) {
  const std::optional<int> nvml_cuda = nvml ? nvml->cuda_driver_version() : std::nullopt;
  return Json{{"driver", nvml ? nvml->driver_version() : ""},
              {"nvml", nvml ? nvml->nvml_version() : ""},
              {"cuda_driver", format_cuda_version(v.driver)},
              {"cuda_driver_code", v.driver},
              {"cuda_driver_nvml", nvml_cuda ? format_cuda_version(*nvml_cuda) : ""},
              {"cuda_runtime", format_cuda_version(v.runtime)},
              {"cuda_runtime_code", v.runtime},
              {"cublas", format_cublas_version(v.cublas)},
              {"cublas_code", v.cublas},
              {"nccl_built", format_nccl_version(v.nccl_built)},
              {"nccl_built_code", v.nccl_built},
              {"nccl_loaded", format_nccl_version(v.nccl_loaded)},
              {"nccl_loaded_code", v.nccl_loaded}};
}

// The NVML facts of one GPU, added to its entry `g`.
void add_nvml_facts(const Nvml& nvml, NvmlDevice h, Json& g) {
  const NvmlNvLinks links = nvml.nvlinks(h);
  g["nvml_name"] = nvml.name(h);
  g["nvml_uuid"] = nvml.uuid(h);
  const std::string serial = nvml.serial(h);
  g["serial"] = serial.empty() ? Json() : Json(serial);
  g["vbios"] = nvml.vbios_version(h);
  g["persistence_mode"] = optional_json(nvml.persistence_mode(h));
  const auto ecc = nvml.ecc_mode(h);
  g["ecc"] = ecc ? Json{{"current", ecc->first}, {"pending", ecc->second}} : Json();
  const auto mig = nvml.mig_mode(h);
  g["mig"] = mig ? Json{{"current", mig->first}, {"pending", mig->second}} : Json();
  const auto power = nvml.power_limits(h);
  g["power_limit_w"] = Json{{"enforced", optional_json(power.enforced_w)},
                            {"management", optional_json(power.management_w)},
                            {"default", optional_json(power.default_w)},
                            {"min", optional_json(power.min_w)},
                            {"max", optional_json(power.max_w)}};
  g["clocks_mhz"] = Json{{"sm_max", optional_json(nvml.max_clock_mhz(h, NvmlClock::sm))},
                         {"mem_max", optional_json(nvml.max_clock_mhz(h, NvmlClock::memory))},
                         {"sm", optional_json(nvml.clock_mhz(h, NvmlClock::sm))},
                         {"mem", optional_json(nvml.clock_mhz(h, NvmlClock::memory))}};
  const auto pcie = nvml.pcie_link(h);
  g["pcie"] = Json{{"gen_current", optional_json(pcie.gen_current)},
                   {"gen_max", optional_json(pcie.gen_max)},
                   {"gen_gpu_max", optional_json(pcie.gen_gpu_max)},
                   {"width_current", optional_json(pcie.width_current)},
                   {"width_max", optional_json(pcie.width_max)}};
  g["nvlink"] = Json{{"links_total", links.links_total}, {"links_up", links.links_up}};
}

// Per GPU: CUDA facts, then NVML facts matched by PCI bus id.
Json gpu_json(const DeviceInfo& d, const Nvml* nvml) {
  const std::string bus = normalize_pci_bus_id(d.pci_bus_id);
  Json g{{"index", d.index},
         {"name", d.name},
         {"uuid", d.uuid},
         {"pci_bus_id", bus.empty() ? d.pci_bus_id : bus},
         {"memory_bytes", d.total_memory},
         {"sm_count", d.sm_count},
         {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
         {"numa_node", gpu_numa_node(bus)},
         {"cpu_affinity", gpu_local_cpulist(bus)}};
  const NvmlDevice h = nvml ? nvml->device_by_pci_bus_id(bus) : NvmlDevice{};
  if (h) add_nvml_facts(*nvml, h, g);
  return g;
}

// Topology as `nvidia-smi topo -m` labels it, in CUDA ordinal order.
Json topology_json(const DeviceInventory& inventory) {
  Json matrix = Json::array();
  for (const auto& row : gpu_topology_labels(inventory)) matrix.push_back(row);
  Json devices = Json::array();
  for (const auto& d : inventory.devices) devices.push_back(d.index);
  return Json{{"devices", std::move(devices)},
              {"matrix", std::move(matrix)},
              {"legend",
               Json{{"NV#", "NVLink (# links, direct or through NVSwitch)"},
                    {"PIX", "at most one PCIe switch"},
                    {"PXB", "several PCIe switches, no host bridge"},
                    {"PHB", "through a PCIe host bridge (CPU)"},
                    {"NODE", "across host bridges within one NUMA node"},
                    {"SYS", "across NUMA nodes (CPU interconnect)"}}}};
}

}  // namespace

Json collect_environment(const DeviceInventory& inventory) {
  Json env = Json::object();
  const auto nvml = nvml_instance();
  env["versions"] = versions_json(inventory.versions, nvml.get());
  env["nvml"] = Json{{"available", nvml != nullptr},
                     {"library", nvml ? nvml->library_path() : ""},
                     {"error", nvml ? "" : nvml_load_error()}};
  Json gpus = Json::array();
  for (const auto& d : inventory.devices) gpus.push_back(gpu_json(d, nvml.get()));
  env["gpu_count"] = inventory.devices.size();
  env["gpus"] = std::move(gpus);
  env["topology"] = topology_json(inventory);
  env["peer_access"] = inventory.peer_access;
  env["host"] = host_facts_to_json(collect_host_facts());
  Json vars = Json::object();
  for (const auto& [key, value] : selected_environment()) vars[key] = value;
  env["env"] = std::move(vars);
  env["nccl_nvls"] = nccl_nvls_setting();
  env["fingerprint_hash"] = fingerprint_hash(env);
  return env;
}

}  // namespace mgbench
