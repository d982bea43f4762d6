// Noise classification and impossible-value flags (see point_quality.hpp).
#include "mgbench/model/point_quality.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

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
  if (!telemetry.is_object() || !telemetry.contains("gpus") || !telemetry["gpus"].is_array()) {
    return {};
  }
  for (const Json& gpu : telemetry["gpus"]) {
    if (!gpu.is_object() || !gpu.contains("throttle_reasons")) continue;
    const Json& reasons = gpu["throttle_reasons"];
    if (!reasons.is_array()) continue;
    for (const Json& r : reasons) {
      if (!r.is_string()) continue;
      const std::string word = cause_word(r.get<std::string>());
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

Json spread_json(const NoiseAssessment& noise) {
  Json j{{"rel_stdev", noise.spread},
         {"median_ci_half_width", noise.ci_half_width},
         {"oscillating", noise.oscillating}};
  if (!noise.cause.empty()) j["cause"] = noise.cause;
  if (!noise.reason.empty()) j["reason"] = noise.reason;
  return j;
}

double hbm_peak_GBps(int bus_width_bits, int mem_clock_khz) {
  if (bus_width_bits <= 0 || mem_clock_khz <= 0) return 0;
  return static_cast<double>(bus_width_bits) / 8.0 * static_cast<double>(mem_clock_khz) * 1e3 *
         2.0 / 1e9;
}

std::optional<double> datasheet_tflops(const HardwareLimits& hw, const std::string& dtype) {
  // Dense peaks of the SXM parts (H100 and H200 share them), per dtype.
  const std::string name = lower(hw.gpu_name);
  const bool hopper_sxm = hw.cc_major == 9 && hw.cc_minor == 0 &&
                          (name.find("h100") != std::string::npos ||
                           name.find("h200") != std::string::npos) &&
                          name.find("pcie") == std::string::npos &&
                          name.find("nvl") == std::string::npos;
  if (!hopper_sxm) return std::nullopt;
  if (dtype == "bf16" || dtype == "fp16") return 989.4;
  if (dtype == "tf32") return 494.7;
  if (dtype == "fp8" || dtype == "e4m3" || dtype == "e5m2") return 1978.9;
  if (dtype == "fp32") return 66.9;
  return std::nullopt;
}

double pcie_lane_GBps(unsigned gen) {
  switch (gen) {
    case 1: return 0.25;
    case 2: return 0.5;
    case 3: return 8.0 * 128.0 / 130.0 / 8.0;
    case 4: return 16.0 * 128.0 / 130.0 / 8.0;
    case 5: return 32.0 * 128.0 / 130.0 / 8.0;
    case 6: return 64.0 * 242.0 / 256.0 / 8.0;
    default: return 0.0;
  }
}

double pcie_link_GBps(unsigned gen, unsigned width) {
  return pcie_lane_GBps(gen) * static_cast<double>(width);
}

int nvlink_generation(int cc_major, int cc_minor) {
  switch (cc_major) {
    case 6: return cc_minor == 0 ? 1 : 0;  // P100; the other Pascal parts have none
    case 7: return 2;                      // V100, Turing boards with bridges
    case 8: return 3;                      // A100 (A10/A40/RTX bridges run slower links)
    case 9: return 4;                      // H100, H200
    case 10: return 5;                     // B200, B300
    default: return 0;
  }
}

double nvlink_link_GBps(int generation) {
  switch (generation) {
    case 1: return 20.0;
    case 2:
    case 3:
    case 4: return 25.0;
    case 5: return 50.0;
    default: return 0.0;
  }
}

LinkLimit host_link_limit(const HardwareLimits& hw) {
  const double pcie = pcie_link_GBps(hw.pcie_gen, hw.pcie_width);
  if (hw.host_over_c2c || !(pcie > 0)) return {};
  return {pcie, fmt::format("PCIe gen{} x{} from NVML's maximum link generation and width",
                            hw.pcie_gen, hw.pcie_width)};
}

LinkLimit peer_link_limit(const HardwareLimits& hw) {
  if (!hw.distinct_gpus || hw.nvlinks_up < 0) return {};
  const double pcie = pcie_link_GBps(hw.pcie_gen, hw.pcie_width);
  if (hw.nvlinks_up == 0) {
    if (!(pcie > 0)) return {};
    return {pcie, fmt::format("no NVLink up (NVML): PCIe gen{} x{} from NVML's maximum link",
                              hw.pcie_gen, hw.pcie_width)};
  }
  const int gen = nvlink_generation(hw.cc_major, hw.cc_minor);
  const double nvlink = nvlink_link_GBps(gen) * static_cast<double>(hw.nvlinks_up);
  if (!(nvlink > 0)) return {};
  LinkLimit limit{nvlink, fmt::format("{} NVLink links up (NVML) x {:.0f} GB/s, NVLink {} of "
                                      "compute capability {}.{}",
                                      hw.nvlinks_up, nvlink_link_GBps(gen), gen, hw.cc_major,
                                      hw.cc_minor)};
  if (pcie > nvlink) {
    limit = {pcie, fmt::format("PCIe gen{} x{} (NVML), faster than the {} NVLink links up",
                               hw.pcie_gen, hw.pcie_width, hw.nvlinks_up)};
  }
  return limit;
}

namespace {

std::string param_text(const Params& params, const std::string& name) {
  return params.is_object() && !name.empty() && params.contains(name) && params[name].is_string()
             ? params[name].get<std::string>()
             : "";
}

// The bound of one check on this hardware, in words ("" and nullopt when unknown), and what
// a value above it most likely means.
struct Bound {
  std::optional<double> value;
  std::string what, likely;
};

Bound link_bound(const LimitCheck& c, const Params& params, const LinkLimit& link,
                 const char* name) {
  if (!(link.GBps > 0)) return {};
  const bool both = param_text(params, c.direction_param) == "bidir";
  const double limit = link.GBps * (both ? 2.0 : 1.0);
  return {limit,
          fmt::format("the {} limit ({:.1f} GB/s{}: {:.1f} GB/s per direction, {})", name, limit,
                      both ? " for both directions" : "", link.GBps, link.source),
          "mis-measured, or the data did not cross that link"};
}

Bound bound_of(const LimitCheck& c, const Params& params, const HardwareLimits& hw) {
  const std::string from_cache = "served from cache or mis-measured";
  switch (c.kind) {
    case LimitKind::tflops: {
      const std::string dtype = param_text(params, c.dtype_param);
      const std::optional<double> limit = datasheet_tflops(hw, dtype);
      return {limit,
              fmt::format("the {} datasheet peak of {} ({} TFLOP/s)", dtype, hw.gpu_name,
                          limit ? *limit : 0.0),
              from_cache};
    }
    case LimitKind::host_link: return link_bound(c, params, host_link_limit(hw), "host link");
    case LimitKind::peer_link: return link_bound(c, params, peer_link_limit(hw), "GPU-to-GPU link");
    case LimitKind::hbm_traffic:
    case LimitKind::copy: break;
  }
  if (!(hw.hbm_GBps > 0)) return {};
  const bool copy = c.kind == LimitKind::copy;
  const double limit = copy ? hw.hbm_GBps / 2.0 : hw.hbm_GBps;
  return {limit,
          fmt::format("the {} limit of HBM ({:.0f} GB/s from bus width x memory clock{})",
                      copy ? "copy" : "traffic", limit,
                      copy ? ", halved: a copy reads and writes" : ""),
          from_cache};
}

}  // namespace

std::vector<PointFlag> impossible_values(const Json& metrics, const Params& params,
                                         const std::vector<LimitCheck>& checks,
                                         const HardwareLimits& hw) {
  std::vector<PointFlag> flags;
  for (const LimitCheck& c : checks) {
    if (!metrics.is_object() || !metrics.contains(c.metric) || !metrics[c.metric].is_number()) {
      continue;
    }
    const double value = metrics[c.metric].get<double>();
    const Bound bound = bound_of(c, params, hw);
    if (!bound.value || !(value > *bound.value)) continue;
    flags.push_back({"impossible", c.metric,
                     fmt::format("{} = {:.4g} is above {}: {}", c.metric, value, bound.what,
                                 bound.likely)});
  }
  return flags;
}

Json flags_json(const std::vector<PointFlag>& flags) {
  Json out = Json::array();
  for (const PointFlag& f : flags) {
    out.push_back({{"kind", f.kind}, {"metric", f.metric}, {"reason", f.reason}});
  }
  return out;
}

std::string quality_note(const Json& spread, const Json& flags) {
  std::string out;
  const auto add = [&out](const std::string& text) { out += (out.empty() ? "" : "; ") + text; };
  if (spread.is_object() && spread.contains("reason") && spread["reason"].is_string()) {
    const bool oscillating = spread.value("oscillating", false);
    add((oscillating ? "" : "noisy, ") + spread["reason"].get<std::string>());
  }
  if (flags.is_array()) {
    for (const Json& f : flags) {
      if (f.is_object() && f.contains("reason") && f["reason"].is_string()) {
        add(f.value("kind", std::string("flagged")) + ": " + f["reason"].get<std::string>());
      }
    }
  }
  return out;
}

bool metric_flagged(const Json& flags, const std::string& metric) {
  if (!flags.is_array()) return false;
  return std::any_of(flags.begin(), flags.end(), [&](const Json& f) {
    return f.is_object() && f.contains("metric") && f["metric"].is_string() &&
           f["metric"].get<std::string>() == metric;
  });
}

}  // namespace mgbench
