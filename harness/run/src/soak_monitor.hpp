#pragma once
// What the soak watches from the orchestrator while the worker loads the GPUs: XID events,
// temperatures against the slowdown threshold, and ECC / row-remap counters before and after.
// Through NVML (no CUDA context), or a fake for tests (MGBENCH_TEST_SOAK_FAKE). Private to the
// run library.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mgbench/core/params.hpp"

namespace mgbench {

// Something that ends the soak early.
struct SoakEvent {
  std::string kind;  // "xid" or "temperature"
  int device = 0;
  double value = 0;  // the XID, or the temperature in °C
  std::string message;
};

class SoakMonitor {
 public:
  virtual ~SoakMonitor() = default;
  // Per device: ECC counts (uncorrected and corrected, volatile and aggregate) and remapped rows.
  virtual Json counters() = 0;
  // Per device: the slowdown threshold in °C (null when unknown).
  virtual Json thresholds() = 0;
  // Waits up to timeout_ms for XIDs and checks temperatures; `window` is the window running.
  virtual std::vector<SoakEvent> poll(int timeout_ms, std::size_t window) = 0;
  // The slowdown threshold of `device` when known.
  virtual std::optional<double> slowdown_c(int device) = 0;
  // A stand-in for a window's telemetry summary (the fake only, which wins over the worker's);
  // null otherwise.
  virtual Json window_telemetry(std::size_t window, const std::vector<int>& devices);
  // A one-line description ("NVML", "fake", "none: <why>").
  virtual std::string describe() const = 0;
};

// The test fake when MGBENCH_TEST_SOAK_FAKE is set, else NVML over `bus_ids` (CUDA ordinal
// devices[i] has bus id bus_ids[i]); without NVML a monitor that sees nothing (with a warning).
std::unique_ptr<SoakMonitor> make_soak_monitor(const std::vector<int>& devices,
                                               const std::vector<std::string>& bus_ids);

}  // namespace mgbench
