// GPU model matching, lookups and their text (see gpu_models.hpp; the data is in
// gpu_models_data.cpp).
#include "mgbench/model/gpu_models.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace mgbench {

GpuModel::GpuModel(std::string model_id, std::vector<std::string> model_names, double gb)
    : id(std::move(model_id)), names(std::move(model_names)), memory_gb(gb) {}
GpuModel& GpuModel::peaks(std::map<std::string, double> dense_tflops) {
  tflops = std::move(dense_tflops);
  return *this;
}
GpuModel& GpuModel::memory_bandwidth(double GBps) {
  memory_GBps = GBps;
  return *this;
}
GpuModel& GpuModel::pcie(unsigned gen, unsigned width) {
  pcie_gen = gen;
  pcie_width = width;
  return *this;
}
GpuModel& GpuModel::c2c_host() {
  host_c2c = true;
  return *this;
}
GpuModel& GpuModel::nvlink(int gen, int links, double GBps_per_direction) {
  nvlink_gen = gen;
  nvlink_links = links;
  nvlink_GBps = GBps_per_direction;
  return *this;
}
GpuModel& GpuModel::tdp(double watts) {
  tdp_w = watts;
  return *this;
}
GpuModel& GpuModel::bound() {
  peaks_bound = true;
  return *this;
}
GpuModel& GpuModel::from(std::string documents) {
  source = std::move(documents);
  return *this;
}

namespace {

// Lower case, trimmed, without a leading "nvidia " or "tesla " (older drivers name the same
// board "A100-SXM4-40GB", newer ones "NVIDIA A100-SXM4-40GB").
std::string normalized(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto first = name.find_first_not_of(" \t");
  const auto last = name.find_last_not_of(" \t");
  name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
  for (const char* prefix : {"nvidia ", "tesla "}) {
    const std::string p(prefix);
    if (name.compare(0, p.size(), p) == 0) name = name.substr(p.size());
  }
  return name;
}

bool has_name(const GpuModel& m, const std::string& wanted) {
  return std::any_of(m.names.begin(), m.names.end(),
                     [&](const std::string& n) { return normalized(n) == wanted; });
}

bool memory_fits(const GpuModel& m, std::uint64_t memory_bytes) {
  const double gib = static_cast<double>(memory_bytes) / (1024.0 * 1024.0 * 1024.0);
  return std::fabs(gib - m.memory_gb) <= 0.12 * m.memory_gb;
}

std::string fixed(double v) { return fmt::format("{:g}", v); }

}  // namespace

const GpuModel* match_gpu_model(const std::string& name, std::uint64_t memory_bytes) {
  const std::string wanted = normalized(name);
  if (wanted.empty()) return nullptr;
  std::vector<const GpuModel*> named;
  for (const GpuModel& m : gpu_models()) {
    if (has_name(m, wanted)) named.push_back(&m);
  }
  if (memory_bytes == 0) return named.size() == 1 ? named.front() : nullptr;
  for (const GpuModel* m : named) {
    if (memory_fits(*m, memory_bytes)) return m;
  }
  return nullptr;
}

double model_tflops(const GpuModel& model, const std::string& dtype) {
  const std::string key = dtype == "e4m3" || dtype == "e5m2" ? "fp8" : dtype;
  const auto it = model.tflops.find(key);
  return it == model.tflops.end() ? 0.0 : it->second;
}

const ExpectedRange* find_expected_range(const GpuModel& model, const std::string& workload,
                                         const std::string& metric, const Params& params,
                                         int gpus) {
  for (const ExpectedRange& r : expected_ranges()) {
    if (r.model != model.id || r.workload != workload || r.metric != metric) continue;
    if (r.gpus != 0 && r.gpus != gpus) continue;
    bool ok = true;
    for (const auto& [name, value] : r.params) {
      const ParamValue* v = params.find(name);
      ok = ok && v != nullptr && *v == value;
    }
    for (const auto& [name, minimum] : r.at_least) {
      const ParamValue* v = params.find(name);
      ok = ok && v != nullptr && v->is_number() && v->number() >= minimum;
    }
    if (ok) return &r;
  }
  return nullptr;
}

Json gpu_model_json(const GpuModel& m) {
  Json j{{"id", m.id}, {"names", m.names}, {"memory_gb", m.memory_gb},
         {"dense_tflops", m.tflops}, {"source", m.source}};
  if (m.memory_GBps > 0) j["memory_GBps"] = m.memory_GBps;
  if (m.host_c2c) j["host_link"] = "NVLink-C2C";
  if (m.pcie_gen > 0) j["pcie"] = Json{{"gen", m.pcie_gen}, {"width", m.pcie_width}};
  if (m.nvlink_gen >= 0) {
    j["nvlink"] = Json{{"gen", m.nvlink_gen}, {"GBps_per_direction", m.nvlink_GBps}};
    if (m.nvlink_links > 0) j["nvlink"]["links"] = m.nvlink_links;
  }
  if (m.tdp_w > 0) j["tdp_w"] = m.tdp_w;
  return j;
}

std::vector<std::string> gpu_model_lines(const GpuModel& m) {
  std::vector<std::string> out;
  const char* order[] = {"fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8"};
  std::string peaks;
  for (const char* dtype : order) {
    const double v = model_tflops(m, dtype);
    peaks += (peaks.empty() ? "" : ", ") + std::string(dtype) + " " +
             (v > 0 ? fixed(v) : std::string("no reference"));
  }
  const auto or_none = [](double v, const std::string& text) {
    return v > 0 ? text : std::string("no reference");
  };
  out.push_back("dense TFLOP/s: " + peaks);
  out.push_back(fmt::format("memory: {} GB, {}", fixed(m.memory_gb),
                            or_none(m.memory_GBps, fixed(m.memory_GBps) + " GB/s")));
  out.push_back("host link: " +
                (m.host_c2c ? std::string("NVLink-C2C")
                            : or_none(m.pcie_gen, fmt::format("PCIe gen{} x{}", m.pcie_gen,
                                                              m.pcie_width))));
  std::string nvlink = "no reference";
  if (m.nvlink_gen == 0) nvlink = "none";
  if (m.nvlink_gen > 0) {
    nvlink = fmt::format("NVLink {}{}, {} GB/s per direction", m.nvlink_gen,
                         m.nvlink_links > 0 ? fmt::format(", {} links", m.nvlink_links) : "",
                         fixed(m.nvlink_GBps));
  }
  out.push_back("GPU-to-GPU: " + nvlink);
  out.push_back("power: " + or_none(m.tdp_w, fixed(m.tdp_w) + " W"));
  out.push_back("source: " + m.source);
  return out;
}

}  // namespace mgbench
