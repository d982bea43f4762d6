// The soak analysis: steady state, degradation, per-GPU spread, throttled spans, verdict.
#include "mgbench/analysis/soak_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "mgbench/model/telemetry_keys.hpp"

namespace mgbench {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// Mean total throughput of the windows in [t0, t1] (a window counts when it lies inside).
std::optional<double> mean_between(const std::vector<const SoakWindow*>& windows, double t0,
                                   double t1) {
  std::vector<double> v;
  for (const auto* w : windows) {
    if (w->t_start_s >= t0 - 1e-9 && w->t_end_s <= t1 + 1e-9) v.push_back(w->total_throughput());
  }
  if (v.empty()) return std::nullopt;
  return mean_of(v);
}

void add_degradation(const std::vector<const SoakWindow*>& steady, const SoakThresholds& t,
                     SoakAnalysis& a) {
  if (steady.empty()) return;
  const double t0 = steady.front()->t_start_s;
  const double t1 = steady.back()->t_end_s;
  const double minute = std::min(t.minute_s, (t1 - t0) / 3.0);
  const double first =
      mean_between(steady, t0, t0 + minute).value_or(steady.front()->total_throughput());
  const double last =
      mean_between(steady, t1 - minute, t1).value_or(steady.back()->total_throughput());
  if (first > 0) a.degradation = 1.0 - last / first;
}

void add_spread(const std::vector<const SoakWindow*>& steady, SoakAnalysis& a) {
  std::map<int, std::vector<double>> rate;
  std::map<int, double> hottest;
  for (const auto* w : steady) {
    for (const auto& g : w->gpus) {
      rate[g.device].push_back(g.throughput);
      if (g.temp_c && std::isfinite(*g.temp_c)) {
        auto it = hottest.try_emplace(g.device, *g.temp_c).first;
        it->second = std::max(it->second, *g.temp_c);
      }
    }
  }
  if (!rate.empty()) {
    double lo = INFINITY, hi = 0;
    for (const auto& [device, values] : rate) {
      const double m = mean_of(values);
      if (m < lo) {
        lo = m;
        a.slowest_device = device;
      }
      hi = std::max(hi, m);
    }
    if (hi > 0) a.gpu_spread = 1.0 - lo / hi;
  }
  if (!hottest.empty()) {
    double lo = INFINITY, hi = -INFINITY;
    for (const auto& [device, temp] : hottest) {
      if (temp > hi) {
        hi = temp;
        a.hottest_device = device;
      }
      lo = std::min(lo, temp);
    }
    a.hottest_temp_c = hi;
    a.temp_spread_c = hi - lo;
  }
}

void add_throttle(const std::vector<SoakWindow>& windows,
                  const std::vector<const SoakWindow*>& steady, const SoakThresholds& t,
                  SoakAnalysis& a) {
  double severe = 0, total = 0;
  for (const auto* w : steady) {
    for (const auto& g : w->gpus) {
      total += 1;
      const bool is_severe =
          std::any_of(g.throttle_reasons.begin(), g.throttle_reasons.end(),
                      severe_throttle_reason);
      if (is_severe) severe += g.throttle_fraction.value_or(1.0);
    }
  }
  a.severe_throttle_fraction = total > 0 ? severe / total : 0;
  bool open = false;
  for (const auto& w : windows) {
    std::set<int> devices;
    std::set<std::string> reasons;
    for (const auto& g : w.gpus) {
      if (g.throttle_fraction.value_or(0) < t.throttled_window) continue;
      devices.insert(g.device);
      reasons.insert(g.throttle_reasons.begin(), g.throttle_reasons.end());
    }
    if (devices.empty()) {
      open = false;
      continue;
    }
    if (!open) a.throttled_spans.push_back({w.t_start_s, w.t_end_s, {}, {}});
    open = true;
    SoakSpan& span = a.throttled_spans.back();
    span.t_end_s = w.t_end_s;
    for (int d : devices) {
      if (std::find(span.devices.begin(), span.devices.end(), d) == span.devices.end()) {
        span.devices.push_back(d);
      }
    }
    for (const auto& r : reasons) {
      if (std::find(span.reasons.begin(), span.reasons.end(), r) == span.reasons.end()) {
        span.reasons.push_back(r);
      }
    }
  }
}

void add_health_reasons(const SoakHealth& h, SoakAnalysis& a) {
  if (!h.stopped_early.empty()) a.reasons.push_back("stopped early: " + h.stopped_early);
  if (h.xid_events > 0) a.reasons.push_back(fmt::format("{} XID event(s)", h.xid_events));
  if (h.new_uncorrected_ecc) a.reasons.push_back("new uncorrected ECC errors");
  if (h.row_remap_trouble) a.reasons.push_back("row remapping pending, failed or grown");
}

void add_verdict(const std::vector<SoakWindow>& windows, const SoakHealth& health,
                 const SoakThresholds& t, SoakAnalysis& a) {
  add_health_reasons(health, a);
  const auto failed = std::count_if(windows.begin(), windows.end(),
                                    [](const SoakWindow& w) { return !w.ok; });
  if (failed > 0) a.reasons.push_back(fmt::format("{} window(s) failed", failed));
  if (windows.size() < static_cast<std::size_t>(t.rolling_windows)) {
    a.reasons.push_back(fmt::format("too few windows to judge ({} < {})", windows.size(),
                                    t.rolling_windows));
  } else if (!a.steady_window) {
    a.reasons.push_back(fmt::format("never steady (rolling median of {} windows within {:.1f} %)",
                                    t.rolling_windows, t.steady_tolerance * 100));
  }
  if (a.degradation && *a.degradation > t.max_degradation) {
    a.reasons.push_back(fmt::format("degradation {:.1f} % > {:.1f} %", *a.degradation * 100,
                                    t.max_degradation * 100));
  }
  if (a.gpu_spread && *a.gpu_spread > t.max_gpu_spread) {
    a.reasons.push_back(fmt::format("GPU {} is {:.1f} % slower than the fastest (> {:.1f} %)",
                                    a.slowest_device.value_or(-1), *a.gpu_spread * 100,
                                    t.max_gpu_spread * 100));
  }
  if (a.severe_throttle_fraction > t.max_severe_throttle) {
    a.reasons.push_back(fmt::format("severe throttling (thermal, hardware slowdown, power "
                                    "brake) {:.1f} % of the time > {:.1f} %",
                                    a.severe_throttle_fraction * 100, t.max_severe_throttle * 100));
  }
  a.stable = a.reasons.empty();
}

}  // namespace

double SoakWindow::total_throughput() const {
  double sum = 0;
  for (const auto& g : gpus) sum += g.throughput;
  return sum;
}

bool severe_throttle_reason(const std::string& name) {
  return name == "hw_slowdown" || name == "sw_thermal" || name == "hw_thermal" ||
         name == "hw_power_brake";
}

std::vector<double> rolling_medians(const std::vector<double>& values, int n) {
  std::vector<double> out;
  const auto width = static_cast<std::size_t>(std::max(n, 1));
  for (std::size_t i = 0; i + width <= values.size(); ++i) {
    out.push_back(median_of({values.begin() + static_cast<std::ptrdiff_t>(i),
                             values.begin() + static_cast<std::ptrdiff_t>(i + width)}));
  }
  return out;
}

std::optional<std::size_t> steady_index(const std::vector<double>& values, int n,
                                        double tolerance) {
  const std::vector<double> r = rolling_medians(values, n);
  // The rolling median must hold still for n steps (all of them in a soak shorter than that).
  const std::size_t hold = std::min(r.size(), static_cast<std::size_t>(std::max(n, 1)));
  for (std::size_t i = 0; hold > 0 && i + hold <= r.size(); ++i) {
    const bool holds =
        r[i] > 0 && std::all_of(r.begin() + static_cast<std::ptrdiff_t>(i),
                                r.begin() + static_cast<std::ptrdiff_t>(i + hold),
                                [&](double m) { return std::fabs(m - r[i]) <= tolerance * r[i]; });
    if (holds) return i;
  }
  return std::nullopt;
}

SoakAnalysis analyze_soak(const std::vector<SoakWindow>& windows, const SoakHealth& health,
                          const SoakThresholds& thresholds) {
  SoakAnalysis a;
  std::vector<const SoakWindow*> ok;
  for (const auto& w : windows) {
    if (w.ok) ok.push_back(&w);
  }
  std::vector<double> totals;
  for (const auto* w : ok) totals.push_back(w->total_throughput());
  const auto steady = steady_index(totals, thresholds.rolling_windows,
                                   thresholds.steady_tolerance);
  if (steady) {
    a.steady_window = ok[*steady]->index;
    a.time_to_steady_s = ok[*steady]->t_start_s;
  }
  // Never steady: the figures below still describe the whole soak.
  const std::vector<const SoakWindow*> judged(
      ok.begin() + static_cast<std::ptrdiff_t>(steady.value_or(0)), ok.end());
  add_degradation(judged, thresholds, a);
  add_spread(judged, a);
  add_throttle(windows, judged, thresholds, a);
  add_verdict(windows, health, thresholds, a);
  return a;
}

namespace {
template <typename T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v && (!std::is_floating_point<T>::value || std::isfinite(static_cast<double>(*v)))) {
    j[key] = *v;
  } else {
    j[key] = nullptr;
  }
}
}  // namespace

void to_json(Json& j, const SoakGpuWindow& w) {
  namespace tk = telemetry_keys;
  j = Json{{"device", w.device}, {"throughput", w.throughput},
           {tk::kThrottleReasons, w.throttle_reasons}};
  put(j, tk::kTemp.key, w.temp_c);
  put(j, tk::kPower.key, w.power_w);
  put(j, tk::kSmClock.key, w.sm_clock_mhz);
  put(j, tk::kMemClock.key, w.mem_clock_mhz);
  put(j, tk::kThrottleFraction, w.throttle_fraction);
}

void to_json(Json& j, const SoakWindow& w) {
  j = Json{{"index", w.index}, {"t_start_s", w.t_start_s}, {"t_end_s", w.t_end_s},
           {"ok", w.ok},       {"throughput", w.total_throughput()}, {"gpus", w.gpus}};
}

void to_json(Json& j, const SoakThresholds& t) {
  j = Json{{"rolling_windows", t.rolling_windows},   {"steady_tolerance", t.steady_tolerance},
           {"max_degradation", t.max_degradation},   {"max_gpu_spread", t.max_gpu_spread},
           {"max_severe_throttle", t.max_severe_throttle},
           {"throttled_window", t.throttled_window}, {"minute_s", t.minute_s}};
}

void to_json(Json& j, const SoakAnalysis& a) {
  j = Json::object();
  put(j, "steady_window", a.steady_window);
  put(j, "time_to_steady_s", a.time_to_steady_s);
  put(j, "degradation", a.degradation);
  put(j, "gpu_spread", a.gpu_spread);
  put(j, "slowest_device", a.slowest_device);
  put(j, "hottest_device", a.hottest_device);
  put(j, "hottest_temp_c", a.hottest_temp_c);
  put(j, "temp_spread_c", a.temp_spread_c);
  j["severe_throttle_fraction"] = a.severe_throttle_fraction;
  Json spans = Json::array();
  for (const auto& s : a.throttled_spans) {
    spans.push_back({{"t_start_s", s.t_start_s}, {"t_end_s", s.t_end_s},
                     {"devices", s.devices}, {"reasons", s.reasons}});
  }
  j["throttled_spans"] = spans;
  j["stable"] = a.stable;
  j["verdict"] = a.stable ? "runs stably" : "not stable";
  j["reasons"] = a.reasons;
}

}  // namespace mgbench
