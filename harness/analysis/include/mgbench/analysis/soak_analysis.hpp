#pragma once
// The analysis of a stability soak: windows of sustained load, each with the throughput and
// telemetry of every GPU, turned into time to steady state, degradation, per-GPU spread,
// throttled spans and the "runs stably" verdict. Definitions and thresholds: docs/SOAK.md.
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

// One GPU over one window (NaN or absent telemetry: unknown).
struct SoakGpuWindow {
  int device = 0;
  double throughput = 0;  // the workload's throughput unit, this GPU's share
  std::optional<double> temp_c;          // max over the window
  std::optional<double> power_w;         // mean
  std::optional<double> sm_clock_mhz;    // mean
  std::optional<double> mem_clock_mhz;   // mean
  std::optional<double> throttle_fraction;  // share of the window with a throttle reason
  std::vector<std::string> throttle_reasons;  // names (clock-event reasons seen)
};

struct SoakWindow {
  std::size_t index = 0;
  double t_start_s = 0;  // seconds since the soak began
  double t_end_s = 0;
  bool ok = true;        // the window's point finished with status ok
  std::vector<SoakGpuWindow> gpus;
  double total_throughput() const;
};

struct SoakThresholds {
  int rolling_windows = 3;         // N: windows in the rolling median
  double steady_tolerance = 0.03;  // the next N rolling medians within this of the first
  double max_degradation = 0.05;   // first steady minute vs the last one
  double max_gpu_spread = 0.05;    // slowest GPU vs the fastest (steady windows)
  double max_severe_throttle = 0.01;  // share of steady time under a severe throttle reason
  double throttled_window = 0.5;   // a window with this share throttled is part of a span
  double minute_s = 60.0;          // the "minute" of the degradation figure (see docs)
};

// Health facts gathered around the soak (NVML), judged by the verdict.
struct SoakHealth {
  int xid_events = 0;
  bool new_uncorrected_ecc = false;  // volatile or aggregate uncorrected count grew
  bool row_remap_trouble = false;    // remap pending or failure after the soak, or new rows
  std::string stopped_early;         // reason, empty when the soak ran its course
};

struct SoakSpan {
  double t_start_s = 0, t_end_s = 0;
  std::vector<int> devices;
  std::vector<std::string> reasons;
};

struct SoakAnalysis {
  std::optional<std::size_t> steady_window;  // first steady window; nullopt: never steady
  std::optional<double> time_to_steady_s;    // its start time
  std::optional<double> degradation;         // 1 - last minute / first steady minute
  std::optional<double> gpu_spread;          // 1 - slowest GPU mean / fastest GPU mean
  std::optional<int> slowest_device, hottest_device;
  std::optional<double> hottest_temp_c, temp_spread_c;  // max temp, hottest - coolest GPU
  double severe_throttle_fraction = 0;
  std::vector<SoakSpan> throttled_spans;
  bool stable = false;
  std::vector<std::string> reasons;  // why not stable (empty when stable)
};

// A severe clock-event reason (hardware slowdown, software or hardware thermal slowdown, power
// brake); the software power cap is not one: a GPU at full load normally runs at its limit.
bool severe_throttle_reason(const std::string& name);

// Rolling medians of `values` over `n` consecutive entries (size - n + 1 of them; none when
// there are fewer than n values).
std::vector<double> rolling_medians(const std::vector<double>& values, int n);
// Steady state: the first index i whose rolling median holds still, i.e. the rolling medians
// i .. i+n-1 all lie within `tolerance` (relative) of rolling median i (all rolling medians when
// there are fewer than n of them); nullopt when none (or fewer than n values).
std::optional<std::size_t> steady_index(const std::vector<double>& values, int n,
                                        double tolerance);
SoakAnalysis analyze_soak(const std::vector<SoakWindow>& windows, const SoakHealth& health,
                          const SoakThresholds& thresholds = {});

void to_json(Json& j, const SoakGpuWindow& w);
void to_json(Json& j, const SoakWindow& w);
void to_json(Json& j, const SoakThresholds& t);
void to_json(Json& j, const SoakAnalysis& a);

}  // namespace mgbench
