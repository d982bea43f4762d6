#pragma once
// What a point's numbers can be trusted for: whether its median is uncertain (noisy), whether
// its samples merely oscillate (a property of the point, e.g. under a power cap), and which
// of its metrics the hardware cannot produce (flags).
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"
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
// The point's "spread" object in results.json.
Json spread_json(const NoiseAssessment& noise);

// ---- impossible values ----------------------------------------------------------------------

// What bounds a metric: bytes of HBM traffic per second (read + write), bytes copied per
// second (a copy reads and writes each byte: half the traffic peak), or dense TFLOP/s for
// the point's dtype.
enum class LimitKind { hbm_traffic, copy, tflops };
struct LimitCheck {
  std::string metric;  // a PointResult::metrics name, per GPU
  LimitKind kind = LimitKind::copy;
  std::string dtype_param = "dtype";  // for tflops: the parameter naming the dtype
};

// What the device can do, from its attributes; zeros and "" where unknown (no check then).
struct HardwareLimits {
  double hbm_GBps = 0;  // theoretical HBM traffic peak
  std::string gpu_name;
  int cc_major = 0, cc_minor = 0;
};
// bus width (bits) / 8 x memory clock (kHz) x 2 (double data rate), in GB/s; 0 when unknown.
double hbm_peak_GBps(int bus_width_bits, int mem_clock_khz);
// Datasheet dense peak TFLOP/s of `dtype` (fp32, tf32, bf16, fp16, fp8) on a known GPU;
// nullopt for an unknown GPU or dtype.
std::optional<double> datasheet_tflops(const HardwareLimits& hw, const std::string& dtype);

struct PointFlag {
  std::string kind;  // "impossible"
  std::string metric;
  std::string reason;
};
std::vector<PointFlag> impossible_values(const Json& metrics, const Params& params,
                                         const std::vector<LimitCheck>& checks,
                                         const HardwareLimits& hw);
Json flags_json(const std::vector<PointFlag>& flags);
// What a reader must know about a point's numbers, in one line: why it is noisy, how its
// samples oscillate, which values are impossible ("" when nothing). From the point's
// `spread` and `flags` (untrusted: sanitise before printing).
std::string quality_note(const Json& spread, const Json& flags);
// True when a point's flags (PointResult::flags) name `metric`.
bool metric_flagged(const Json& flags, const std::string& metric);

}  // namespace mgbench
