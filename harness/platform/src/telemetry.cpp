// NVML telemetry: the per-point sampler, the summary math and the run-level series.
#include "mgbench/platform/telemetry.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

namespace mgbench {

// ---- summary math ---------------------------------------------------------------------------

std::optional<GaugeSummary> summarize_gauge(const std::vector<double>& values) {
  std::vector<double> v;
  v.reserve(values.size());
  for (double x : values) {
    if (std::isfinite(x)) v.push_back(x);
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  GaugeSummary s;
  s.n = v.size();
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  const std::size_t mid = v.size() / 2;
  s.median = v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
  return s;
}

std::optional<double> throttle_fraction(const GpuTrace& trace, double duration_s,
                                        std::size_t min_samples) {
  std::size_t known = 0, throttled = 0;
  for (const auto& s : trace.samples) {
    if (!s.reasons) continue;
    ++known;
    if (clock_event_throttled(*s.reasons)) ++throttled;
  }
  const auto sampled = [&] { return static_cast<double>(throttled) / static_cast<double>(known); };
  if (known > 0 && known >= min_samples) return sampled();
  const auto& b = trace.begin;
  const auto& e = trace.end;
  if (duration_s > 0 && b.power_violation_s && e.power_violation_s && b.thermal_violation_s &&
      e.thermal_violation_s) {
    const double t = std::max(0.0, *e.power_violation_s - *b.power_violation_s) +
                     std::max(0.0, *e.thermal_violation_s - *b.thermal_violation_s);
    return std::min(1.0, t / duration_s);
  }
  if (known > 0) return sampled();
  return std::nullopt;
}

std::vector<std::pair<std::size_t, std::size_t>> bucket_ranges(std::size_t n,
                                                               std::size_t max_points) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  if (n == 0) return ranges;
  const std::size_t buckets = std::max<std::size_t>(1, std::min(n, max_points));
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t begin = b * n / buckets;
    const std::size_t end = (b + 1) * n / buckets;
    if (end > begin) ranges.emplace_back(begin, end);
  }
  return ranges;
}

namespace {

Json gauge_json(const GaugeSummary& s) {
  return Json{{"min", s.min}, {"mean", s.mean}, {"max", s.max}, {"median", s.median}};
}

template <typename Member>
void put_gauge(Json& out, const char* key, const std::vector<GpuSample>& samples, Member member) {
  std::vector<double> values;
  values.reserve(samples.size());
  for (const auto& s : samples) values.push_back(s.*member);
  if (const auto summary = summarize_gauge(values)) out[key] = gauge_json(*summary);
}

std::optional<std::uint64_t> counter_delta(const std::optional<std::uint64_t>& begin,
                                           const std::optional<std::uint64_t>& end) {
  if (!begin || !end || *end < *begin) return std::nullopt;  // missing or wrapped
  return *end - *begin;
}

// Mean of the finite values in [begin, end); NaN when none.
double bucket_mean(const std::vector<double>& values, std::size_t begin, std::size_t end) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = begin; i < end && i < values.size(); ++i) {
    if (std::isfinite(values[i])) {
      sum += values[i];
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : kNoValue;
}

// 1 if any value in the bucket is 1, 0 if all known values are 0, NaN if none is known.
double bucket_any(const std::vector<double>& values, std::size_t begin, std::size_t end) {
  double result = kNoValue;
  for (std::size_t i = begin; i < end && i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    if (values[i] > 0) return 1;
    result = 0;
  }
  return result;
}

Json number_or_null(double value) { return std::isfinite(value) ? Json(value) : Json(); }

double json_to_double(const Json& value) {
  return value.is_number() ? value.get<double>() : kNoValue;
}

}  // namespace

Json summarize_gpu(const GpuTrace& trace, double duration_s) {
  Json g{{"device", trace.device},
         {"pci_bus_id", trace.pci_bus_id},
         {"samples", trace.samples.size()}};
  put_gauge(g, "power_w", trace.samples, &GpuSample::power_w);
  put_gauge(g, "temp_c", trace.samples, &GpuSample::temp_c);
  put_gauge(g, "mem_temp_c", trace.samples, &GpuSample::mem_temp_c);
  put_gauge(g, "sm_clock_mhz", trace.samples, &GpuSample::sm_clock_mhz);
  put_gauge(g, "mem_clock_mhz", trace.samples, &GpuSample::mem_clock_mhz);
  put_gauge(g, "util_pct", trace.samples, &GpuSample::util_pct);
  put_gauge(g, "mem_used_bytes", trace.samples, &GpuSample::mem_used_bytes);

  // Energy: the NVML counter advances in coarse steps, so it is used for points of a second
  // or more; shorter points integrate the sampled power instead when there is any.
  std::optional<double> counter_energy;
  if (trace.begin.energy_j && trace.end.energy_j && *trace.end.energy_j >= *trace.begin.energy_j) {
    counter_energy = *trace.end.energy_j - *trace.begin.energy_j;
  }
  const std::optional<double> mean_power =
      g.contains("power_w") ? std::optional<double>(g["power_w"]["mean"].get<double>())
                            : std::nullopt;
  if (counter_energy && duration_s >= 1.0) {
    g["energy_j"] = *counter_energy;
    g["avg_power_w"] = *counter_energy / duration_s;
    g["energy_source"] = "counter";
  } else if (mean_power && duration_s > 0) {
    g["energy_j"] = *mean_power * duration_s;
    g["avg_power_w"] = *mean_power;
    g["energy_source"] = "samples";
  } else if (counter_energy && duration_s > 0) {
    g["energy_j"] = *counter_energy;
    g["avg_power_w"] = *counter_energy / duration_s;
    g["energy_source"] = "counter";
  } else if (mean_power) {
    g["avg_power_w"] = *mean_power;
  }

  if (const auto fraction = throttle_fraction(trace, duration_s)) {
    g["throttle_fraction"] = *fraction;
  }
  std::uint64_t seen = 0;
  bool any_reasons = false;
  for (const auto& s : trace.samples) {
    if (s.reasons) {
      any_reasons = true;
      seen |= *s.reasons;
    }
  }
  if (any_reasons) {
    // An idle GPU is not throttled: gpu_idle is left out of the reasons seen.
    g["throttle_reasons"] = decode_clock_event_reasons(seen & ~clock_event::kGpuIdle);
  }
  const auto& b = trace.begin;
  const auto& e = trace.end;
  Json times = Json::object();
  if (b.power_violation_s && e.power_violation_s) {
    times["power"] = std::max(0.0, *e.power_violation_s - *b.power_violation_s);
  }
  if (b.thermal_violation_s && e.thermal_violation_s) {
    times["thermal"] = std::max(0.0, *e.thermal_violation_s - *b.thermal_violation_s);
  }
  if (!times.empty()) g["throttle_time_s"] = times;
  if (auto d = counter_delta(b.pcie_tx_bytes, e.pcie_tx_bytes)) g["pcie_tx_bytes"] = *d;
  if (auto d = counter_delta(b.pcie_rx_bytes, e.pcie_rx_bytes)) g["pcie_rx_bytes"] = *d;
  if (auto d = counter_delta(b.nvlink_tx_bytes, e.nvlink_tx_bytes)) g["nvlink_tx_bytes"] = *d;
  if (auto d = counter_delta(b.nvlink_rx_bytes, e.nvlink_rx_bytes)) g["nvlink_rx_bytes"] = *d;
  if (auto d = counter_delta(b.ecc_uncorrected, e.ecc_uncorrected)) g["ecc_uncorrected_delta"] = *d;
  return g;
}

Json summarize_point(double interval_s, double duration_s, double t0_unix_s,
                     const std::vector<double>& ticks_s, const std::vector<GpuTrace>& traces,
                     std::size_t max_series_points) {
  Json summary{{"interval_s", interval_s}, {"duration_s", duration_s}};
  if (std::isfinite(t0_unix_s)) summary["t0_unix_s"] = t0_unix_s;
  Json gpus = Json::array();
  for (const auto& trace : traces) gpus.push_back(summarize_gpu(trace, duration_s));
  summary["gpus"] = std::move(gpus);

  const auto ranges = bucket_ranges(ticks_s.size(), max_series_points);
  Json t = Json::array();
  for (const auto& [begin, end] : ranges) {
    t.push_back(number_or_null(bucket_mean(ticks_s, begin, end)));
  }
  Json per_gpu = Json::array();
  for (const auto& trace : traces) {
    std::vector<double> power, temp, clock, throttled;
    for (const auto& s : trace.samples) {
      power.push_back(s.power_w);
      temp.push_back(s.temp_c);
      clock.push_back(s.sm_clock_mhz);
      throttled.push_back(s.reasons ? (clock_event_throttled(*s.reasons) ? 1.0 : 0.0) : kNoValue);
    }
    Json p = Json::array(), tc = Json::array(), c = Json::array(), th = Json::array();
    for (const auto& [begin, end] : ranges) {
      p.push_back(number_or_null(bucket_mean(power, begin, end)));
      tc.push_back(number_or_null(bucket_mean(temp, begin, end)));
      c.push_back(number_or_null(bucket_mean(clock, begin, end)));
      const double any = bucket_any(throttled, begin, end);
      th.push_back(std::isfinite(any) ? Json(static_cast<int>(any)) : Json());
    }
    per_gpu.push_back(Json{{"device", trace.device},
                           {"power_w", std::move(p)},
                           {"temp_c", std::move(tc)},
                           {"sm_clock_mhz", std::move(c)},
                           {"throttled", std::move(th)}});
  }
  summary["series"] = Json{{"t_s", std::move(t)}, {"per_gpu", std::move(per_gpu)}};
  return summary;
}

// ---- run-level series and derived metrics ---------------------------------------------------

Json build_run_series(const std::vector<PointResult>& points, std::size_t max_points) {
  struct Part {
    const PointResult* point;
    const Json* series;
    double offset = 0, duration = 0;
  };
  std::vector<Part> parts;
  bool all_have_t0 = true;
  for (const auto& p : points) {
    if (!p.telemetry.is_object() || !p.telemetry.contains("series")) continue;
    const Json& series = p.telemetry["series"];
    if (!series.is_object() || !series.contains("t_s") || !series["t_s"].is_array()) continue;
    Part part{&p, &series};
    part.duration = p.telemetry.value("duration_s", 0.0);
    if (!p.telemetry.contains("t0_unix_s") || !p.telemetry["t0_unix_s"].is_number()) {
      all_have_t0 = false;
    }
    parts.push_back(part);
  }
  if (parts.empty()) return Json();
  if (all_have_t0) {
    double base = std::numeric_limits<double>::infinity();
    for (auto& part : parts) {
      base = std::min(base, part.point->telemetry["t0_unix_s"].get<double>());
    }
    for (auto& part : parts) {
      part.offset = part.point->telemetry["t0_unix_s"].get<double>() - base;
    }
    std::stable_sort(parts.begin(), parts.end(),
                     [](const Part& a, const Part& b) { return a.offset < b.offset; });
  } else {
    double cursor = 0;
    for (auto& part : parts) {
      part.offset = cursor;
      double last = 0;
      for (const auto& t : (*part.series)["t_s"]) last = std::max(last, json_to_double(t));
      cursor += std::max(part.duration, last);
    }
  }

  // Flatten into rows on one time axis, one column per device.
  std::set<int> device_set;
  for (const auto& part : parts) {
    for (const auto& g : part.series->value("per_gpu", Json::array())) {
      device_set.insert(g.value("device", 0));
    }
  }
  const std::vector<int> devices(device_set.begin(), device_set.end());
  const std::size_t nd = devices.size();
  std::vector<double> t;
  std::vector<std::vector<double>> power(nd), temp(nd), clock(nd), throttled(nd);
  Json point_spans = Json::array();
  for (const auto& part : parts) {
    const Json& ts = (*part.series)["t_s"];
    const std::size_t rows = ts.size();
    const std::size_t first = t.size();
    for (const auto& v : ts) t.push_back(part.offset + json_to_double(v));
    for (std::size_t d = 0; d < nd; ++d) {
      power[d].resize(first + rows, kNoValue);
      temp[d].resize(first + rows, kNoValue);
      clock[d].resize(first + rows, kNoValue);
      throttled[d].resize(first + rows, kNoValue);
    }
    for (const auto& g : part.series->value("per_gpu", Json::array())) {
      const auto it = std::lower_bound(devices.begin(), devices.end(), g.value("device", 0));
      const std::size_t d = static_cast<std::size_t>(it - devices.begin());
      auto fill = [&](const char* key, std::vector<double>& column) {
        if (!g.contains(key) || !g[key].is_array()) return;
        const Json& values = g[key];
        for (std::size_t i = 0; i < rows && i < values.size(); ++i) {
          column[first + i] = json_to_double(values[i]);
        }
      };
      fill("power_w", power[d]);
      fill("temp_c", temp[d]);
      fill("sm_clock_mhz", clock[d]);
      fill("throttled", throttled[d]);
    }
    point_spans.push_back(Json{{"index", part.point->index},
                               {"workload", part.point->workload},
                               {"gpus", part.point->gpus},
                               {"t_start_s", part.offset},
                               {"t_end_s", part.offset + part.duration}});
  }

  const auto ranges = bucket_ranges(t.size(), max_points);
  Json t_out = Json::array();
  for (const auto& [begin, end] : ranges) {
    t_out.push_back(number_or_null(bucket_mean(t, begin, end)));
  }
  Json per_gpu = Json::array();
  for (std::size_t d = 0; d < nd; ++d) {
    Json p = Json::array(), tc = Json::array(), c = Json::array(), th = Json::array();
    for (const auto& [begin, end] : ranges) {
      p.push_back(number_or_null(bucket_mean(power[d], begin, end)));
      tc.push_back(number_or_null(bucket_mean(temp[d], begin, end)));
      c.push_back(number_or_null(bucket_mean(clock[d], begin, end)));
      const double any = bucket_any(throttled[d], begin, end);
      th.push_back(std::isfinite(any) ? Json(static_cast<int>(any)) : Json());
    }
    per_gpu.push_back(Json{{"device", devices[d]},
                           {"power_w", std::move(p)},
                           {"temp_c", std::move(tc)},
                           {"sm_clock_mhz", std::move(c)},
                           {"throttled", std::move(th)}});
  }
  return Json{{"t_s", std::move(t_out)},
              {"per_gpu", std::move(per_gpu)},
              {"points", std::move(point_spans)}};
}

void add_energy_metrics(PointResult& point, const std::string& throughput_metric) {
  if (!point.telemetry.is_object() || !point.telemetry.contains("gpus")) return;
  double power = 0, energy = 0;
  bool have_power = false, have_energy = false;
  for (const auto& g : point.telemetry["gpus"]) {
    if (g.contains("avg_power_w") && g["avg_power_w"].is_number()) {
      power += g["avg_power_w"].get<double>();
      have_power = true;
    }
    if (g.contains("energy_j") && g["energy_j"].is_number()) {
      energy += g["energy_j"].get<double>();
      have_energy = true;
    }
  }
  if (!point.metrics.is_object()) point.metrics = Json::object();
  if (have_energy) point.metrics["energy_j"] = energy;
  if (have_power && power > 0 && point.metrics.contains(throughput_metric) &&
      point.metrics[throughput_metric].is_number()) {
    point.metrics[throughput_metric + "_per_watt"] =
        point.metrics[throughput_metric].get<double>() / power;
  }
}

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
      spdlog::warn("telemetry: CUDA device {} (PCI {}) has no NVML counterpart; not sampled",
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
  if (!settings.telemetry) return nullptr;
  auto nvml = nvml_instance();
  if (!nvml) {
    warn_nvml_unavailable_once("telemetry is off (power, temperature and clocks not recorded)");
    return nullptr;
  }
  return make_point_observer(settings, cuda_devices, std::move(nvml));
}

}  // namespace mgbench
