// Rendering of network adapters and of the per-host doctor view.
#include "mgbench/reports/nics_render.hpp"

#include <map>

#include <fmt/format.h>

#include "mgbench/reports/doctor_render.hpp"
#include "mgbench/reports/format.hpp"

namespace mgbench::reports {

namespace {

const Json& array_at(const Json& object, const char* key) {
  static const Json empty = Json::array();
  if (object.is_object() && object.contains(key) && object[key].is_array()) return object[key];
  return empty;
}

std::string joined_strings(const Json& list) {
  std::string out;
  for (const auto& v : list) {
    if (v.is_string()) out += (out.empty() ? "" : ",") + one_line(v.get<std::string>());
  }
  return out;
}

// "GPU 0: mlx5_0 PIX, mlx5_1 SYS" per GPU.
std::vector<std::string> affinity_notes(const Json& nics) {
  std::map<int, std::string> per_gpu;
  for (const auto& a : array_at(nics, "gpu_nic_affinity")) {
    const auto gpu = json_number(a, "gpu");
    if (!gpu) continue;
    std::string& line = per_gpu[static_cast<int>(*gpu)];
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", json_string(a, "nic"),
                        json_string(a, "relation"));
  }
  std::vector<std::string> notes;
  for (const auto& [gpu, line] : per_gpu) notes.push_back(fmt::format("GPU {}: {}", gpu, line));
  if (!notes.empty()) {
    notes.push_back("PIX: same PCIe switch (GPUDirect RDMA), PHB: same PCI root, NODE: same "
                    "NUMA node, SYS: across NUMA nodes");
  }
  return notes;
}

}  // namespace

Table nics_table(const Json& nics) {
  Table table;
  table.title = "network adapters";
  table.column("adapter").column("port", Align::right).column("state").column("rate")
      .column("link layer").column("interfaces");
  for (const auto& p : array_at(nics, "infiniband")) {
    const std::string state = json_string(p, "state");
    const auto port = json_number(p, "port");
    table.add_row({json_string(p, "device"), port ? format_plain(*port) : "?", state,
                   json_string(p, "rate"), json_string(p, "link_layer"),
                   joined_strings(p.value("netdevs", Json::array()))},
                  state == "ACTIVE" ? RowTone::normal : RowTone::warn);
  }
  for (const auto& i : array_at(nics, "interfaces")) {
    const auto speed = json_number(i, "speed_mbps");
    table.add_row({json_string(i, "name"), "", json_string(i, "operstate"),
                   speed ? fmt::format("{} Gb/s", format_plain(*speed / 1000.0)) : "?",
                   "Ethernet", ""});
  }
  table.notes = affinity_notes(nics);
  if (array_at(nics, "infiniband").empty()) {
    table.notes.push_back("no RDMA adapter (/sys/class/infiniband is empty): NCCL between "
                          "hosts would use TCP sockets");
  }
  return table;
}

void render_nics_text(const Json& nics, std::ostream& out, bool colour) {
  TextStyle style;
  style.colour = colour;
  render_text(nics_table(nics), out, style);
}

void render_hosts_text(const Json& hosts, std::ostream& out, bool colour) {
  for (const auto& h : array_at(hosts, "hosts")) {
    const std::string error = json_string(h, "error");
    const Json env = h.value("environment", Json::object());
    const Json versions = env.value("versions", Json::object());
    const auto count = json_number(env, "gpu_count");
    out << "host " << json_string(h, "host") << ": ";
    if (!error.empty()) {
      out << error << "\n";
    } else {
      out << fmt::format("{} GPU(s), driver {}, CUDA runtime {}, NCCL {}\n",
                         count ? format_plain(*count) : "?", json_string(versions, "driver", "?"),
                         json_string(versions, "cuda_runtime", "?"),
                         json_string(versions, "nccl_loaded", "?"));
    }
    if (env.contains("nics")) render_nics_text(env["nics"], out, colour);
    out << "\n";
  }
  render_doctor_text(hosts.value("checks", Json::object()), out, colour);
}

}  // namespace mgbench::reports
