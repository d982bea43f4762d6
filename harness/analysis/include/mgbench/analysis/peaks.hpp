#pragma once
// "Is this number normal?": every point's figures as a share of what its GPU can do, and, where
// a public measurement of the GPU model exists, whether the value is below what that model
// usually reaches, with the likely causes the telemetry and the doctor's checks support.
//
// What a metric is a share of comes from the workload's presentation (MetricSpec::peak_); the
// peaks from the GPU model table (mgbench/model/gpu_models.hpp) and from the run's environment
// (the PCIe link the GPU negotiated, the NVLink links up): a GPU mgbench does not know keeps the
// link percentages and loses those that need its datasheet. See docs/METHODOLOGY.md, "Peak,
// % of peak and expected range".
#include <optional>
#include <string>
#include <vector>

#include "mgbench/model/peak_share.hpp"
#include "mgbench/model/point_quality.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

// The shares of every ok point of `run`, the run's GPU model row (null when unknown or mixed).
PeakReport compute_peaks(const RunResult& run);

// What the environment says about the GPU of CUDA ordinal `device`: name, memory, compute
// capability, the PCIe link's maximum (NVML), NVLink links up, the HBM peak from its bus width
// and clock, and for the causes of a low value its power limits, the PCIe generation the GPU
// itself supports and its highest SM clock (0 where unknown); `found` false when the
// environment has no such GPU.
struct EnvironmentGpu {
  bool found = false;
  HardwareLimits hw;
  double power_limit_w = 0, default_power_limit_w = 0;
  unsigned pcie_gen_gpu_max = 0;
  double sm_clock_max_mhz = 0;
};
EnvironmentGpu environment_gpu(const Json& environment, int device);

// Why a point may be below its range, from what was recorded: a power limit below the default,
// a PCIe link below the GPU's (for link-bound metrics), thermal or hardware slowdown and clock
// settings seen by NVML during the point, SM clocks held low, and the doctor's warnings about
// the power limit, the PCIe link, clock events and other processes.
std::vector<std::string> below_causes(const RunResult& run, const PointResult& point,
                                      LimitKind kind);
// The causes of below_causes() that one GPU's own facts give (its power limit below the default;
// with `link`, a PCIe link below the GPU's), from an environment that describes it (a node's
// fingerprint): what a fleet screen says of a GPU below its peers.
std::vector<std::string> gpu_fact_causes(const Json& environment, int device, bool link);
// "doctor: FINDING" for each check of `doctor` (doctor_to_json's shape, or its checks) named in
// `names` that warned or failed.
std::vector<std::string> doctor_causes(const Json& doctor, const std::vector<std::string>& names);

// "below what this GPU model usually reaches: 512.0 TFLOP/s against 582.4 to 685.2 (cuBLAS
// bf16 GEMM, M = N = K >= 4096, H200 SXM 141GB; source); likely: ..." (one line; "" when the
// share is not below its range).
std::string below_text(const PeakShare& share, const std::string& unit);

// "69 %" of a share; "" for none.
std::string share_text(const PeakShare* share);
// Its fraction, nullopt for none.
std::optional<double> share_fraction(const PeakShare* share);

}  // namespace mgbench
