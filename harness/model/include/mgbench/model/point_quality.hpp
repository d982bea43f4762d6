#pragma once
// What a point's numbers can be trusted for: whether its median is uncertain (noisy), whether
// its samples merely oscillate (a property of the point, e.g. under a power cap), and which
// of its metrics the hardware cannot produce (flags).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mgbench/core/params.hpp"
#include "mgbench/model/limit_kind.hpp"
#include "mgbench/model/point_marks.hpp"
#include "mgbench/model/stats.hpp"

namespace mgbench {

// ---- noise ----------------------------------------------------------------------------------

// noisy: the bootstrap 95 % CI half-width of the median, relative to the median, exceeds
// `threshold` (the stopping rule's max_noise). oscillating: the samples spread more than the
// threshold (relative stdev) while the median is certain: reported, never called noisy.
struct NoiseAssessment {
  bool noisy = false;
  bool oscillating = false;
  double ci_half_width = 0;  // relative to the median
  double spread = 0;         // relative stdev of the samples
  std::string cause;         // from telemetry: "power cap", "thermal", ... ("" when none seen)
  std::string reason;        // in words, for the console ("" when neither)
};
NoiseAssessment assess_noise(const Statistics& stats, double threshold, const Json& telemetry);
// What the telemetry summary says clocks were held by: "power cap", "thermal", "power brake",
// "HW slowdown", other reasons by name, joined by ", "; "" when none.
std::string clock_limit_cause(const Json& telemetry);
// The point's spread as its result records it.
Spread spread_of(const NoiseAssessment& noise);

// ---- impossible values ----------------------------------------------------------------------

// What bounds a metric (limit_kind.hpp). Link limits are per direction; a check with a
// `direction_param` doubles them for points whose parameter says "bidir" (both directions
// counted).
struct LimitCheck {
  LimitCheck(std::string metric_name, LimitKind limit_kind = LimitKind::copy,
             std::string dtype = "dtype", std::string direction = "")
      : metric(std::move(metric_name)), kind(limit_kind), dtype_param(std::move(dtype)),
        direction_param(std::move(direction)) {}
  std::string metric;  // a PointResult::metrics name, per GPU
  LimitKind kind;
  std::string dtype_param;      // for tflops: the parameter naming the dtype
  std::string direction_param;  // for links: "bidir" there doubles the limit ("" never)
};

// What the device can do, from its attributes; zeros and "" where unknown (no check then).
struct HardwareLimits {
  double hbm_GBps = 0;  // theoretical HBM traffic peak
  std::string gpu_name;
  std::uint64_t memory_bytes = 0;  // device memory (with the name: the GPU model's row)
  int cc_major = 0, cc_minor = 0;
  // Links (NVML): the PCIe link's maximum generation and width (0: unknown), and the NVLink
  // links up (-1: unknown, 0: none).
  unsigned pcie_gen = 0, pcie_width = 0;
  int nvlinks_up = -1;
  // The host is attached over NVLink-C2C (Grace), not PCIe: no PCIe bound on host copies.
  bool host_over_c2c = false;
  // The group's GPUs are distinct devices (false: ranks share a GPU, so a "peer" copy stays
  // in its memory and no link bounds it).
  bool distinct_gpus = true;
};
// bus width (bits) / 8 x memory clock (kHz) x 2 (double data rate), in GB/s; 0 when unknown.
double hbm_peak_GBps(int bus_width_bits, int mem_clock_khz);
// What one unit (GPU, pair) of a point can reach of `kind` on this hardware, in the metric's
// unit, and what that figure is, in words; value 0 when unknown. `bound`: as the
// impossible-value flag uses it (only hard limits: the measured HBM peak, datasheet TFLOP/s
// only where quoted at the highest clock); otherwise as "% of peak" uses it (the datasheet's
// memory bandwidth and dense peaks of a known model). Links count both directions where the
// point's `direction_param` says "bidir".
struct Peak {
  double value = 0;
  std::string what;
};
Peak peak_of(LimitKind kind, const Params& params, const std::string& dtype_param,
             const std::string& direction_param, const HardwareLimits& hw, bool bound);

// Usable GB/s of one PCIe lane in one direction, after line coding: gen1 0.25, gen2 0.5,
// gen3 0.985, gen4 1.969, gen5 3.938 (128b/130b), gen6 7.563 (FLIT 242/256); 0 when unknown.
// The rates are rows of the GPU model table (gpu_models.hpp), as is each architecture's NVLink
// generation (nvlink_generation_of).
double pcie_lane_GBps(unsigned gen);
double pcie_link_GBps(unsigned gen, unsigned width);  // lanes x lane rate, per direction
// GB/s of one NVLink link in one direction: 20 (NVLink 1), 25 (2, 3, 4), 50 (5); 0 unknown.
double nvlink_link_GBps(int generation);
// The GPU's NVLink generation: its model's row where the model is known and has NVLink, else
// its architecture's (nvlink_generation_of); 0 when neither knows one.
int nvlink_generation(const HardwareLimits& hw);
// A link's bound in one direction and where it came from, in words; GBps 0 when unknown.
struct LinkLimit {
  double GBps = 0;
  std::string source;
};
// The GPU's host link: PCIe generation x width; unknown over NVLink-C2C or without NVML.
LinkLimit host_link_limit(const HardwareLimits& hw);
// Between two GPUs: NVLink links up x the per-link rate of the generation (or the PCIe link
// when it is faster), the PCIe link when no NVLink is up; unknown when the links are unknown
// or the ranks share a GPU.
LinkLimit peer_link_limit(const HardwareLimits& hw);

std::vector<PointFlag> impossible_values(const Json& metrics, const Params& params,
                                         const std::vector<LimitCheck>& checks,
                                         const HardwareLimits& hw);
// What a reader must know about a point's numbers, in one line: why it is noisy, how its
// samples oscillate, which values are impossible ("" when nothing). From the point's
// `spread` and `flags` (untrusted: sanitise before printing).
std::string quality_note(const std::optional<Spread>& spread, const std::vector<PointFlag>& flags);
// True when a point's flags (PointResult::flags) name `metric`.
bool metric_flagged(const std::vector<PointFlag>& flags, const std::string& metric);

}  // namespace mgbench
