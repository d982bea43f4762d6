// NVML telemetry: the per-point sampler (a thread reading NVML gauges every interval, counters
// at the start and the end of the point). The summary math is in telemetry.cpp.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "mgbench/core/logging.hpp"
#include "mgbench/core/test_hooks.hpp"
#include "mgbench/platform/telemetry.hpp"

namespace mgbench {

// ---- the sampler ----------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

class NvmlPointObserver final : public PointObserver {
 public:
  NvmlPointObserver(std::shared_ptr<Nvml> nvml, double interval_s, BusIdResolver resolver)
      : nvml_(std::move(nvml)),
        interval_s_(std::max(0.01, interval_s)),
        resolver_(std::move(resolver)) {}
  ~NvmlPointObserver() override { stop_sampler(); }

  // Maps a CUDA ordinal to its NVML device by PCI bus id (cached).
  NvmlDevice handle_for(int cuda_device) {
    const auto it = handles_.find(cuda_device);
    if (it != handles_.end()) return it->second;
    NvmlDevice device;
    const std::string bus_id = normalize_pci_bus_id(resolver_(cuda_device));
    if (!bus_id.empty()) device = nvml_->device_by_pci_bus_id(bus_id);
    if (!device) {
      logging::warn("telemetry: CUDA device {} (PCI {}) has no NVML counterpart; not sampled",
                    cuda_device, bus_id.empty() ? "unknown" : bus_id);
    }
    handles_[cuda_device] = device;
    bus_ids_[cuda_device] = bus_id;
    return device;
  }

  void begin_point(const std::vector<int>& devices) override {
    stop_sampler();
    active_.clear();
    traces_.clear();
    ticks_.clear();
    for (int d : devices) {
      const NvmlDevice device = handle_for(d);
      if (!device) continue;
      active_.push_back(device);
      GpuTrace trace;
      trace.device = d;
      trace.pci_bus_id = bus_ids_[d];
      trace.begin = read_counters(device);
      traces_.push_back(std::move(trace));
    }
    t0_unix_ = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
    t0_ = Clock::now();
    if (active_.empty()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = false;
    }
    thread_ = std::thread([this] { sampler_loop(); });
  }

  Json end_point() override {
    stop_sampler();
    if (traces_.empty()) return Json();
    take_sample();  // a last sample, so even a short point has two
    const double duration = std::chrono::duration<double>(Clock::now() - t0_).count();
    for (std::size_t i = 0; i < active_.size(); ++i) traces_[i].end = read_counters(active_[i]);
    Json summary = summarize_point(interval_s_, duration, t0_unix_, ticks_, traces_);
    traces_.clear();
    active_.clear();
    ticks_.clear();
    return summary;
  }

 private:
  void sampler_loop() {
    auto next = Clock::now();
    const auto period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(interval_s_));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      lock.unlock();
      take_sample();
      lock.lock();
      next += period;
      const auto now = Clock::now();
      if (next < now) next = now;  // fell behind (slow NVML): do not burst
      cv_.wait_until(lock, next, [this] { return stop_; });
    }
  }

  void stop_sampler() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // Only the sampler thread calls this while it runs; end_point after joining it.
  void take_sample() {
    ticks_.push_back(std::chrono::duration<double>(Clock::now() - t0_).count());
    for (std::size_t i = 0; i < active_.size(); ++i) {
      traces_[i].samples.push_back(read_gauges(active_[i]));
    }
  }

  GpuSample read_gauges(NvmlDevice device) const {
    GpuSample s;
    const auto fields =
        nvml_->field_values(device, {nvml_field::kPowerInstant, nvml_field::kMemoryTemp});
    if (fields[0]) {
      s.power_w = fields[0]->as_double / 1000.0;
    } else if (const auto p = nvml_->power_w(device)) {
      s.power_w = *p;
    }
    if (fields[1] && fields[1]->as_double > 0) s.mem_temp_c = fields[1]->as_double;
    if (const auto t = nvml_->temperature_c(device)) s.temp_c = *t;
    if (const auto c = nvml_->clock_mhz(device, NvmlClock::sm)) s.sm_clock_mhz = *c;
    if (const auto c = nvml_->clock_mhz(device, NvmlClock::memory)) s.mem_clock_mhz = *c;
    if (const auto u = nvml_->utilization_pct(device)) s.util_pct = *u;
    if (const auto m = nvml_->memory_info(device)) s.mem_used_bytes = static_cast<double>(m->used);
    s.reasons = nvml_->clock_event_reasons(device);
    return s;
  }

  CounterSnapshot read_counters(NvmlDevice device) const {
    CounterSnapshot c;
    c.energy_j = nvml_->energy_j(device);
    c.power_violation_s = nvml_->violation_time_s(device, PerfPolicy::power);
    c.thermal_violation_s = nvml_->violation_time_s(device, PerfPolicy::thermal);
    const auto pcie =
        nvml_->field_values(device, {nvml_field::kPcieTxBytes, nvml_field::kPcieRxBytes});
    if (pcie[0]) c.pcie_tx_bytes = pcie[0]->as_u64;
    if (pcie[1]) c.pcie_rx_bytes = pcie[1]->as_u64;
    const auto nvlink = nvml_->field_values(
        device, {nvml_field::kNvlinkDataTx, nvml_field::kNvlinkDataRx}, nvml_field::kAllLinks);
    if (nvlink[0]) c.nvlink_tx_bytes = nvlink[0]->as_u64 * 1024;  // KiB
    if (nvlink[1]) c.nvlink_rx_bytes = nvlink[1]->as_u64 * 1024;
    c.ecc_uncorrected = nvml_->ecc_uncorrected(device, false);
    return c;
  }

  std::shared_ptr<Nvml> nvml_;
  double interval_s_;
  BusIdResolver resolver_;
  std::map<int, NvmlDevice> handles_;
  std::map<int, std::string> bus_ids_;
  std::vector<NvmlDevice> active_;
  std::vector<GpuTrace> traces_;
  std::vector<double> ticks_;
  Clock::time_point t0_;
  double t0_unix_ = kNoValue;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
};

// The test hook's observer (MGBENCH_TEST_FAKE_TELEMETRY): two samples per GPU of fixed gauges,
// summarized by the real summary math.
class FakePointObserver final : public PointObserver {
 public:
  explicit FakePointObserver(double interval_s) : interval_s_(interval_s) {}
  void begin_point(const std::vector<int>& devices) override {
    devices_ = devices;
    t0_ = Clock::now();
    t0_unix_ = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  }
  Json end_point() override {
    if (devices_.empty()) return Json();
    const double duration = std::chrono::duration<double>(Clock::now() - t0_).count();
    std::vector<GpuTrace> traces;
    for (int d : devices_) {
      GpuSample s;
      s.power_w = 500.0 + 10.0 * d;
      s.temp_c = 60.0;
      s.sm_clock_mhz = 1980.0;
      s.mem_clock_mhz = 3201.0;
      s.util_pct = 100.0;
      s.reasons = 0;
      GpuTrace trace;
      trace.device = d;
      trace.samples = {s, s};
      traces.push_back(std::move(trace));
    }
    devices_.clear();
    return summarize_point(interval_s_, duration, t0_unix_, {0.0, duration}, traces);
  }

 private:
  double interval_s_;
  std::vector<int> devices_;
  Clock::time_point t0_;
  double t0_unix_ = kNoValue;
};

std::string cuda_bus_id(int cuda_device) {
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), cuda_device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  return bus;
}

}  // namespace

std::unique_ptr<PointObserver> make_point_observer(const RunSettings& settings,
                                                   const std::vector<int>& cuda_devices,
                                                   std::shared_ptr<Nvml> nvml,
                                                   BusIdResolver resolver) {
  if (!settings.telemetry || !nvml) return nullptr;
  if (!resolver) resolver = cuda_bus_id;
  auto observer = std::make_unique<NvmlPointObserver>(
      std::move(nvml), settings.telemetry_interval_s, std::move(resolver));
  for (int d : cuda_devices) observer->handle_for(d);
  return observer;
}

std::unique_ptr<PointObserver> make_point_observer(const RunSettings& settings,
                                                   const std::vector<int>& cuda_devices) {
  return make_node_observer(settings, cuda_devices, {});
}

std::unique_ptr<PointObserver> make_node_observer(const RunSettings& settings,
                                                  const std::vector<int>& cuda_devices,
                                                  BusIdResolver resolver) {
  if (!settings.telemetry) return nullptr;
  if (test_hooks::read(test_hooks::kFakeTelemetry) == std::string("1")) {
    return std::make_unique<FakePointObserver>(settings.telemetry_interval_s);
  }
  auto nvml = nvml_instance();
  if (!nvml) {
    warn_nvml_unavailable_once("telemetry is off (power, temperature and clocks not recorded)");
    return nullptr;
  }
  return make_point_observer(settings, cuda_devices, std::move(nvml), std::move(resolver));
}

}  // namespace mgbench
