// NVML telemetry: the summary math of a point's samples and the run-level series. The
// sampler is in telemetry_sampler.cpp.
#include "mgbench/platform/telemetry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "mgbench/model/point_view.hpp"
#include "mgbench/model/stats.hpp"
#include "mgbench/model/telemetry_keys.hpp"

namespace mgbench {

namespace tk = telemetry_keys;

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
  s.median = percentile_sorted(v, 0.5);
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
  return Json{{tk::kMin, s.min}, {tk::kMean, s.mean}, {tk::kMax, s.max}, {tk::kMedian, s.median}};
}

// The gauge's statistics under its key (left out when no sample has it); returned for the power.
std::optional<GaugeSummary> put_gauge(Json& out, const tk::Gauge& gauge,
                                      const std::vector<GpuSample>& samples,
                                      double GpuSample::*member) {
  std::vector<double> values;
  values.reserve(samples.size());
  for (const auto& s : samples) values.push_back(s.*member);
  const auto summary = summarize_gauge(values);
  if (summary) out[gauge.key] = gauge_json(*summary);
  return summary;
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

// One GPU's sampled columns on a time axis (NaN where unknown; throttled is 1, 0 or NaN).
struct SeriesColumns {
  std::vector<double> power, temp, clock, throttled;

  void resize(std::size_t rows) {
    for (auto* column : {&power, &temp, &clock, &throttled}) column->resize(rows, kNoValue);
  }
};

Json bucketed_times(const std::vector<double>& t,
                    const std::vector<std::pair<std::size_t, std::size_t>>& ranges) {
  Json out = Json::array();
  for (const auto& [begin, end] : ranges) out.push_back(number_or_null(bucket_mean(t, begin, end)));
  return out;
}

// One GPU's series entry (telemetry_keys.hpp), one value per bucket.
Json bucketed_gpu_series(int device, const SeriesColumns& c,
                         const std::vector<std::pair<std::size_t, std::size_t>>& ranges) {
  Json p = Json::array(), tc = Json::array(), clock = Json::array(), th = Json::array();
  for (const auto& [begin, end] : ranges) {
    p.push_back(number_or_null(bucket_mean(c.power, begin, end)));
    tc.push_back(number_or_null(bucket_mean(c.temp, begin, end)));
    clock.push_back(number_or_null(bucket_mean(c.clock, begin, end)));
    const double any = bucket_any(c.throttled, begin, end);
    th.push_back(std::isfinite(any) ? Json(static_cast<int>(any)) : Json());
  }
  return Json{{tk::kDevice, device},
              {tk::kPower.key, std::move(p)},
              {tk::kTemp.key, std::move(tc)},
              {tk::kSmClock.key, std::move(clock)},
              {tk::kThrottled, std::move(th)}};
}

}  // namespace

Json summarize_gpu(const GpuTrace& trace, double duration_s) {
  Json g{{tk::kDevice, trace.device},
         {tk::kPciBusId, trace.pci_bus_id},
         {tk::kSamples, trace.samples.size()}};
  const auto power = put_gauge(g, tk::kPower, trace.samples, &GpuSample::power_w);
  put_gauge(g, tk::kTemp, trace.samples, &GpuSample::temp_c);
  put_gauge(g, tk::kMemTemp, trace.samples, &GpuSample::mem_temp_c);
  put_gauge(g, tk::kSmClock, trace.samples, &GpuSample::sm_clock_mhz);
  put_gauge(g, tk::kMemClock, trace.samples, &GpuSample::mem_clock_mhz);
  put_gauge(g, tk::kUtil, trace.samples, &GpuSample::util_pct);
  put_gauge(g, tk::kMemUsed, trace.samples, &GpuSample::mem_used_bytes);

  // Energy: the NVML counter advances in coarse steps, so it is used for points of a second
  // or more; shorter points integrate the sampled power instead when there is any.
  std::optional<double> counter_energy;
  if (trace.begin.energy_j && trace.end.energy_j && *trace.end.energy_j >= *trace.begin.energy_j) {
    counter_energy = *trace.end.energy_j - *trace.begin.energy_j;
  }
  const std::optional<double> mean_power =
      power ? std::optional<double>(power->mean) : std::nullopt;
  if (counter_energy && duration_s >= 1.0) {
    g[tk::kEnergyJ] = *counter_energy;
    g[tk::kAvgPowerW] = *counter_energy / duration_s;
    g[tk::kEnergySource] = "counter";
  } else if (mean_power && duration_s > 0) {
    g[tk::kEnergyJ] = *mean_power * duration_s;
    g[tk::kAvgPowerW] = *mean_power;
    g[tk::kEnergySource] = "samples";
  } else if (counter_energy && duration_s > 0) {
    g[tk::kEnergyJ] = *counter_energy;
    g[tk::kAvgPowerW] = *counter_energy / duration_s;
    g[tk::kEnergySource] = "counter";
  } else if (mean_power) {
    g[tk::kAvgPowerW] = *mean_power;
  }

  if (const auto fraction = throttle_fraction(trace, duration_s)) {
    g[tk::kThrottleFraction] = *fraction;
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
    g[tk::kThrottleReasons] = decode_clock_event_reasons(seen & ~clock_event::kGpuIdle);
  }
  const auto& b = trace.begin;
  const auto& e = trace.end;
  Json times = Json::object();
  if (b.power_violation_s && e.power_violation_s) {
    times[tk::kThrottlePower] = std::max(0.0, *e.power_violation_s - *b.power_violation_s);
  }
  if (b.thermal_violation_s && e.thermal_violation_s) {
    times[tk::kThrottleThermal] = std::max(0.0, *e.thermal_violation_s - *b.thermal_violation_s);
  }
  if (!times.empty()) g[tk::kThrottleTimeS] = times;
  if (auto d = counter_delta(b.pcie_tx_bytes, e.pcie_tx_bytes)) g[tk::kPcieTxBytes] = *d;
  if (auto d = counter_delta(b.pcie_rx_bytes, e.pcie_rx_bytes)) g[tk::kPcieRxBytes] = *d;
  if (auto d = counter_delta(b.nvlink_tx_bytes, e.nvlink_tx_bytes)) g[tk::kNvlinkTxBytes] = *d;
  if (auto d = counter_delta(b.nvlink_rx_bytes, e.nvlink_rx_bytes)) g[tk::kNvlinkRxBytes] = *d;
  if (auto d = counter_delta(b.ecc_uncorrected, e.ecc_uncorrected)) g[tk::kEccUncorrectedDelta] = *d;
  return g;
}

Json summarize_point(double interval_s, double duration_s, double t0_unix_s,
                     const std::vector<double>& ticks_s, const std::vector<GpuTrace>& traces,
                     std::size_t max_series_points) {
  Json summary{{tk::kIntervalS, interval_s}, {tk::kDurationS, duration_s}};
  if (std::isfinite(t0_unix_s)) summary[tk::kT0UnixS] = t0_unix_s;
  Json gpus = Json::array();
  for (const auto& trace : traces) gpus.push_back(summarize_gpu(trace, duration_s));
  summary[tk::kGpus] = std::move(gpus);

  const auto ranges = bucket_ranges(ticks_s.size(), max_series_points);
  Json per_gpu = Json::array();
  for (const auto& trace : traces) {
    SeriesColumns c;
    for (const auto& s : trace.samples) {
      c.power.push_back(s.power_w);
      c.temp.push_back(s.temp_c);
      c.clock.push_back(s.sm_clock_mhz);
      c.throttled.push_back(s.reasons ? (clock_event_throttled(*s.reasons) ? 1.0 : 0.0)
                                      : kNoValue);
    }
    per_gpu.push_back(bucketed_gpu_series(trace.device, c, ranges));
  }
  summary[tk::kSeries] =
      Json{{tk::kTimes, bucketed_times(ticks_s, ranges)}, {tk::kPerGpu, std::move(per_gpu)}};
  return summary;
}

// ---- run-level series and derived metrics ---------------------------------------------------

namespace {

// One point's series placed on the run's time axis.
struct SeriesPart {
  const PointResult* point;
  const Json* series;
  double offset = 0, duration = 0;
};

// The points with a series, each at its offset from the run's start: from the points'
// t0_unix_s when all have one (in time order), else one after the other.
std::vector<SeriesPart> place_series_parts(const std::vector<PointResult>& points) {
  std::vector<SeriesPart> parts;
  bool all_have_t0 = true;
  for (const auto& p : points) {
    if (!p.telemetry.is_object() || !p.telemetry.contains(tk::kSeries)) continue;
    const Json& series = p.telemetry[tk::kSeries];
    if (!series.is_object() || !series.contains(tk::kTimes) || !series[tk::kTimes].is_array()) {
      continue;
    }
    SeriesPart part{&p, &series};
    part.duration = p.telemetry.value(tk::kDurationS, 0.0);
    if (!p.telemetry.contains(tk::kT0UnixS) || !p.telemetry[tk::kT0UnixS].is_number()) {
      all_have_t0 = false;
    }
    parts.push_back(part);
  }
  if (all_have_t0) {
    double base = std::numeric_limits<double>::infinity();
    for (auto& part : parts) {
      base = std::min(base, part.point->telemetry[tk::kT0UnixS].get<double>());
    }
    for (auto& part : parts) {
      part.offset = part.point->telemetry[tk::kT0UnixS].get<double>() - base;
    }
    std::stable_sort(parts.begin(), parts.end(),
                     [](const SeriesPart& a, const SeriesPart& b) { return a.offset < b.offset; });
  } else {
    double cursor = 0;
    for (auto& part : parts) {
      part.offset = cursor;
      double last = 0;
      for (const auto& t : (*part.series)[tk::kTimes]) last = std::max(last, json_to_double(t));
      cursor += std::max(part.duration, last);
    }
  }
  return parts;
}

// One GPU of the run: its node (0 for one node, and for threads) and its device there.
using GpuKey = std::pair<int, int>;
GpuKey key_of(const Json& g) {
  const auto number = [&](const char* key) {
    return g.contains(key) && g[key].is_number_integer() ? g[key].get<int>() : 0;
  };
  return {number(tk::kNode), number(tk::kDevice)};
}

// The parts flattened into rows on one time axis, one set of columns per GPU.
struct RunColumns {
  std::vector<double> t;
  std::vector<GpuKey> gpus;  // ascending
  std::vector<std::string> hosts;  // per GPU: its host, "" when the points named none
  std::vector<SeriesColumns> columns;  // per GPU
  Json point_spans = Json::array();
};

void list_series_gpus(const std::vector<SeriesPart>& parts, RunColumns& run) {
  std::map<GpuKey, std::string> gpus;
  for (const auto& part : parts) {
    for (const auto& g : part.series->value(tk::kPerGpu, Json::array())) {
      std::string& host = gpus[key_of(g)];
      if (host.empty() && g.contains(tk::kHost) && g[tk::kHost].is_string()) {
        host = g[tk::kHost].get<std::string>();
      }
    }
  }
  for (const auto& [key, host] : gpus) {
    run.gpus.push_back(key);
    run.hosts.push_back(host);
  }
}

// Copies one GPU's bucketed values of a part into the rows [first, first + rows).
void fill_columns(const Json& g, std::size_t first, std::size_t rows, SeriesColumns& c) {
  auto fill = [&](const char* key, std::vector<double>& column) {
    if (!g.contains(key) || !g[key].is_array()) return;
    const Json& values = g[key];
    for (std::size_t i = 0; i < rows && i < values.size(); ++i) {
      column[first + i] = json_to_double(values[i]);
    }
  };
  fill(tk::kPower.key, c.power);
  fill(tk::kTemp.key, c.temp);
  fill(tk::kSmClock.key, c.clock);
  fill(tk::kThrottled, c.throttled);
}

RunColumns flatten_parts(const std::vector<SeriesPart>& parts) {
  RunColumns run;
  list_series_gpus(parts, run);
  run.columns.resize(run.gpus.size());
  for (const auto& part : parts) {
    const Json& ts = (*part.series)[tk::kTimes];
    const std::size_t rows = ts.size();
    const std::size_t first = run.t.size();
    for (const auto& v : ts) run.t.push_back(part.offset + json_to_double(v));
    for (auto& c : run.columns) c.resize(first + rows);
    for (const auto& g : part.series->value(tk::kPerGpu, Json::array())) {
      const auto it = std::lower_bound(run.gpus.begin(), run.gpus.end(), key_of(g));
      fill_columns(g, first, rows, run.columns[static_cast<std::size_t>(it - run.gpus.begin())]);
    }
    run.point_spans.push_back(Json{{tk::kSpanIndex, part.point->index},
                                   {tk::kSpanWorkload, part.point->workload},
                                   {tk::kSpanGpus, part.point->gpus},
                                   {tk::kTStartS, part.offset},
                                   {tk::kTEndS, part.offset + part.duration}});
  }
  return run;
}

}  // namespace

Json build_run_series(const std::vector<PointResult>& points, std::size_t max_points) {
  const std::vector<SeriesPart> parts = place_series_parts(points);
  if (parts.empty()) return Json();
  RunColumns run = flatten_parts(parts);
  const auto ranges = bucket_ranges(run.t.size(), max_points);
  Json per_gpu = Json::array();
  for (std::size_t i = 0; i < run.gpus.size(); ++i) {
    Json g = bucketed_gpu_series(run.gpus[i].second, run.columns[i], ranges);
    if (!run.hosts[i].empty()) {
      g[tk::kNode] = run.gpus[i].first;
      g[tk::kHost] = run.hosts[i];
    }
    per_gpu.push_back(std::move(g));
  }
  return Json{{tk::kTimes, bucketed_times(run.t, ranges)},
              {tk::kPerGpu, std::move(per_gpu)},
              {tk::kPoints, std::move(run.point_spans)}};
}

void add_energy_metrics(PointResult& point, const std::string& throughput_metric) {
  if (!point.telemetry.is_object() || !point.telemetry.contains(tk::kGpus)) return;
  double power = 0, energy = 0;
  bool have_power = false, have_energy = false;
  for (const GpuTelemetry& g : gpu_telemetry(point)) {
    if (g.avg_power_w) {
      power += *g.avg_power_w;
      have_power = true;
    }
    if (g.energy_j) {
      energy += *g.energy_j;
      have_energy = true;
    }
  }
  if (!point.metrics.is_object()) point.metrics = Json::object();
  if (have_energy) point.metrics[tk::kEnergyJ] = energy;
  if (have_power && power > 0 && point.metrics.contains(throughput_metric) &&
      point.metrics[throughput_metric].is_number()) {
    point.metrics[throughput_metric + tk::kPerWatt] =
        point.metrics[throughput_metric].get<double>() / power;
  }
}

}  // namespace mgbench
