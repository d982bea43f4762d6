// "% of peak", the expected range and the verdict below it (see peaks.hpp).
#include "mgbench/analysis/peaks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "mgbench/model/gpu_models.hpp"

namespace mgbench {
namespace {

const Json* object_at(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j.at(key).is_object() ? &j.at(key) : nullptr;
}

double number_at(const Json* j, const char* key) {
  return j != nullptr && j->contains(key) && j->at(key).is_number() ? j->at(key).get<double>()
                                                                     : 0.0;
}

unsigned unsigned_at(const Json* j, const char* key) {
  const double v = number_at(j, key);
  return v > 0 && v < 1e6 ? static_cast<unsigned>(v) : 0u;
}

// The environment's entry of CUDA ordinal `device` in "gpus", nullptr when absent.
const Json* environment_entry(const Json& environment, const char* list, int device) {
  if (!environment.is_object() || !environment.contains(list)) return nullptr;
  const Json& all = environment.at(list);
  if (!all.is_array()) return nullptr;
  for (const Json& g : all) {
    if (g.is_object() && g.contains("index") && g["index"].is_number_integer() &&
        g["index"].get<int>() == device) {
      return &g;
    }
  }
  return nullptr;
}

std::string text_at(const Json* j, const char* key) {
  return j != nullptr && j->contains(key) && j->at(key).is_string() ? j->at(key).get<std::string>()
                                                                     : "";
}

}  // namespace

EnvironmentGpu environment_gpu(const Json& environment, int device) {
  EnvironmentGpu out;
  const Json* g = environment_entry(environment, "gpus", device);
  if (g == nullptr) return out;
  out.found = true;
  HardwareLimits& hw = out.hw;
  hw.gpu_name = text_at(g, "name");
  const double memory = number_at(g, "memory_bytes");
  hw.memory_bytes = memory > 0 && memory < 1e15 ? static_cast<std::uint64_t>(memory) : 0;
  const std::string cc = text_at(g, "compute_capability");
  if (std::sscanf(cc.c_str(), "%d.%d", &hw.cc_major, &hw.cc_minor) != 2) {
    hw.cc_major = hw.cc_minor = 0;
  }
  const Json* pcie = object_at(*g, "pcie");
  hw.pcie_gen = unsigned_at(pcie, "gen_max");
  hw.pcie_width = unsigned_at(pcie, "width_max");
  const Json* nvlink = object_at(*g, "nvlink");
  hw.nvlinks_up = nvlink != nullptr && nvlink->contains("links_up") &&
                          nvlink->at("links_up").is_number_integer()
                      ? nvlink->at("links_up").get<int>()
                      : -1;
  const Json* inventory = object_at(environment, "inventory");
  const Json* device_entry =
      inventory != nullptr ? environment_entry(*inventory, "devices", device) : nullptr;
  const double bus = number_at(device_entry, "mem_bus_width");
  const double clock = number_at(device_entry, "mem_clock_khz");
  if (bus > 0 && bus < 1e6 && clock > 0 && clock < 1e9) {
    hw.hbm_GBps = hbm_peak_GBps(static_cast<int>(bus), static_cast<int>(clock));
  }
  const GpuModel* model = match_gpu_model(hw.gpu_name, hw.memory_bytes);
  hw.host_over_c2c = model != nullptr && model->host_c2c;
  const Json* power = object_at(*g, "power_limit_w");
  out.power_limit_w = number_at(power, "enforced") > 0 ? number_at(power, "enforced")
                                                       : number_at(power, "management");
  out.default_power_limit_w = number_at(power, "default");
  out.pcie_gen_gpu_max = unsigned_at(pcie, "gen_gpu_max");
  out.sm_clock_max_mhz = number_at(object_at(*g, "clocks_mhz"), "sm_max");
  return out;
}

namespace {

// The metric's value of an ok point, nullopt when absent or flagged impossible.
std::optional<double> usable_metric(const PointResult& p, const std::string& metric) {
  if (!p.metrics.is_object() || !p.metrics.contains(metric) || !p.metrics[metric].is_number()) {
    return std::nullopt;
  }
  const double v = p.metrics[metric].get<double>();
  if (!(v > 0) || !std::isfinite(v) || metric_flagged(p.flags, metric)) return std::nullopt;
  return v;
}

void add_range(PeakShare& s, const RunResult& run, const PointResult& p, const GpuModel& model,
               LimitKind kind) {
  const ExpectedRange* r = find_expected_range(model, p.workload, s.metric, p.params, p.gpus);
  if (r == nullptr) return;
  s.low = r->low;
  s.typical = r->typical;
  s.range_what = r->what + " on the " + model.id;
  s.range_source = r->source;
  s.below = s.value < s.low;
  if (s.below) s.causes = below_causes(run, p, kind);
}

// The direct shares of one point (metrics declaring a kind of peak).
void direct_shares(const RunResult& run, const PointResult& p, const Presentation& pres,
                   std::vector<PeakShare>& out) {
  if (p.devices.empty()) return;
  EnvironmentGpu gpu = environment_gpu(run.environment, p.devices.front());
  if (!gpu.found) return;
  const std::set<int> distinct(p.devices.begin(), p.devices.end());
  gpu.hw.distinct_gpus = distinct.size() == p.devices.size();
  const GpuModel* model = match_gpu_model(gpu.hw.gpu_name, gpu.hw.memory_bytes);
  for (const MetricSpec& m : pres.metrics) {
    if (!m.peak_ || !m.peak_->as.empty()) continue;
    const auto value = usable_metric(p, m.name);
    if (!value) continue;
    const Peak peak = peak_of(m.peak_->kind, p.params, m.peak_->dtype_param,
                              m.peak_->direction_param, gpu.hw, false);
    if (!(peak.value > 0)) continue;
    PeakShare s;
    s.point = p.index;
    s.metric = m.name;
    s.value = *value;
    s.peak = peak.value;
    s.peak_what = peak.what;
    if (model != nullptr) add_range(s, run, p, *model, m.peak_->kind);
    out.push_back(std::move(s));
  }
}

// Aggregates: the share of their per-unit metric, at their own scale.
void same_as_shares(const PointResult& p, const Presentation& pres, std::vector<PeakShare>& out) {
  for (const MetricSpec& m : pres.metrics) {
    if (!m.peak_ || m.peak_->as.empty()) continue;
    const auto value = usable_metric(p, m.name);
    const auto unit = std::find_if(out.begin(), out.end(), [&](const PeakShare& s) {
      return s.point == p.index && s.metric == m.peak_->as;
    });
    if (!value || unit == out.end() || !(unit->fraction() > 0)) continue;
    PeakShare s;
    s.point = p.index;
    s.metric = m.name;
    s.value = *value;
    s.peak = *value / unit->fraction();
    s.peak_what = unit->peak_what + ", as " + m.peak_->as;
    out.push_back(std::move(s));
  }
}

std::string gpu_text(const HardwareLimits& hw) {
  if (hw.gpu_name.empty()) return "";
  return hw.memory_bytes == 0
             ? hw.gpu_name
             : fmt::format("{}, {:.0f} GiB", hw.gpu_name,
                           static_cast<double>(hw.memory_bytes) / (1024.0 * 1024.0 * 1024.0));
}

// The run's GPU and its row: the first GPU's, when every GPU of the environment has the same
// name and memory.
void run_model(const RunResult& run, PeakReport& out) {
  const Json* gpus = run.environment.is_object() && run.environment.contains("gpus")
                         ? &run.environment.at("gpus")
                         : nullptr;
  if (gpus == nullptr || !gpus->is_array() || gpus->empty()) return;
  std::set<std::string> kinds;
  HardwareLimits first;
  for (const Json& g : *gpus) {
    if (!g.is_object() || !g.contains("index") || !g["index"].is_number_integer()) continue;
    const EnvironmentGpu e = environment_gpu(run.environment, g["index"].get<int>());
    if (kinds.empty()) first = e.hw;
    kinds.insert(gpu_text(e.hw));
  }
  if (kinds.size() != 1) return;
  out.gpu = gpu_text(first);
  if (const GpuModel* m = match_gpu_model(first.gpu_name, first.memory_bytes)) {
    out.gpu_model = gpu_model_json(*m);
  }
}

}  // namespace

PeakReport compute_peaks(const RunResult& run) {
  PeakReport out;
  run_model(run, out);
  std::map<std::string, Presentation> presentations;
  for (const PointResult& p : run.points) {
    if (p.status != Status::ok) continue;
    auto it = presentations.find(p.workload);
    if (it == presentations.end()) {
      it = presentations.emplace(p.workload, presentation_for(run, p.workload)).first;
    }
    direct_shares(run, p, it->second, out.shares);
    same_as_shares(p, it->second, out.shares);
  }
  return out;
}

std::string share_text(const PeakShare* share) {
  if (share == nullptr || !(share->peak > 0)) return "";
  const double percent = share->fraction() * 100.0;
  return fmt::format(percent < 10.0 ? "{:.1f} %" : "{:.0f} %", percent);
}

std::optional<double> share_fraction(const PeakShare* share) {
  if (share == nullptr || !(share->peak > 0)) return std::nullopt;
  return share->fraction();
}

std::string below_text(const PeakShare& s, const std::string& unit) {
  if (!s.below) return "";
  const std::string u = unit.empty() ? "" : " " + unit;
  std::string causes;
  for (const std::string& c : s.causes) causes += (causes.empty() ? "" : "; ") + c;
  return fmt::format("below what this GPU model usually reaches: {:.4g}{} against {:.4g} to "
                     "{:.4g}{} ({}; {}); likely: {}",
                     s.value, u, s.low, s.typical, u, s.range_what, s.range_source,
                     causes.empty() ? "nothing in the telemetry or the doctor's checks explains "
                                      "it (check cooling, the slot and the host)"
                                    : causes);
}

}  // namespace mgbench
