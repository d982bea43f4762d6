#pragma once
// Every key of the telemetry JSON, spelled here and nowhere else (a unit test checks): the
// platform's sampler writes them, the model's reader (point_view.hpp), the analysis, the soak
// and the reports read them.
//
// A point's telemetry (PointResult::telemetry):
//   {kIntervalS, kDurationS, kT0UnixS,
//    kGpus: [{kDevice, kPciBusId, kSamples,
//             each gauge's key: {kMin, kMean, kMax, kMedian} over the point's samples,
//             kEnergyJ, kAvgPowerW, kEnergySource, kThrottleFraction, kThrottleReasons,
//             kThrottleTimeS: {kThrottlePower, kThrottleThermal}, kPcieTxBytes, kPcieRxBytes,
//             kNvlinkTxBytes, kNvlinkRxBytes, kEccUncorrectedDelta}],
//    kSeries: {kTimes: [...], kPerGpu: [{kDevice, each series gauge's key: [...],
//                                        kThrottled: [...]}]}}
// With a process per GPU every kGpus and kPerGpu entry also has kNode and kHost. Anything NVML
// cannot give is left out (series values are null).
// The run's series (RunResult::telemetry_series): {kTimes, kPerGpu (as above),
//   kPoints: [{kSpanIndex, kSpanWorkload, kSpanGpus, kTStartS, kTEndS}]}.
// The soak's windows repeat some gauges and the throttle figures under the same keys.

namespace mgbench::telemetry_keys {

// A gauge NVML samples: its key (in a GPU's summary, its statistics; in the series, one value
// per bucket) and how reports name it.
struct Gauge {
  const char* key;
  const char* name;  // in words, e.g. in a chart's title
  const char* axis;  // a chart's axis: the name and the unit
};
inline constexpr Gauge kPower{"power_w", "power", "power (W)"};
inline constexpr Gauge kTemp{"temp_c", "temperature", "temperature (°C)"};
inline constexpr Gauge kMemTemp{"mem_temp_c", "memory temperature", "memory temperature (°C)"};
inline constexpr Gauge kSmClock{"sm_clock_mhz", "SM clock", "SM clock (MHz)"};
inline constexpr Gauge kMemClock{"mem_clock_mhz", "memory clock", "memory clock (MHz)"};
inline constexpr Gauge kUtil{"util_pct", "utilization", "utilization (%)"};
inline constexpr Gauge kMemUsed{"mem_used_bytes", "memory used", "memory used (bytes)"};
// The gauges the series keeps (besides kThrottled), in the order reports chart them.
inline constexpr Gauge kSeriesGauges[] = {kPower, kTemp, kSmClock};

// A gauge's statistics over a point.
inline constexpr const char* kMin = "min";
inline constexpr const char* kMean = "mean";
inline constexpr const char* kMax = "max";
inline constexpr const char* kMedian = "median";

// A point's telemetry.
inline constexpr const char* kIntervalS = "interval_s";
inline constexpr const char* kDurationS = "duration_s";
inline constexpr const char* kT0UnixS = "t0_unix_s";
inline constexpr const char* kGpus = "gpus";
inline constexpr const char* kSeries = "series";

// One GPU's summary.
inline constexpr const char* kDevice = "device";
inline constexpr const char* kNode = "node";
inline constexpr const char* kHost = "host";
inline constexpr const char* kPciBusId = "pci_bus_id";
inline constexpr const char* kSamples = "samples";
inline constexpr const char* kEnergyJ = "energy_j";  // also the point's metric (sum of its GPUs)
inline constexpr const char* kAvgPowerW = "avg_power_w";
inline constexpr const char* kEnergySource = "energy_source";
inline constexpr const char* kThrottleFraction = "throttle_fraction";
inline constexpr const char* kThrottleReasons = "throttle_reasons";
inline constexpr const char* kThrottleTimeS = "throttle_time_s";
inline constexpr const char* kThrottlePower = "power";
inline constexpr const char* kThrottleThermal = "thermal";
inline constexpr const char* kPcieTxBytes = "pcie_tx_bytes";
inline constexpr const char* kPcieRxBytes = "pcie_rx_bytes";
inline constexpr const char* kNvlinkTxBytes = "nvlink_tx_bytes";
inline constexpr const char* kNvlinkRxBytes = "nvlink_rx_bytes";
inline constexpr const char* kEccUncorrectedDelta = "ecc_uncorrected_delta";
// The point's metric "<throughput metric><kPerWatt>".
inline constexpr const char* kPerWatt = "_per_watt";

// The series.
inline constexpr const char* kTimes = "t_s";
inline constexpr const char* kPerGpu = "per_gpu";
// 1 where a sample of the bucket was throttled, 0 where none was; also the word reports show
// for it (a chart's shaded band, a table's column).
inline constexpr const char* kThrottled = "throttled";
inline constexpr const char* kPoints = "points";
inline constexpr const char* kSpanIndex = "index";
inline constexpr const char* kSpanWorkload = "workload";
inline constexpr const char* kSpanGpus = "gpus";
inline constexpr const char* kTStartS = "t_start_s";
inline constexpr const char* kTEndS = "t_end_s";

}  // namespace mgbench::telemetry_keys
