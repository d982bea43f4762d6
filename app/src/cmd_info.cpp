// `mgbench info [--json]`: devices, peer access, topology, versions, host and the environment
// fingerprint. `--json` prints the environment object recorded with every run.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "mgbench/core/json_text.hpp"
#include "mgbench/core/command_line.hpp"
#include "mgbench/cli/commands.hpp"
#include "mgbench/platform/devices.hpp"
#include "mgbench/core/error.hpp"
#include "mgbench/model/gpu_models.hpp"
#include "mgbench/platform/fingerprint.hpp"
#include "text_table.hpp"

namespace mgbench {

namespace {

std::string text_of(const Json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>().empty() ? "-" : value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "on" : "off";
  if (value.is_number_float()) return fmt::format("{:.0f}", value.get<double>());
  return value.dump();
}

std::string at(const Json& object, const std::vector<std::string>& path) {
  const Json* v = &object;
  for (const auto& key : path) {
    if (!v->is_object() || !v->contains(key)) return "-";
    v = &(*v)[key];
  }
  return text_of(*v);
}

// Rows of cells, columns padded to their widest cell, two spaces apart; the first row is the
// header when `header` is true.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 bool header = false) {
  std::size_t columns = 0;
  for (const auto& row : rows) columns = std::max(columns, row.size());
  std::vector<std::string> headers(columns);
  if (header && !rows.empty()) std::copy(rows[0].begin(), rows[0].end(), headers.begin());
  reports::Table table = text_table(headers, columns);
  for (std::size_t r = header ? 1 : 0; r < rows.size(); ++r) table.add_row(rows[r]);
  print_text_table(out, table, 2, header);
}

std::string gib(const Json& bytes) {
  if (!bytes.is_number()) return "-";
  return fmt::format("{:.1f} GiB", bytes.get<double>() / (1024.0 * 1024.0 * 1024.0));
}

void print_matrix(std::ostream& out, const Json& devices, const Json& matrix,
                  bool yes_no = false) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{""};
  for (const auto& d : devices) header.push_back("GPU" + text_of(d));
  rows.push_back(header);
  for (std::size_t i = 0; i < matrix.size(); ++i) {
    std::vector<std::string> row{"GPU" + (i < devices.size() ? text_of(devices[i]) : "?")};
    for (std::size_t j = 0; j < matrix[i].size(); ++j) {
      const Json& cell = matrix[i][j];
      if (yes_no) {
        row.push_back(i == j ? "X" : (cell.is_number() && cell.get<int>() ? "yes" : "no"));
      } else {
        row.push_back(text_of(cell));
      }
    }
    rows.push_back(row);
  }
  print_table(out, rows, true);
}

void print_versions(std::ostream& out, const Json& env) {
  const Json& v = env["versions"];
  out << "Versions\n";
  print_table(out, {{"driver", at(v, {"driver"})},
                    {"NVML", at(v, {"nvml"})},
                    {"CUDA driver", at(v, {"cuda_driver"})},
                    {"CUDA runtime", at(v, {"cuda_runtime"})},
                    {"cuBLAS", at(v, {"cublas"})},
                    {"NCCL loaded", at(v, {"nccl_loaded"})},
                    {"NCCL built", at(v, {"nccl_built"})}});
  if (!env["nvml"].value("available", false)) {
    out << "  (NVML unavailable: " << at(env, {"nvml", "error"}) << ")\n";
  }
}

void print_devices(std::ostream& out, const Json& env) {
  out << "\nDevices\n";
  std::vector<std::vector<std::string>> rows{{"GPU", "name", "memory", "SMs", "cc", "SM max MHz",
                                              "mem max MHz", "power limit W", "PCIe", "bus id",
                                              "NUMA"}};
  for (const auto& g : env["gpus"]) {
    const std::string pcie =
        g.contains("pcie")
            ? fmt::format("Gen{} x{} (max Gen{} x{})", at(g, {"pcie", "gen_current"}),
                          at(g, {"pcie", "width_current"}), at(g, {"pcie", "gen_max"}),
                          at(g, {"pcie", "width_max"}))
            : "-";
    const int numa = g.value("numa_node", -1);
    rows.push_back({text_of(g["index"]), at(g, {"name"}), gib(g["memory_bytes"]),
                    text_of(g["sm_count"]), at(g, {"compute_capability"}),
                    at(g, {"clocks_mhz", "sm_max"}), at(g, {"clocks_mhz", "mem_max"}),
                    at(g, {"power_limit_w", "enforced"}), pcie, at(g, {"pci_bus_id"}),
                    numa >= 0 ? std::to_string(numa) : "-"});
  }
  print_table(out, rows, true);
  for (const auto& g : env["gpus"]) {
    if (!g.contains("vbios")) continue;
    out << fmt::format("  GPU{}: UUID {}, VBIOS {}, persistence {}, ECC {}, MIG {}, NVLink {}/{} "
                       "up, CPUs {}\n",
                       text_of(g["index"]), at(g, {"uuid"}), at(g, {"vbios"}),
                       at(g, {"persistence_mode"}), at(g, {"ecc", "current"}),
                       at(g, {"mig", "current"}), at(g, {"nvlink", "links_up"}),
                       at(g, {"nvlink", "links_total"}), at(g, {"cpu_affinity"}));
  }
}

// What mgbench believes each GPU model of the machine can do (its datasheet row, with the
// documents it comes from), or that the model is unknown.
void print_gpu_models(std::ostream& out, const Json& env) {
  std::set<std::pair<std::string, std::uint64_t>> seen;
  for (const auto& g : env["gpus"]) {
    const std::string name = g.value("name", std::string());
    const auto memory = g.value("memory_bytes", std::uint64_t{0});
    if (!seen.insert({name, memory}).second) continue;
    const GpuModel* model = match_gpu_model(name, memory);
    out << "\nGPU model: " << name << " (" << gib(g["memory_bytes"]) << ")\n";
    if (model == nullptr) {
      out << "  unknown model: no datasheet row, so reports show no % of the TFLOP/s peak and "
             "no expected range; memory and link percentages use the memory's bus width x "
             "clock and the links NVML reports\n";
      continue;
    }
    out << "  matches the " << model->id << " row of mgbench's GPU model table\n";
    for (const std::string& line : gpu_model_lines(*model)) out << "  " << line << "\n";
  }
}

void print_topology(std::ostream& out, const Json& env) {
  const Json& topo = env["topology"];
  if (topo["devices"].size() > 1) {
    out << "\nPeer access (cudaDeviceCanAccessPeer)\n";
    print_matrix(out, topo["devices"], env["peer_access"], true);
    out << "\nTopology (as nvidia-smi topo -m)\n";
    print_matrix(out, topo["devices"], topo["matrix"]);
    out << "  NV# = NVLink, PIX/PXB = PCIe switch(es), PHB = host bridge, NODE = same NUMA node, "
           "SYS = across NUMA nodes\n";
  }
}

void print_host(std::ostream& out, const Json& env) {
  const Json& h = env["host"];
  out << "\nHost\n";
  const std::string virt = h["virtualization"].is_string()
                               ? "virtual machine (" + h["virtualization"].get<std::string>() + ")"
                               : "bare metal";
  print_table(out, {{"hostname", at(h, {"hostname"})},
                    {"OS", at(h, {"os"}) + ", kernel " + at(h, {"kernel"})},
                    {"CPU", fmt::format("{} ({} sockets, {} cores, {} threads)",
                                        at(h, {"cpu_model"}), at(h, {"sockets"}),
                                        at(h, {"physical_cores"}), at(h, {"logical_cpus"}))},
                    {"memory", gib(h["memory_bytes"])},
                    {"NUMA nodes", std::to_string(h["numa_nodes"].size())},
                    {"platform", virt + (h.value("container", false) ? ", in a container" : "")}});
  if (!env["env"].empty()) {
    out << "\nEnvironment\n";
    for (const auto& [key, value] : env["env"].items()) {
      out << "  " << key << "=" << text_of(value) << "\n";
    }
  }
  out << "\nFingerprint " << at(env, {"fingerprint_hash"})
      << " (GPU model, count, driver, CUDA, NCCL)\n";
}

void print_environment(std::ostream& out, const Json& env) {
  print_versions(out, env);
  print_devices(out, env);
  print_gpu_models(out, env);
  print_topology(out, env);
  print_host(out, env);
}

}  // namespace

int cmd_info(int argc, char** argv) {
  cxxopts::Options options("mgbench info",
                           "Devices, peer access, topology, versions, host and the environment "
                           "fingerprint.");
  options.add_options()("json", "print the environment fingerprint as JSON")("h,help", "this help");
  const cxxopts::ParseResult args = parse_command_line(options, argc, argv);
  if (parse_only()) return 0;
  const DeviceInventory inventory = probe_devices();  // no GPU / driver: EnvironmentError
  const Json env = collect_environment(inventory);
  if (args.count("json")) {
    std::cout << dump_json(env, 2) << "\n";
  } else {
    print_environment(std::cout, env);
  }
  return 0;
}

}  // namespace mgbench
