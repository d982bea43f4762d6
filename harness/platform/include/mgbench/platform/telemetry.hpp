#pragma once
// NVML telemetry around each point: a sampler thread records gauges of
// every GPU of the point every `telemetry_interval_s`; counters (energy, throttle time, PCIe and
// NVLink bytes, ECC) are read at begin_point and end_point. end_point returns the point's
// summary, whose shape and keys model/telemetry_keys.hpp describes. Anything NVML cannot give is
// omitted (series entries are null).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/model/group.hpp"
#include "mgbench/model/process_group.hpp"
#include "mgbench/platform/nvml.hpp"
#include "mgbench/core/params.hpp"
#include "mgbench/model/results.hpp"

namespace mgbench {

// The telemetry observer the executor calls around each point. nullptr when settings.telemetry
// is false or NVML is unavailable (then one warning per process). Under the test hook
// MGBENCH_TEST_FAKE_TELEMETRY=1, a fake one (fixed gauges, no NVML).
std::unique_ptr<PointObserver> make_point_observer(const RunSettings& settings,
                                                   const std::vector<int>& cuda_devices);
// CUDA ordinal -> PCI bus id (default: cudaDeviceGetPCIBusId); "" when unknown.
using BusIdResolver = std::function<std::string(int cuda_device)>;
// Same, each device's GPU found by `resolver` (a node leader with per-task GPU binding: the
// node's GPUs its own CUDA does not see, by the bus ids their ranks reported).
std::unique_ptr<PointObserver> make_node_observer(const RunSettings& settings,
                                                  const std::vector<int>& cuda_devices,
                                                  BusIdResolver resolver);
// Same, with an explicit NVML (nullptr: unavailable, no warning) and bus id resolver. For tests.
std::unique_ptr<PointObserver> make_point_observer(const RunSettings& settings,
                                                   const std::vector<int>& cuda_devices,
                                                   std::shared_ptr<Nvml> nvml,
                                                   BusIdResolver resolver = {});

// The run-level down-sampled time series for plots (RunResult::telemetry_series): every point's
// series placed on one time axis (seconds since the first point began), at most `max_points`
// samples (telemetry_keys.hpp; a GPU of a process-per-GPU point also has its node and host: one
// line per node and GPU). Null when no point has telemetry.
Json build_run_series(const std::vector<PointResult>& points, std::size_t max_points = 1000);

// ---- a process per GPU: every node's telemetry --------------------------------------------

// One node's point telemetry, as its leader rank's observer summarized it.
struct NodeTelemetry {
  int node = 0;      // the node's place among the group's nodes (its leader's rank order)
  std::string host;  // the leader's host name (nodes may share one: containers, tests)
  Json summary;      // end_point()'s summary; null when the node measured nothing
};
// Several nodes' summaries of one point as one: the GPUs and the series hold every node's
// entries, each with its node and host; the duration is the longest; the time axis (the start
// time and the series' times) is the first node's with a series, and another node's
// values are placed on it by its start time (the last value at or before each tick; null
// before its first).
// Null when no node measured anything.
Json merge_node_telemetry(const std::vector<NodeTelemetry>& nodes);
// With a process per GPU; a collective of `group` (every rank calls it, `step` names it): each
// node's leader (local rank 0) hands in its observer's summary, every other rank null. Returns
// the merged summary on rank 0 and null elsewhere.
Json gather_node_telemetry(ProcessGroup& group, const Json& mine, const std::string& step);

// Adds "<throughput_metric>" + telemetry_keys::kPerWatt (throughput / total average power of the
// point's GPUs) and telemetry_keys::kEnergyJ (sum over the GPUs) to point.metrics when the point
// has telemetry.
void add_energy_metrics(PointResult& point, const std::string& throughput_metric);

// ---- the summary math, exposed for tests ----------------------------------------------------

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// Gauges of one GPU at one sampler tick (NaN: not available).
struct GpuSample {
  double power_w = kNoValue;
  double temp_c = kNoValue;
  double mem_temp_c = kNoValue;
  double sm_clock_mhz = kNoValue;
  double mem_clock_mhz = kNoValue;
  double util_pct = kNoValue;
  double mem_used_bytes = kNoValue;
  std::optional<std::uint64_t> reasons;  // clock-event reason bits
};

// Counters of one GPU at begin or end of a point.
struct CounterSnapshot {
  std::optional<double> energy_j;
  std::optional<double> power_violation_s, thermal_violation_s;
  std::optional<std::uint64_t> pcie_tx_bytes, pcie_rx_bytes;
  std::optional<std::uint64_t> nvlink_tx_bytes, nvlink_rx_bytes;
  std::optional<std::uint64_t> ecc_uncorrected;
};

// One GPU over one point; samples[i] was taken at tick i.
struct GpuTrace {
  int device = 0;
  std::string pci_bus_id;
  std::vector<GpuSample> samples;
  CounterSnapshot begin, end;
};

struct GaugeSummary {
  std::size_t n = 0;
  double min = 0, mean = 0, max = 0, median = 0;
};
// NaN values are ignored; nullopt when none is left.
std::optional<GaugeSummary> summarize_gauge(const std::vector<double>& values);

// Fraction of the point spent throttled (reasons in clock_event::kThrottleMask): from the
// samples when at least `min_samples` have reason bits, else from the NVML violation counters
// (power + thermal time / duration, clamped to 1), else from whatever samples there are;
// nullopt when nothing is known.
std::optional<double> throttle_fraction(const GpuTrace& trace, double duration_s,
                                        std::size_t min_samples = 5);

// Contiguous [begin, end) index ranges that split n items into at most max_points buckets of
// near-equal size (n <= max_points: one bucket per item).
std::vector<std::pair<std::size_t, std::size_t>> bucket_ranges(std::size_t n,
                                                               std::size_t max_points);

// One "gpus" entry of the summary.
Json summarize_gpu(const GpuTrace& trace, double duration_s);
// The whole point summary (see top of file); `ticks_s` are the tick times (seconds since the
// point began), one per sample of every trace.
Json summarize_point(double interval_s, double duration_s, double t0_unix_s,
                     const std::vector<double>& ticks_s, const std::vector<GpuTrace>& traces,
                     std::size_t max_series_points = 200);

}  // namespace mgbench
