// Noise classification and impossible-value flags (see point_quality.hpp).
#include "mgbench/model/point_quality.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "mgbench/model/gpu_models.hpp"
#include "mgbench/model/point_view.hpp"

namespace mgbench {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// One reason name in words ("sw_power_cap" -> "power cap").
std::string cause_word(const std::string& reason) {
  const std::string r = lower(reason);
  if (r.find("power_brake") != std::string::npos) return "power brake";
  if (r.find("power") != std::string::npos) return "power cap";
  if (r.find("thermal") != std::string::npos) return "thermal";
  if (r.find("hw_slowdown") != std::string::npos) return "HW slowdown";
  if (r.find("idle") != std::string::npos || r.find("app") != std::string::npos) return "";
  return reason;
}

std::string percent(double fraction) { return fmt::format("{:.2f} %", fraction * 100.0); }

}  // namespace

std::string clock_limit_cause(const Json& telemetry) {
  std::set<std::string> causes;
  for (const GpuTelemetry& gpu : gpu_telemetry(telemetry)) {
    for (const std::string& r : gpu.throttle_reasons) {
      const std::string word = cause_word(r);
      if (!word.empty()) causes.insert(word);
    }
  }
  std::string out;
  for (const std::string& c : causes) out += (out.empty() ? "" : ", ") + c;
  return out;
}

NoiseAssessment assess_noise(const Statistics& stats, double threshold, const Json& telemetry) {
  NoiseAssessment a;
  if (stats.n == 0 || !(stats.median > 0)) return a;
  a.ci_half_width = (stats.ci_high - stats.ci_low) / 2.0 / stats.median;
  a.spread = stats.rel_stdev;
  a.noisy = a.ci_half_width > threshold;
  a.oscillating = !a.noisy && a.spread > threshold;
  if (a.noisy || a.oscillating) a.cause = clock_limit_cause(telemetry);
  const std::string because = a.cause.empty() ? "" : " (clocks limited by " + a.cause + ")";
  if (a.noisy) {
    a.reason = fmt::format("median uncertain: 95 % CI +/- {} over {} samples, above {}{}",
                           percent(a.ci_half_width), stats.n, percent(threshold), because);
  } else if (a.oscillating) {
    a.reason = fmt::format("samples oscillate {} (stdev) but the median is certain to +/- {}{}",
                           percent(a.spread), percent(a.ci_half_width), because);
  }
  return a;
}

Spread spread_of(const NoiseAssessment& noise) {
  return Spread{noise.spread, noise.ci_half_width, noise.oscillating, noise.cause, noise.reason};
}

double hbm_peak_GBps(int bus_width_bits, int mem_clock_khz) {
  if (bus_width_bits <= 0 || mem_clock_khz <= 0) return 0;
  return static_cast<double>(bus_width_bits) / 8.0 * static_cast<double>(mem_clock_khz) * 1e3 *
         2.0 / 1e9;
}

const char* to_string(LimitKind kind) {
  switch (kind) {
    case LimitKind::hbm_traffic: return "hbm_traffic";
    case LimitKind::copy: return "copy";
    case LimitKind::tflops: return "tflops";
    case LimitKind::host_link: return "host_link";
    case LimitKind::peer_link: return "peer_link";
  }
  return "tflops";
}

LimitKind limit_kind_from_string(const std::string& text) {
  for (LimitKind k : {LimitKind::hbm_traffic, LimitKind::copy, LimitKind::tflops,
                      LimitKind::host_link, LimitKind::peer_link}) {
    if (text == to_string(k)) return k;
  }
  throw std::invalid_argument("unknown peak kind '" + text + "'");
}

namespace {
double link_rate(const std::string& link, int generation) {
  for (const LinkGeneration& g : link_generations()) {
    if (g.link == link && g.generation == generation) return g.GBps;
  }
  return 0.0;
}
}  // namespace

double pcie_lane_GBps(unsigned gen) { return link_rate("PCIe", static_cast<int>(gen)); }

double pcie_link_GBps(unsigned gen, unsigned width) {
  return pcie_lane_GBps(gen) * static_cast<double>(width);
}

double nvlink_link_GBps(int generation) { return link_rate("NVLink", generation); }

LinkLimit host_link_limit(const HardwareLimits& hw) {
  const double pcie = pcie_link_GBps(hw.pcie_gen, hw.pcie_width);
  if (hw.host_over_c2c || !(pcie > 0)) return {};
  return {pcie, fmt::format("PCIe gen{} x{} from NVML's maximum link generation and width",
                            hw.pcie_gen, hw.pcie_width)};
}

int nvlink_generation(const HardwareLimits& hw) {
  const GpuModel* model = match_gpu_model(hw.gpu_name, hw.memory_bytes);
  if (model != nullptr && model->nvlink_gen > 0) return model->nvlink_gen;
  return nvlink_generation_of(hw.cc_major, hw.cc_minor);
}

LinkLimit peer_link_limit(const HardwareLimits& hw) {
  if (!hw.distinct_gpus || hw.nvlinks_up < 0) return {};
  const double pcie = pcie_link_GBps(hw.pcie_gen, hw.pcie_width);
  if (hw.nvlinks_up == 0) {
    if (!(pcie > 0)) return {};
    return {pcie, fmt::format("no NVLink up (NVML): PCIe gen{} x{} from NVML's maximum link",
                              hw.pcie_gen, hw.pcie_width)};
  }
  const GpuModel* model = match_gpu_model(hw.gpu_name, hw.memory_bytes);
  const bool from_model = model != nullptr && model->nvlink_gen > 0;
  const int gen = nvlink_generation(hw);
  const double nvlink = nvlink_link_GBps(gen) * static_cast<double>(hw.nvlinks_up);
  if (!(nvlink > 0)) return {};
  const std::string of = from_model ? "the " + model->id
                                    : fmt::format("compute capability {}.{}", hw.cc_major,
                                                  hw.cc_minor);
  LinkLimit limit{nvlink, fmt::format("{} NVLink links up (NVML) x {:.0f} GB/s, NVLink {} of {}",
                                      hw.nvlinks_up, nvlink_link_GBps(gen), gen, of)};
  if (pcie > nvlink) {
    limit = {pcie, fmt::format("PCIe gen{} x{} (NVML), faster than the {} NVLink links up",
                               hw.pcie_gen, hw.pcie_width, hw.nvlinks_up)};
  }
  return limit;
}

namespace {

std::string param_text(const Params& params, const std::string& name) {
  const ParamValue* v = name.empty() ? nullptr : params.find(name);
  return v != nullptr && v->is_text() ? v->text() : "";
}

Peak link_peak(const Params& params, const std::string& direction_param, const LinkLimit& link,
               const char* name) {
  if (!(link.GBps > 0)) return {};
  const bool both = param_text(params, direction_param) == "bidir";
  const double limit = link.GBps * (both ? 2.0 : 1.0);
  return {limit, fmt::format("the {} limit ({:.1f} GB/s{}: {:.1f} GB/s per direction, {})", name,
                             limit, both ? " for both directions" : "", link.GBps, link.source)};
}

Peak tflops_peak(const Params& params, const std::string& dtype_param, const HardwareLimits& hw,
                 bool bound) {
  const GpuModel* model = match_gpu_model(hw.gpu_name, hw.memory_bytes);
  if (model == nullptr || (bound && !model->peaks_bound)) return {};
  const std::string dtype = param_text(params, dtype_param);
  const double peak = model_tflops(*model, dtype);
  if (!(peak > 0)) return {};
  return {peak, fmt::format("the {} dense datasheet peak of the {} ({:g} TFLOP/s)", dtype,
                            model->id, peak)};
}

// HBM: the flag holds values to the peak of the memory's bus width x clock (a datasheet may
// round below it); "% of peak" compares with the datasheet's bandwidth where the model is known.
Peak memory_peak(LimitKind kind, const HardwareLimits& hw, bool bound) {
  const GpuModel* model = match_gpu_model(hw.gpu_name, hw.memory_bytes);
  const bool datasheet = !bound && model != nullptr && model->memory_GBps > 0;
  const double traffic = datasheet ? model->memory_GBps : hw.hbm_GBps;
  if (!(traffic > 0)) return {};
  const bool copy = kind == LimitKind::copy;
  const std::string from = datasheet ? "the datasheet of the " + model->id
                                     : std::string("bus width x memory clock");
  return {copy ? traffic / 2.0 : traffic,
          fmt::format("the {} limit of HBM ({:.0f} GB/s from {}{})", copy ? "copy" : "traffic",
                      copy ? traffic / 2.0 : traffic, from,
                      copy ? ", halved: a copy reads and writes" : "")};
}

}  // namespace

Peak peak_of(LimitKind kind, const Params& params, const std::string& dtype_param,
             const std::string& direction_param, const HardwareLimits& hw, bool bound) {
  switch (kind) {
    case LimitKind::tflops: return tflops_peak(params, dtype_param, hw, bound);
    case LimitKind::host_link:
      return link_peak(params, direction_param, host_link_limit(hw), "host link");
    case LimitKind::peer_link:
      return link_peak(params, direction_param, peer_link_limit(hw), "GPU-to-GPU link");
    case LimitKind::hbm_traffic:
    case LimitKind::copy: break;
  }
  return memory_peak(kind, hw, bound);
}

std::vector<PointFlag> impossible_values(const Json& metrics, const Params& params,
                                         const std::vector<LimitCheck>& checks,
                                         const HardwareLimits& hw) {
  std::vector<PointFlag> flags;
  for (const LimitCheck& c : checks) {
    if (!metrics.is_object() || !metrics.contains(c.metric) || !metrics[c.metric].is_number()) {
      continue;
    }
    const double value = metrics[c.metric].get<double>();
    const Peak bound = peak_of(c.kind, params, c.dtype_param, c.direction_param, hw, true);
    if (!(bound.value > 0) || !(value > bound.value)) continue;
    const bool link = c.kind == LimitKind::host_link || c.kind == LimitKind::peer_link;
    flags.push_back({"impossible", c.metric,
                     fmt::format("{} = {:.4g} is above {}: {}", c.metric, value, bound.what,
                                 link ? "mis-measured, or the data did not cross that link"
                                      : "served from cache or mis-measured")});
  }
  return flags;
}

std::string quality_note(const std::optional<Spread>& spread, const std::vector<PointFlag>& flags) {
  std::string out;
  const auto add = [&out](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  if (spread && !spread->reason.empty()) {
    add((spread->oscillating ? "" : "noisy, ") + spread->reason);
  }
  for (const PointFlag& f : flags) {
    if (!f.reason.empty()) add((f.kind.empty() ? "flagged" : f.kind) + ": " + f.reason);
  }
  return out;
}

bool metric_flagged(const std::vector<PointFlag>& flags, const std::string& metric) {
  return std::any_of(flags.begin(), flags.end(),
                     [&](const PointFlag& f) { return !f.metric.empty() && f.metric == metric; });
}

}  // namespace mgbench
