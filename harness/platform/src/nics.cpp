// Network adapters from sysfs and their PCI distance to the GPUs.
#include "mgbench/platform/nics.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "mgbench/platform/fingerprint.hpp"
#include "mgbench/platform/nvml.hpp"

namespace mgbench {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> sorted_entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

int parse_int_or(const std::string& text, int fallback) {
  try {
    std::size_t used = 0;
    const int value = std::stoi(text, &used);
    return used == text.size() ? value : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

// The path of a sysfs device link below <sysfs_root>/devices, "" when it does not resolve there.
std::string device_path_below_root(const std::string& sysfs_root, const fs::path& link) {
  std::error_code ec;
  const fs::path target = fs::canonical(link, ec);
  if (ec) return "";
  const fs::path devices = fs::canonical(fs::path(sysfs_root) / "devices", ec);
  if (ec) return "";
  const fs::path relative = target.lexically_relative(devices);
  const std::string text = relative.generic_string();
  if (text.empty() || text.rfind("..", 0) == 0) return "";
  return text;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : fs::path(path)) parts.push_back(part.string());
  return parts;
}

// "4: ACTIVE" -> "ACTIVE".
std::string after_colon(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return text;
  const auto start = text.find_first_not_of(' ', colon + 1);
  return start == std::string::npos ? "" : text.substr(start);
}

void read_ib_device(const std::string& sysfs_root, const std::string& device,
                    std::vector<IbPort>& out) {
  const fs::path base = fs::path(sysfs_root) / "class" / "infiniband" / device;
  const std::string pci_path = device_path_below_root(sysfs_root, base / "device");
  const int numa = parse_int_or(read_trimmed_file((base / "device" / "numa_node").string()), -1);
  const std::vector<std::string> netdevs = sorted_entries(base / "device" / "net");
  for (const auto& port : sorted_entries(base / "ports")) {
    const fs::path p = base / "ports" / port;
    IbPort ib;
    ib.device = device;
    ib.port = parse_int_or(port, 0);
    ib.state = after_colon(read_trimmed_file((p / "state").string()));
    ib.rate = read_trimmed_file((p / "rate").string());
    ib.link_layer = read_trimmed_file((p / "link_layer").string());
    ib.netdevs = netdevs;
    ib.pci_path = pci_path;
    ib.numa_node = numa;
    out.push_back(std::move(ib));
  }
}

}  // namespace

NicInventory read_nics(const std::string& sysfs_root) {
  NicInventory nics;
  for (const auto& device : sorted_entries(fs::path(sysfs_root) / "class" / "infiniband")) {
    read_ib_device(sysfs_root, device, nics.ib_ports);
  }
  const fs::path net = fs::path(sysfs_root) / "class" / "net";
  for (const auto& name : sorted_entries(net)) {
    std::error_code ec;
    if (!fs::exists(net / name / "device", ec)) continue;  // lo, bridges, veth, ...
    NetInterface iface;
    iface.name = name;
    const int speed = parse_int_or(read_trimmed_file((net / name / "speed").string()), -1);
    if (speed > 0) iface.speed_mbps = speed;
    iface.operstate = read_trimmed_file((net / name / "operstate").string());
    nics.interfaces.push_back(std::move(iface));
  }
  return nics;
}

std::string pci_device_path(const std::string& sysfs_root, const std::string& pci_bus_id) {
  const std::string id = normalize_pci_bus_id(pci_bus_id);
  if (id.empty()) return "";
  return device_path_below_root(sysfs_root, fs::path(sysfs_root) / "bus" / "pci" / "devices" / id);
}

std::string pci_affinity(const std::string& path_a, int numa_a, const std::string& path_b,
                         int numa_b) {
  if (path_a.empty() || path_b.empty()) return "?";
  const auto a = split_path(path_a);
  const auto b = split_path(path_b);
  std::size_t shared = 0;
  // The last component is the device itself, never a bridge the two share.
  while (shared + 1 < a.size() && shared + 1 < b.size() && a[shared] == b[shared]) ++shared;
  if (shared >= 2) return "PIX";  // the root complex and at least one bridge below it
  if (shared == 1) return "PHB";
  if (numa_a < 0 || numa_b < 0) return "?";
  return numa_a == numa_b ? "NODE" : "SYS";
}

std::vector<GpuNicAffinity> gpu_nic_affinity(const std::vector<std::pair<int, std::string>>& gpus,
                                             const NicInventory& nics,
                                             const std::string& sysfs_root) {
  std::vector<GpuNicAffinity> out;
  for (const auto& [index, bus_id] : gpus) {
    const std::string gpu_path = pci_device_path(sysfs_root, bus_id);
    const std::string id = normalize_pci_bus_id(bus_id);
    const int gpu_numa = parse_int_or(
        read_trimmed_file(sysfs_root + "/bus/pci/devices/" + id + "/numa_node"), -1);
    std::string previous;
    for (const auto& port : nics.ib_ports) {
      if (port.device == previous) continue;  // one entry per device, not per port
      previous = port.device;
      out.push_back({index, port.device,
                     pci_affinity(gpu_path, gpu_numa, port.pci_path, port.numa_node)});
    }
  }
  return out;
}

Json nics_to_json(const NicInventory& nics, const std::vector<GpuNicAffinity>& affinity) {
  Json ib = Json::array();
  for (const auto& p : nics.ib_ports) {
    ib.push_back(Json{{"device", p.device}, {"port", p.port}, {"state", p.state},
                      {"rate", p.rate}, {"link_layer", p.link_layer}, {"netdevs", p.netdevs},
                      {"numa_node", p.numa_node}});
  }
  Json interfaces = Json::array();
  for (const auto& i : nics.interfaces) {
    interfaces.push_back(Json{{"name", i.name},
                              {"speed_mbps", i.speed_mbps ? Json(*i.speed_mbps) : Json()},
                              {"operstate", i.operstate}});
  }
  Json links = Json::array();
  for (const auto& a : affinity) {
    links.push_back(Json{{"gpu", a.gpu}, {"nic", a.nic}, {"relation", a.relation}});
  }
  return Json{{"infiniband", std::move(ib)},
              {"interfaces", std::move(interfaces)},
              {"gpu_nic_affinity", std::move(links)}};
}

}  // namespace mgbench
