// Why a value may be below what its GPU model usually reaches: only what the run recorded
// supports (see peaks.hpp).
#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "mgbench/analysis/peaks.hpp"
#include "mgbench/model/gpu_models.hpp"
#include "mgbench/model/point_view.hpp"

namespace mgbench {
namespace {

// The doctor's checks that name a cause of a slow GPU: a warning or failure is a cause.
constexpr const char* kDoctorCauses[] = {"power_limit", "pcie_link", "clock_events_idle",
                                         "clock_events_load", "other_processes"};

// check name -> (status, finding) of the run's doctor checks.
std::map<std::string, std::pair<std::string, std::string>> doctor_checks(const Json& doctor) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  const Json* checks = &doctor;
  if (doctor.is_object() && doctor.contains("checks")) checks = &doctor.at("checks");
  if (!checks->is_array()) return out;
  for (const Json& c : *checks) {
    if (!c.is_object()) continue;
    const auto text = [&](const char* key) {
      return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : std::string();
    };
    out[text("name")] = {text("status"), text("finding")};
  }
  return out;
}

// A power limit below the default, from the environment (when the doctor did not check it).
void power_cause(const EnvironmentGpu& gpu, std::vector<std::string>& out) {
  if (gpu.power_limit_w > 0 && gpu.default_power_limit_w > 0 &&
      gpu.power_limit_w < gpu.default_power_limit_w - 1.0) {
    out.push_back(fmt::format("power limit {:.0f} W, below the default {:.0f} W",
                              gpu.power_limit_w, gpu.default_power_limit_w));
  }
}

// A PCIe link below what the GPU (NVML) or its datasheet supports, for link-bound metrics.
void pcie_cause(const EnvironmentGpu& gpu, std::vector<std::string>& out) {
  const HardwareLimits& hw = gpu.hw;
  const GpuModel* model = match_gpu_model(hw.gpu_name, hw.memory_bytes);
  const unsigned gen_want = std::max(gpu.pcie_gen_gpu_max, model != nullptr ? model->pcie_gen : 0u);
  const unsigned width_want = model != nullptr ? model->pcie_width : 0u;
  if (hw.pcie_gen == 0 || hw.pcie_width == 0) return;
  if (hw.pcie_gen < gen_want || hw.pcie_width < width_want) {
    out.push_back(fmt::format("PCIe link gen{} x{}, below the GPU's gen{} x{}", hw.pcie_gen,
                              hw.pcie_width, std::max(gen_want, hw.pcie_gen),
                              std::max(width_want, hw.pcie_width)));
  }
}

// Clock-event reasons NVML reported during the point, and SM clocks held low without a power
// cap to explain them.
void telemetry_causes(const PointResult& p, const EnvironmentGpu& gpu,
                      std::vector<std::string>& out) {
  std::set<std::string> seen;
  double sm_max_seen = 0;
  for (const GpuTelemetry& g : gpu_telemetry(p)) {
    seen.insert(g.throttle_reasons.begin(), g.throttle_reasons.end());
    sm_max_seen = std::max(sm_max_seen, g.sm_clock_mhz.max.value_or(0));
  }
  if (seen.count("sw_thermal") || seen.count("hw_thermal")) {
    out.push_back("thermal slowdown during the point (NVML clock-event reasons)");
  }
  if (seen.count("hw_slowdown") || seen.count("hw_power_brake")) {
    out.push_back("hardware slowdown or power brake during the point (NVML)");
  }
  if (seen.count("applications_clocks")) {
    out.push_back("clocks held by an applications-clocks setting (nvidia-smi -ac/-lgc)");
  }
  const double sm_max = gpu.sm_clock_max_mhz;
  if (sm_max > 0 && sm_max_seen > 0 && sm_max_seen < 0.9 * sm_max && !seen.count("sw_power_cap")) {
    out.push_back(fmt::format("SM clock at most {:.0f} MHz during the point, below its maximum "
                              "{:.0f} MHz, with no power cap to explain it",
                              sm_max_seen, sm_max));
  }
}

}  // namespace

std::vector<std::string> doctor_causes(const Json& doctor, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  const auto checks = doctor_checks(doctor);
  for (const std::string& name : names) {
    const auto it = checks.find(name);
    if (it == checks.end()) continue;
    const auto& [status, finding] = it->second;
    if (status == "warn" || status == "fail") out.push_back("doctor: " + finding);
  }
  return out;
}

std::vector<std::string> gpu_fact_causes(const Json& environment, int device, bool link) {
  std::vector<std::string> out;
  const EnvironmentGpu gpu = environment_gpu(environment, device);
  if (!gpu.found) return out;
  power_cause(gpu, out);
  if (link) pcie_cause(gpu, out);
  return out;
}

std::vector<std::string> below_causes(const RunResult& run, const PointResult& point,
                                      LimitKind kind) {
  const auto doctor = doctor_checks(run.doctor);
  std::vector<std::string> out =
      doctor_causes(run.doctor, std::vector<std::string>(std::begin(kDoctorCauses),
                                                         std::end(kDoctorCauses)));
  const EnvironmentGpu gpu =
      environment_gpu(run.environment, point.devices.empty() ? 0 : point.devices.front());
  if (doctor.count("power_limit") == 0) power_cause(gpu, out);
  const bool link = kind == LimitKind::host_link || kind == LimitKind::peer_link;
  if (link && doctor.count("pcie_link") == 0) pcie_cause(gpu, out);
  telemetry_causes(point, gpu, out);
  return out;
}

}  // namespace mgbench
